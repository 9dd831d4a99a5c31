// Package fuzzhttp holds FuzzServer, the HTTP-level fuzz target of the whole
// server: the fx graph that 'svc serve' builds, with real models, fed
// arbitrary methods, paths, headers and bodies. It has no code of its own
// outside its tests.
package fuzzhttp

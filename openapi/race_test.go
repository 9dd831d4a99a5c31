//go:build race

package openapi_test

// raceEnabled is true when the tests run under the race detector, which
// instruments every memory access and so distorts timing comparisons.
const raceEnabled = true

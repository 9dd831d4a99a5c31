//go:build race

package tensorjson

const raceEnabled = true

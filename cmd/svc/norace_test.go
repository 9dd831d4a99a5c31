//go:build !race

package main_test

// raceEnabled: the tests run with the race detector.
const raceEnabled = false

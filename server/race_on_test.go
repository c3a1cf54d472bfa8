//go:build race

package server_test

// raceSlowdown scales the mixed-load test's bound: the race detector makes
// the server's code several times slower, which is not a stall.
const raceSlowdown = 5

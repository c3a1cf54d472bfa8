//go:build !race

package server_test

// raceSlowdown scales the mixed-load test's bound (1: no race detector).
const raceSlowdown = 1

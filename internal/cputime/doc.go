// Package cputime reads the CPU time the process has used: what the
// benchmarks report beside wall time, since on a shared machine what a
// benchmark costs is steadier than how long it takes.
package cputime

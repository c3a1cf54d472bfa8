//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user and system) the process has used.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Faults returns the page faults the process has taken that needed no
// read from disk (minor faults): each is the first touch of a page.
func Faults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt
}

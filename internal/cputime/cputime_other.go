//go:build !unix

package cputime

import "time"

// Process returns 0: the CPU time of the process is not read here.
func Process() time.Duration { return 0 }

// Faults returns 0: the page faults of the process are not read here.
func Faults() int64 { return 0 }

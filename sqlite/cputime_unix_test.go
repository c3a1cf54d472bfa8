//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used:
// on a shared machine, what a benchmark costs is steadier than how long it
// takes.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build !unix

package sqlite

import "time"

// processCPU is 0 where getrusage is missing: the benchmarks report no
// CPU time there.
func processCPU() time.Duration { return 0 }

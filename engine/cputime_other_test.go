//go:build !unix

package engine

import "time"

func ProcessCPU() time.Duration { return 0 }

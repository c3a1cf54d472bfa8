// Package memgatebin builds the memgate binary the benchmark harnesses run
// as child processes.
package memgatebin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build builds cmd/memgate into dir, without -race, and returns the
// binary's path. It builds in the main module's directory (where the bench
// module's replace points), with the main module's go.mod and go.sum: the
// binary is the one memgate ships, and the bench module need not list the
// server's dependencies. The go tool's output goes to stderr.
func Build(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/memgate/memgate").Output()
	if err != nil {
		return "", fmt.Errorf("find the memgate module: %w", err)
	}
	bin := filepath.Join(dir, "memgate")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/memgate")
	build.Dir = strings.TrimSpace(string(out))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build memgate: %w", err)
	}
	return bin, nil
}

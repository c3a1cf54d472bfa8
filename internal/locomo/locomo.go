// Package locomo locates and reads the LoCoMo benchmark data that sits in
// ../shared/bench/locomo beside the repository (or in $MEMGATE_LOCOMO_DIR).
// It is used by tests and benchmark harnesses; it never downloads anything.
package locomo

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns the LoCoMo data directory: $MEMGATE_LOCOMO_DIR, or the
// nearest shared/bench/locomo beside the working directory or one of its
// parents (the repository's clone sits beside shared/).
func Dir() (string, error) {
	if d := os.Getenv("MEMGATE_LOCOMO_DIR"); d != "" {
		return d, check(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, "shared", "bench", "locomo")
		if check(dir) == nil {
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("locomo: no shared/bench/locomo above %s (set MEMGATE_LOCOMO_DIR)", wd)
		}
	}
}

func check(dir string) error {
	for _, f := range []string{"memories.jsonl", "questions.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("locomo data missing (set MEMGATE_LOCOMO_DIR): %w", err)
		}
	}
	return nil
}

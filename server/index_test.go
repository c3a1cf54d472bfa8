package server_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memgate/memgate/internal/gcfloor"
	"github.com/memgate/memgate/server"
)

// --index-max-bytes reaches the index: a partition larger than the budget
// is refused with 503 unavailable naming the flag (never reloaded per
// search, never answered from part of it), and the same partition under
// the default budget recalls (the control).
func TestIndexBudgetReachesTheIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		budget int64
		want   int
	}{
		{"default budget", 0, http.StatusOK},
		{"budget smaller than the partition", 32 << 10, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, server.Config{DB: filepath.Join(t.TempDir(), "m.db"), IndexMaxBytes: tc.budget}, "")
			a := newAPI(t, s.base, s.key)
			a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("budget", 32))
			for range 2 { // the second is the one a reload per search would answer
				status, b := a.do("POST", "/v1/recall", recallJSON)
				if status != tc.want {
					t.Fatalf("recall: %d %s, want %d", status, b, tc.want)
				}
				if tc.want == http.StatusOK {
					checkRecall(t, a)
					continue
				}
				if !strings.Contains(string(b), `"unavailable"`) || !strings.Contains(string(b), "--index-max-bytes") {
					t.Fatalf("refusal does not name the code and the flag: %s", b)
				}
			}
		})
	}
}

func TestIndexBudgetMustNotBeNegative(t *testing.T) {
	err := server.Config{IndexMaxBytes: -1}.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "--index-max-bytes") {
		t.Fatalf("Validate: %v, want an error naming --index-max-bytes", err)
	}
	if err := (server.Config{IndexMaxBytes: 1 << 20, IndexApproxMinRows: -1}).WithDefaults().Validate(); err != nil {
		t.Fatalf("Validate of a valid budget: %v", err)
	}
}

// Run keeps the heap floor (Config.HeapFloor, default DefaultHeapFloor)
// while it serves, and gives the percent back when it returns; a negative
// floor (the control) leaves GOGC alone. Not parallel: the percent is the
// process's, and parallel tests start only after this one ends.
func TestRunKeepsTheHeapFloor(t *testing.T) {
	base := gcfloor.GOGC()
	for _, tc := range []struct {
		name  string
		floor int64
		above bool // GOGC above base while serving
	}{
		{"default floor", 0, true},
		{"floor off", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			ready := make(chan string, 1)
			done := make(chan error, 1)
			cfg := server.Config{DB: filepath.Join(t.TempDir(), "m.db"), HeapFloor: tc.floor, Ready: func(a string) { ready <- a }}
			go func() { done <- server.Run(ctx, cfg, io.Discard, io.Discard) }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("Run: %v", err)
			}
			runtime.GC() // the floor adjusts after a collection
			runtime.GC()
			serving := gcfloor.GOGC()
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			if (serving > base) != tc.above {
				t.Fatalf("GOGC %d while serving, %d before", serving, base)
			}
			if p := gcfloor.GOGC(); p != base {
				t.Fatalf("GOGC %d after Run returned, want %d", p, base)
			}
		})
	}
}

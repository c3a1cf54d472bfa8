package server_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

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

package sqlstore

import (
	"strings"
	"testing"
)

func TestNumberedRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                         "SELECT 1",
		"a = ? AND b IN (?, ?)":            "a = $1 AND b IN ($2, $3)",
		"x = '?' AND y = ? AND \"q?\" = ?": "x = '?' AND y = $1 AND \"q?\" = $2",
		"s = 'it''s ?' AND t = ?":          "s = 'it''s ?' AND t = $1",
		"?":                                "$1",
	} {
		if got := NumberedRebind(in); got != want {
			t.Errorf("NumberedRebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// In pads to a bucket with the first value, so the text is one of few.
func TestInPadsToBuckets(t *testing.T) {
	for _, tc := range []struct {
		n, want int
	}{{1, 8}, {8, 8}, {9, 16}, {1000, 1024}} {
		vs := make([]string, tc.n)
		for i := range vs {
			vs[i] = string(rune('a' + i%26))
		}
		var q Query
		In(&q, "id", vs)
		if got := strings.Count(q.String(), "?"); got != tc.want || len(q.Args()) != tc.want {
			t.Errorf("%d values: %d placeholders and %d args, want %d", tc.n, got, len(q.Args()), tc.want)
		}
		for i, a := range q.Args() {
			if want := vs[min(i, tc.n-1)]; a != want {
				t.Fatalf("%d values: arg %d is %v, want %v", tc.n, i, a, want)
			}
		}
	}
}

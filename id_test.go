package memgate

import (
	"testing"
	"time"
)

func TestNewID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	now := time.Now()
	for range 10000 {
		id := NewID(now)
		if !ValidIdent(id) || len(id) != 28 {
			t.Fatalf("id %q is not a valid identifier of length 28", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	a, b := NewID(now), NewID(now.Add(2*time.Millisecond))
	if a[:12] >= b[:12] {
		t.Errorf("ids do not sort by time: %q then %q", a, b)
	}
}

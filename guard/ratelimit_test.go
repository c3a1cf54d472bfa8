package guard

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := newLimiter(RateLimit{PerSecond: 2, Burst: 3}, func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.allow("k1"); !ok {
			t.Fatalf("request %d refused within the burst", i)
		}
	}
	ok, wait := l.allow("k1")
	if ok || wait != time.Second {
		t.Fatalf("past the burst: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := l.allow("k2"); !ok {
		t.Fatal("another key is limited")
	}
	now = now.Add(500 * time.Millisecond) // one token back
	if ok, _ := l.allow("k1"); !ok {
		t.Fatal("refill did not happen")
	}
	if ok, _ := l.allow("k1"); ok {
		t.Fatal("refill gave more than the rate")
	}
	now = now.Add(time.Hour)
	for range 3 {
		l.allow("k1")
	}
	if ok, _ := l.allow("k1"); ok {
		t.Fatal("the bucket grew past its burst")
	}
	// Slow rate: the wait is rounded up to whole seconds by the handler.
	slow := newLimiter(RateLimit{PerSecond: 0.1, Burst: 1}, func() time.Time { return now })
	slow.allow("k")
	if _, wait := slow.allow("k"); wait != 10*time.Second {
		t.Fatalf("wait %v, want 10s", wait)
	}
}

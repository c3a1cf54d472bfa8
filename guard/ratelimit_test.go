package guard

import (
	"fmt"
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

// TestLimiterBoundedTable: a limiter with max never holds more buckets
// than that, however many keys come; the keys it has no room for share
// one bucket, which is limited like any other. The control: the keys
// already in the table keep their own buckets.
func TestLimiterBoundedTable(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	l := newLimiter(RateLimit{PerSecond: 1, Burst: 2}, func() time.Time { return now })
	l.max = 8
	for i := range 8 {
		l.allow(fmt.Sprintf("a%d", i))
	}
	refused := 0
	for i := range 1000 {
		if ok, _ := l.allow(fmt.Sprintf("flood%d", i)); !ok {
			refused++
		}
	}
	if n := l.size(); n > 9 { // eight keys and the overflow bucket
		t.Fatalf("the table holds %d buckets, want at most 9", n)
	}
	if refused < 990 {
		t.Fatalf("%d of 1000 new keys refused; want all but the overflow bucket's burst", refused)
	}
	if ok, _ := l.allow("a3"); !ok {
		t.Fatal("control: a key in the table lost its own bucket")
	}
	// Full buckets make room again (an hour later, every one is full).
	now = now.Add(time.Hour)
	if ok, _ := l.allow("late"); !ok {
		t.Fatal("a new key after the table emptied was refused")
	}
}

// TestClientAddr: the connection's address is the client unless it is a
// trusted proxy; then X-Forwarded-For's right-most untrusted address is.
// A client's own X-Forwarded-For is never believed; an IPv6 client counts
// by its /64.
func TestClientAddr(t *testing.T) {
	t.Parallel()
	proxies, err := ParseTrustedProxies("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{cfg: Config{TrustedProxies: proxies}}
	none := &Guard{}
	for _, tc := range []struct {
		g      *Guard
		remote string
		xff    []string
		want   string
	}{
		{none, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{g, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{g, "127.0.0.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{g, "127.0.0.1:4000", []string{"6.6.6.6, 198.51.100.1, 10.1.2.3"}, "198.51.100.1"},
		{g, "127.0.0.1:4000", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{g, "127.0.0.1:4000", nil, "127.0.0.1"},
		{g, "127.0.0.1:4000", []string{"garbage"}, "127.0.0.1"},
		{none, "[2001:db8:1:2:3:4:5:6]:4000", nil, "2001:db8:1:2::/64"},
		{none, "[::ffff:192.0.2.1]:4000", nil, "192.0.2.1"},
		{none, "pipe", nil, ""},
	} {
		if got := tc.g.ClientAddr(tc.remote, tc.xff); got != tc.want {
			t.Errorf("ClientAddr(%q, %q) = %q, want %q", tc.remote, tc.xff, got, tc.want)
		}
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,proxy.internal"); err == nil {
		t.Error("a host name was taken for a trusted proxy")
	}
}

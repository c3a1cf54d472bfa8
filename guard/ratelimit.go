package guard

import (
	"math"
	"sync"
	"time"
)

// limiter is a token bucket per key id. Buckets exist for keys that have
// been seen (authenticated keys only, so their number is bounded by the
// keys of the database); full ones are dropped when the map grows.
type limiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time
	// max, when positive, bounds the table: once it holds max buckets
	// that are not full, every key not in it shares one overflow bucket,
	// so a flood from many keys (client addresses) is bounded in memory
	// and, together, in rate.
	max int

	mu      sync.Mutex
	buckets map[string]*bucket
	pruned  time.Time // the last prune
}

type bucket struct {
	tokens float64
	last   time.Time
}

// pruneAbove is the number of buckets above which full ones are dropped
// (a full bucket is what a new one would be).
const pruneAbove = 4096

func newLimiter(rl RateLimit, now func() time.Time) *limiter {
	return &limiter{rate: rl.PerSecond, burst: float64(rl.Burst), now: now, buckets: map[string]*bucket{}}
}

// allow takes a token from key's bucket. When there is none, it reports how
// long until there will be one.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		// A table at its bound is pruned at most once a second: a flood of
		// new keys must not cost a scan each.
		if n := len(l.buckets); n >= min(pruneAbove, l.limit()) && (n < l.limit() || now.Sub(l.pruned) >= time.Second) {
			l.prune(now)
			l.pruned = now
		}
		if len(l.buckets) >= l.limit() {
			key = overflowKey
			b = l.buckets[key]
		}
	}
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(l.burst, b.tokens+d.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, max(wait, time.Second)
}

// overflowKey is the bucket of the keys a full table has no room for
// (not a key id or an address: neither has a space).
const overflowKey = "overflow bucket"

// limit is the most buckets the table holds before keys share the
// overflow bucket.
func (l *limiter) limit() int {
	if l.max > 0 {
		return l.max
	}
	return math.MaxInt
}

// size is the number of buckets held (for tests).
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func (l *limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

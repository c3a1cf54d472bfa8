package engine

import "time"

// gatherer gathers a committer's group (the write committer's and the
// audit committer's): after a group's first request it takes every request
// queued, without waiting; then, when the previous group held more than
// one request (producers are concurrent), it waits at most its wait for
// the group to be as large as the previous one. Requests answered together
// come back together, a few hundred microseconds apart, and would
// otherwise start groups of one or two; a lone producer (the previous
// group was one request) never waits.
type gatherer struct {
	wait  time.Duration
	last  int // the previous group's size, in requests
	timer *time.Timer
}

func newGatherer(wait time.Duration) *gatherer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &gatherer{wait: wait, timer: t}
}

// gather takes requests from q with take, the group begun with one and
// holding n() requests, until full() or as above. It stops waiting when
// stop is closed.
func gather[R any](g *gatherer, q <-chan R, stop <-chan struct{}, n func() int, full func() bool, take func(R)) {
	armed := g.last > 1
	if armed {
		g.timer.Reset(g.wait)
	}
	waiting := armed
	for !full() {
		select {
		case r := <-q:
			take(r)
			continue
		default:
		}
		if !waiting || n() >= g.last {
			break
		}
		select {
		case r := <-q:
			take(r)
		case <-g.timer.C:
			waiting = false
		case <-stop:
			waiting = false
		}
	}
	if armed {
		g.timer.Stop() // no stale tick can follow (Go 1.23 timers)
	}
	g.last = n()
}

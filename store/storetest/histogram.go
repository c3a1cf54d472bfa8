package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var histogramTests = []test{
	{"Boundaries", testHistogramBoundaries},
	{"Isolation", testHistogramIsolation},
	{"EmptyRange", testHistogramEmpty},
	{"MaxBuckets", testHistogramMaxBuckets},
	{"RefusesInvalidQueries", testHistogramInvalid},
}

// hEvent returns a valid audit event of tenant, principal and action at at.
func hEvent(tenant, principal, action string, at time.Time) store.AuditEvent {
	return store.AuditEvent{Tenant: tenant, Principal: principal, Actor: "key-1", Action: action, At: at}
}

func histogram(t *testing.T, s store.Store, q store.AuditHistogramQuery) []int64 {
	t.Helper()
	counts, err := s.AuditHistogram(t.Context(), q)
	if err != nil {
		t.Fatalf("AuditHistogram %+v: %v", q, err)
	}
	return counts
}

func requireCounts(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: counts %v, want %v", what, got, want)
	}
}

// testHistogramBoundaries: an event lands in the bucket that holds its
// time, From inclusive and To exclusive, buckets counted from From (t0 is
// not on a whole hour: the store assumes no alignment), whatever order the
// events were appended in.
func testHistogramBoundaries(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	from, h := t0, time.Hour
	to := from.Add(4 * h)
	at := func(d time.Duration) store.AuditEvent { return hEvent("acme", "alice", "recall", from.Add(d)) }
	// Appended out of time order, in two batches.
	mustAppend(t, s,
		at(3*h+59*time.Minute), // bucket 3
		at(-time.Microsecond),  // before from: not counted
		at(h),                  // bucket 1: the first instant of it
		at(0),                  // bucket 0: from is inclusive
	)
	mustAppend(t, s,
		at(4*h),                  // at to: not counted (to is exclusive)
		at(h-time.Microsecond),   // bucket 0: its last instant
		at(4*h-time.Microsecond), // bucket 3: the last instant of the range
		at(5*h),                  // after to: not counted
	)
	q := store.AuditHistogramQuery{Tenant: "acme", Principal: "alice", Action: "recall", From: from, To: to, Bucket: h}
	requireCounts(t, "hourly", histogram(t, s, q), []int64{2, 1, 0, 2})

	// The same events, one bucket for the whole range, and two-hour
	// buckets: the counts add up.
	q.Bucket = 4 * h
	requireCounts(t, "one bucket", histogram(t, s, q), []int64{5})
	q.Bucket = 2 * h
	requireCounts(t, "two-hour buckets", histogram(t, s, q), []int64{3, 2})
	// A range shifted by a microsecond moves the boundary events.
	q = store.AuditHistogramQuery{Tenant: "acme", Principal: "alice", Action: "recall", From: from.Add(-time.Microsecond), To: to.Add(-time.Microsecond), Bucket: h}
	requireCounts(t, "shifted back a microsecond", histogram(t, s, q), []int64{2, 2, 0, 1})
	q = store.AuditHistogramQuery{Tenant: "acme", Principal: "alice", Action: "recall", From: from.Add(time.Microsecond), To: to.Add(time.Microsecond), Bucket: h}
	requireCounts(t, "shifted on a microsecond", histogram(t, s, q), []int64{2, 0, 0, 3})
}

// testHistogramIsolation: only the tenant's events of the action are
// counted, of the principal when one is named; each refusal sits beside a
// populated control.
func testHistogramIsolation(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	day := 24 * time.Hour
	var evs []store.AuditEvent
	add := func(n int, tenant, principal, action string, dayN int) {
		for i := range n {
			evs = append(evs, hEvent(tenant, principal, action, t0.Add(time.Duration(dayN)*day+time.Duration(i)*time.Minute)))
		}
	}
	add(3, "acme", "alice", "recall", 0)
	add(1, "acme", "alice", "recall", 1)
	add(2, "acme", "bob", "recall", 1)
	add(1, "acme", "", "recall", 0) // an event without a principal
	add(4, "acme", "alice", "remember", 0)
	add(2, "acme", "alice", "recall_preview", 1)
	add(5, "globex", "alice", "recall", 0)
	add(1, "globex", "bob", "recall", 1)
	mustAppend(t, s, evs...)

	q := func(tenant, principal, action string) store.AuditHistogramQuery {
		return store.AuditHistogramQuery{Tenant: tenant, Principal: principal, Action: action, From: t0, To: t0.Add(2 * day), Bucket: day}
	}
	cases := []struct {
		name string
		q    store.AuditHistogramQuery
		want []int64
	}{
		{"alice's recalls", q("acme", "alice", "recall"), []int64{3, 1}},
		{"bob's recalls", q("acme", "bob", "recall"), []int64{0, 2}},
		{"every principal's recalls, and those without one", q("acme", "", "recall"), []int64{4, 3}},
		{"another action", q("acme", "alice", "remember"), []int64{4, 0}},
		{"an action that starts like another", q("acme", "alice", "recall_preview"), []int64{0, 2}},
		{"an action nobody did", q("acme", "alice", "forget"), []int64{0, 0}},
		{"a principal with no events", q("acme", "carol", "recall"), []int64{0, 0}},
		{"the same principal in another tenant", q("globex", "alice", "recall"), []int64{5, 0}},
		{"another tenant, every principal", q("globex", "", "recall"), []int64{5, 1}},
		{"a tenant with no events", q("initech", "", "recall"), []int64{0, 0}},
		{"a principal in another case", q("acme", "Alice", "recall"), []int64{0, 0}},
		{"an action in another case", q("acme", "alice", "RECALL"), []int64{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireCounts(t, tc.name, histogram(t, s, tc.q), tc.want)
		})
	}
}

// testHistogramEmpty: a range without events answers a zero for every
// bucket, on an empty store and beside events outside the range.
func testHistogramEmpty(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	h := time.Hour
	q := store.AuditHistogramQuery{Tenant: "acme", Action: "recall", From: t0, To: t0.Add(24 * h), Bucket: h}
	zeros := make([]int64, 24)
	requireCounts(t, "empty store", histogram(t, s, q), zeros)

	mustAppend(t, s, hEvent("acme", "alice", "recall", t0.Add(-time.Microsecond)), hEvent("acme", "alice", "recall", t0.Add(24*h)),
		hEvent("acme", "alice", "recall", t0.Add(30*h)))
	requireCounts(t, "events only outside the range", histogram(t, s, q), zeros)
	// Control: the next day holds one of them.
	q.From, q.To = t0.Add(24*h), t0.Add(48*h)
	want := make([]int64, 24)
	want[0], want[6] = 1, 1
	requireCounts(t, "the next day", histogram(t, s, q), want)
}

func testHistogramMaxBuckets(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	h := time.Hour
	mustAppend(t, s, hEvent("acme", "alice", "recall", t0), hEvent("acme", "alice", "recall", t0.Add(399*h+59*time.Minute)))
	q := store.AuditHistogramQuery{Tenant: "acme", Action: "recall", From: t0, To: t0.Add(store.MaxHistogramBuckets * h), Bucket: h}
	counts := histogram(t, s, q)
	if len(counts) != store.MaxHistogramBuckets || counts[0] != 1 || counts[len(counts)-1] != 1 {
		t.Fatalf("%d buckets: %d counts, first %d, last %d", store.MaxHistogramBuckets, len(counts), counts[0], counts[len(counts)-1])
	}
	q.To = q.To.Add(h)
	counts, err := s.AuditHistogram(t.Context(), q)
	requireCode(t, fmt.Sprintf("AuditHistogram of %d buckets", store.MaxHistogramBuckets+1), err, memgate.EINVALID, "from")
	if counts != nil {
		t.Fatal("AuditHistogram returned counts with the error")
	}
}

func testHistogramInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustAppend(t, s, hEvent("acme", "alice", "recall", t0))
	valid := func() store.AuditHistogramQuery {
		return store.AuditHistogramQuery{Tenant: "acme", Principal: "alice", Action: "recall", From: t0, To: t0.Add(2 * time.Hour), Bucket: time.Hour}
	}
	// Control: the valid query counts the event.
	requireCounts(t, "valid query", histogram(t, s, valid()), []int64{1, 0})
	cases := []struct {
		name   string
		mutate func(q *store.AuditHistogramQuery)
		field  string
	}{
		{"no tenant", func(q *store.AuditHistogramQuery) { q.Tenant = "" }, "tenant"},
		{"malformed tenant", func(q *store.AuditHistogramQuery) { q.Tenant = "ac me" }, "tenant"},
		{"malformed principal", func(q *store.AuditHistogramQuery) { q.Principal = "al ice" }, "principal"},
		{"no action", func(q *store.AuditHistogramQuery) { q.Action = "" }, "action"},
		{"malformed action", func(q *store.AuditHistogramQuery) { q.Action = "recall%" }, "action"},
		{"no bucket", func(q *store.AuditHistogramQuery) { q.Bucket = 0 }, "bucket"},
		{"negative bucket", func(q *store.AuditHistogramQuery) { q.Bucket = -time.Hour }, "bucket"},
		{"bucket not whole microseconds", func(q *store.AuditHistogramQuery) { q.Bucket = time.Hour + time.Nanosecond }, "bucket"},
		{"no from", func(q *store.AuditHistogramQuery) { q.From = time.Time{} }, "from"},
		{"from not whole microseconds", func(q *store.AuditHistogramQuery) { q.From = q.From.Add(time.Nanosecond) }, "from"},
		{"to not whole microseconds", func(q *store.AuditHistogramQuery) { q.To = q.To.Add(time.Nanosecond) }, "to"},
		{"to at from", func(q *store.AuditHistogramQuery) { q.To = q.From }, "to"},
		{"to before from", func(q *store.AuditHistogramQuery) { q.To = q.From.Add(-time.Hour) }, "to"},
		{"a part of a bucket", func(q *store.AuditHistogramQuery) { q.To = q.To.Add(time.Minute) }, "to"},
		{"a range too long to measure", func(q *store.AuditHistogramQuery) {
			q.From, q.To, q.Bucket = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC), 1<<63-1-(1<<63-1)%1000
		}, "from"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := valid()
			tc.mutate(&q)
			counts, err := s.AuditHistogram(t.Context(), q)
			requireCode(t, "AuditHistogram", err, memgate.EINVALID, tc.field)
			if counts != nil {
				t.Fatal("AuditHistogram returned counts with the error")
			}
		})
	}
}

package engine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

func histCounts(h *memgate.AuditHistogram) []int64 {
	out := make([]int64, len(h.Buckets))
	for i, b := range h.Buckets {
		out[i] = b.Count
	}
	return out
}

// TestAuditHistogram: recalls land in the UTC day or hour they happened,
// counted for the scope's principal or the whole tenant, previews apart;
// the queue is flushed first, so a recall just made counts.
func TestAuditHistogram(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // now: 2026-03-01T12:00:00.123456789Z
	recall := func(tenant, principal string, preview bool) {
		t.Helper()
		if _, err := h.eng.Recall(ctx, memgate.RecallRequest{Scope: scope(tenant, principal), Query: "tea", Preview: preview}); err != nil {
			t.Fatal(err)
		}
	}
	hist := func(s memgate.Scope, req memgate.AuditHistogramRequest) *memgate.AuditHistogram {
		t.Helper()
		out, err := h.eng.AuditHistogram(ctx, s, req)
		if err != nil {
			t.Fatalf("AuditHistogram %+v %+v: %v", s, req, err)
		}
		return out
	}
	h.clock.Add(-3 * 24 * time.Hour) // 2026-02-26 12:00
	recall("acme", "alice", false)
	h.clock.Add(3*24*time.Hour - 12*time.Hour) // 2026-03-01 00:00:00.12
	recall("acme", "alice", false)
	recall("acme", "bob", false)
	h.clock.Add(12 * time.Hour) // back to 2026-03-01 12:00
	recall("acme", "alice", false)
	recall("acme", "alice", true)    // a preview
	recall("globex", "alice", false) // another tenant

	alice := scope("acme", "alice")
	all := memgate.Scope{Tenant: "acme", AllPrincipals: true}

	// Defaults: recall, 14 days ending with today's UTC day.
	d := hist(alice, memgate.AuditHistogramRequest{})
	wantTo := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	if d.Action != engine.ActionRecall || d.BucketSeconds != 86400 || !d.To.Equal(wantTo) || !d.From.Equal(wantTo.Add(-14*24*time.Hour)) || len(d.Buckets) != 14 {
		t.Fatalf("defaults: action %s, bucket %ds, %s to %s, %d buckets", d.Action, d.BucketSeconds, d.From, d.To, len(d.Buckets))
	}
	for i, b := range d.Buckets {
		if !b.Start.Equal(d.From.Add(time.Duration(i)*24*time.Hour)) || b.Start.Location() != time.UTC {
			t.Fatalf("bucket %d starts %s", i, b.Start)
		}
	}
	want := make([]int64, 14)
	want[10], want[13] = 1, 2 // 2026-02-26; 2026-03-01 (00:00 and 12:00), the preview apart
	if got := histCounts(d); !slices.Equal(got, want) {
		t.Fatalf("alice's recalls per day: %v, want %v", got, want)
	}
	want[13] = 3 // bob's too
	if got := histCounts(hist(all, memgate.AuditHistogramRequest{})); !slices.Equal(got, want) {
		t.Fatalf("the tenant's recalls per day: %v, want %v", got, want)
	}
	if got := histCounts(hist(scope("acme", "carol"), memgate.AuditHistogramRequest{})); !slices.Equal(got, make([]int64, 14)) {
		t.Fatalf("carol's recalls: %v, want none", got)
	}
	previews := make([]int64, 14)
	previews[13] = 1
	if got := histCounts(hist(alice, memgate.AuditHistogramRequest{Action: engine.ActionRecallPreview})); !slices.Equal(got, previews) {
		t.Fatalf("alice's previews: %v, want %v", got, previews)
	}

	// Hourly, from and to rounded out to whole UTC hours; a time given in
	// another zone is aligned in UTC.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	hr := hist(alice, memgate.AuditHistogramRequest{Bucket: time.Hour,
		From: time.Date(2026, 3, 1, 5, 15, 0, 0, zone),  // 2026-02-28T23:45Z → 23:00
		To:   time.Date(2026, 3, 1, 17, 40, 0, 0, zone), // 2026-03-01T12:10Z → 13:00
	})
	if !hr.From.Equal(time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)) || !hr.To.Equal(time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)) || hr.BucketSeconds != 3600 || len(hr.Buckets) != 14 {
		t.Fatalf("hourly: %s to %s, bucket %ds, %d buckets", hr.From, hr.To, hr.BucketSeconds, len(hr.Buckets))
	}
	wantH := make([]int64, 14)
	wantH[1], wantH[13] = 1, 1 // 00:00 and 12:00
	if got := histCounts(hr); !slices.Equal(got, wantH) {
		t.Fatalf("hourly: %v, want %v", got, wantH)
	}
	// An aligned to is kept (it is exclusive): 12:00 is left out.
	hr = hist(alice, memgate.AuditHistogramRequest{Bucket: time.Hour, To: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)})
	if !hr.To.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) || len(hr.Buckets) != 14 || hr.Buckets[13].Count != 0 || hr.Buckets[2].Count != 1 {
		t.Fatalf("hourly to 12:00: %s to %s, %v", hr.From, hr.To, histCounts(hr))
	}
	// Exactly the most buckets allowed.
	if n := len(hist(alice, memgate.AuditHistogramRequest{Bucket: time.Hour, From: wantTo.Add(-engine.MaxHistogramBuckets * time.Hour), To: wantTo}).Buckets); n != engine.MaxHistogramBuckets {
		t.Fatalf("%d hours: %d buckets", engine.MaxHistogramBuckets, n)
	}
}

func TestAuditHistogramValidates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alice := scope("acme", "alice")
	now := h.clock.Now()
	cases := []struct {
		name  string
		s     memgate.Scope
		req   memgate.AuditHistogramRequest
		field string
	}{
		{"two-hour bucket", alice, memgate.AuditHistogramRequest{Bucket: 2 * time.Hour}, "bucket"},
		{"negative bucket", alice, memgate.AuditHistogramRequest{Bucket: -time.Hour}, "bucket"},
		{"a week", alice, memgate.AuditHistogramRequest{Bucket: 7 * 24 * time.Hour}, "bucket"},
		{"malformed action", alice, memgate.AuditHistogramRequest{Action: "re call"}, "action"},
		{"from after to", alice, memgate.AuditHistogramRequest{From: now, To: now.Add(-time.Hour)}, "to"},
		{"from at to", alice, memgate.AuditHistogramRequest{From: now, To: now}, "to"},
		{"from after now, to unset", alice, memgate.AuditHistogramRequest{From: now.Add(72 * time.Hour)}, "to"},
		{"401 hours", alice, memgate.AuditHistogramRequest{Bucket: time.Hour, From: now.Add(-401 * time.Hour).Truncate(time.Hour), To: now.Truncate(time.Hour)}, "from"},
		{"401 days", alice, memgate.AuditHistogramRequest{From: now.Add(-400 * 24 * time.Hour)}, "from"},
		{"centuries", alice, memgate.AuditHistogramRequest{From: time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, "from"},
		{"no tenant", memgate.Scope{Principal: "alice"}, memgate.AuditHistogramRequest{}, "tenant"},
		{"no principal", memgate.Scope{Tenant: "acme"}, memgate.AuditHistogramRequest{}, "principal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := h.eng.AuditHistogram(ctx, tc.s, tc.req)
			if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != tc.field || out != nil {
				t.Fatalf("%v (%s, field %q), want invalid_argument naming %q", err, memgate.ErrorCode(err), memgate.ErrorField(err), tc.field)
			}
		})
	}
	// Control: a valid request on an empty log answers zeros.
	out, err := h.eng.AuditHistogram(ctx, alice, memgate.AuditHistogramRequest{Bucket: time.Hour})
	if err != nil || len(out.Buckets) != engine.DefaultHistogramBuckets || slices.ContainsFunc(out.Buckets, func(b engine.HistogramBucket) bool { return b.Count != 0 }) {
		t.Fatalf("empty log: %+v, %v", out, err)
	}
}

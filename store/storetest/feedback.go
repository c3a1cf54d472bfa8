package storetest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var feedbackTests = []test{
	{"Accumulates", testFeedbackAccumulates},
	{"ValueOutOfRange", testFeedbackRange},
	{"Statuses", testFeedbackStatuses},
	{"ForeignIsNotFound", testFeedbackForeign},
}

var deleteExpiredTests = []test{
	{"OnlyExpiredAcrossTenants", testDeleteExpired},
	{"Limit", testDeleteExpiredLimit},
}

func testFeedbackAccumulates(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := fullMemory(t, alice, id(1))
	m.Status, m.Feedback = memgate.StatusActive, memgate.Feedback{}
	other := newMemory(alice, id(2), "no feedback")
	mustInsert(t, s, m, other)

	want := m.Clone()
	for _, v := range []float64{0.5, -1, 1, 0.25} {
		got, err := s.AddFeedback(t.Context(), alice, m.ID, v)
		if err != nil {
			t.Fatalf("AddFeedback %v: %v", v, err)
		}
		want.Feedback.Count++
		want.Feedback.Sum += v
		// Version and updated_at stay: feedback is not an edit.
		requireEqualMemory(t, fmt.Sprintf("AddFeedback %v result", v), want, got)
		requireUnchanged(t, s, alice, want)
	}
	if want.Feedback.Count != 4 || want.Feedback.Sum != 0.75 {
		t.Fatalf("test arithmetic: %+v", want.Feedback)
	}
	requireUnchanged(t, s, alice, other)
}

func testFeedbackRange(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	m := newMemory(alice, id(1), "rated")
	mustInsert(t, s, m)
	for _, v := range []float64{math.Nextafter(1, 2), math.Nextafter(-1, -2), 2, -7, math.NaN(), math.Inf(1), math.Inf(-1)} {
		got, err := s.AddFeedback(t.Context(), alice, m.ID, v)
		requireCode(t, fmt.Sprintf("AddFeedback %v", v), err, memgate.EINVALID, "value")
		if got != nil {
			t.Fatalf("AddFeedback %v returned a memory with the error", v)
		}
		requireUnchanged(t, s, alice, m)
	}
	// Control: the bounds themselves are accepted.
	for _, v := range []float64{-1, 1, 0} {
		if _, err := s.AddFeedback(t.Context(), alice, m.ID, v); err != nil {
			t.Fatalf("AddFeedback %v: %v", v, err)
		}
	}
	if got := mustGet(t, s, alice, m.ID).Feedback; got.Count != 3 || got.Sum != 0 {
		t.Fatalf("feedback after -1, 1, 0: %+v, want count 3, sum 0", got)
	}
}

// testFeedbackStatuses: feedback is recorded where Update is allowed (active
// and pending, expired or not); revoked and superseded memories refuse it.
func testFeedbackStatuses(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	cases := []struct {
		status   memgate.Status
		expires  *time.Time
		wantCode string
	}{
		{memgate.StatusActive, nil, ""},
		{memgate.StatusActive, ptr(t0), ""}, // expired: still the caller's to rate
		{memgate.StatusPending, nil, ""},
		{memgate.StatusRevoked, nil, memgate.ECONFLICT},
		{memgate.StatusSuperseded, nil, memgate.ECONFLICT},
	}
	for i, tc := range cases {
		m := newMemory(alice, id(i+1), "status "+string(tc.status))
		m.Status, m.ExpiresAt = tc.status, tc.expires
		mustInsert(t, s, m)
		t.Run(fmt.Sprintf("%s expires %v", tc.status, tc.expires != nil), func(t *testing.T) {
			got, err := s.AddFeedback(t.Context(), alice, m.ID, 0.5)
			if tc.wantCode != "" {
				requireCode(t, "AddFeedback", err, tc.wantCode, "")
				requireUnchanged(t, s, alice, m)
				return
			}
			if err != nil {
				t.Fatalf("AddFeedback: %v", err)
			}
			want := m.Clone()
			want.Feedback = memgate.Feedback{Count: 1, Sum: 0.5}
			requireEqualMemory(t, "AddFeedback", want, got)
		})
	}
}

func testFeedbackForeign(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "A"}
	target := newMemory(owner, id(1), "alice's")
	mustInsert(t, s, target, newMemory(bob, id(2), "bob's"))

	missing, err := s.AddFeedback(t.Context(), alice, missingID, 1)
	requireNotFound(t, "AddFeedback of a missing id", err)
	if missing != nil {
		t.Fatal("AddFeedback of a missing id returned a memory")
	}
	for _, sc := range []memgate.Scope{bob, aliceGlobex, {Tenant: "acme", Principal: "alice", Agent: "B"}} {
		_, err := s.AddFeedback(t.Context(), sc, target.ID, 1)
		requireNotFound(t, fmt.Sprintf("AddFeedback from %+v", sc), err)
		requireUnchanged(t, s, alice, target)
	}
	// Control: the owner, from its agent or the whole partition.
	for _, sc := range []memgate.Scope{owner, alice} {
		if _, err := s.AddFeedback(t.Context(), sc, target.ID, 1); err != nil {
			t.Fatalf("AddFeedback from %+v: %v", sc, err)
		}
	}
	if _, err := s.AddFeedback(t.Context(), memgate.Scope{Tenant: "acme"}, target.ID, 1); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("AddFeedback without principal: %v, want invalid_argument", err)
	}
}

func testDeleteExpired(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	type row struct {
		sc      memgate.Scope
		id      string
		kind    memgate.Kind
		status  memgate.Status
		expires *time.Time
		gone    bool
	}
	rows := []row{
		{alice, "expired", memgate.KindFact, memgate.StatusActive, ptr(now.Add(-time.Hour)), true},
		{alice, "at-before", memgate.KindTask, memgate.StatusActive, ptr(now), true}, // at or before: gone
		{alice, "just-after", memgate.KindFact, memgate.StatusActive, ptr(now.Add(time.Microsecond)), false},
		{alice, "no-expiry", memgate.KindFact, memgate.StatusActive, nil, false},
		{alice, "revoked-expired", memgate.KindMessage, memgate.StatusRevoked, ptr(t0), true}, // any status
		{bob, "bob-expired", memgate.KindPreference, memgate.StatusPending, ptr(t0), true},
		{bob, "bob-live", memgate.KindFact, memgate.StatusActive, ptr(now.Add(time.Hour)), false},
		{aliceGlobex, "globex-expired", memgate.KindFact, memgate.StatusActive, ptr(t1), true},
		{aliceGlobex, "globex-live", memgate.KindFact, memgate.StatusActive, nil, false},
	}
	want := map[string]store.Ref{}
	for _, r := range rows {
		m := newMemory(r.sc, r.id, "memory "+r.id)
		m.Kind, m.Status, m.ExpiresAt = r.kind, r.status, r.expires
		mustInsert(t, s, m)
		if r.gone {
			want[r.id] = store.Ref{Tenant: r.sc.Tenant, Principal: r.sc.Principal, ID: r.id, Kind: r.kind}
		}
	}

	refs, err := s.DeleteExpired(t.Context(), now, 100)
	if err != nil {
		t.Fatalf("DeleteExpired: %v", err)
	}
	got := map[string]store.Ref{}
	for _, r := range refs {
		if _, dup := got[r.ID]; dup {
			t.Fatalf("DeleteExpired returned %s twice", r.ID)
		}
		got[r.ID] = r
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DeleteExpired returned %v, want %v", got, want)
	}
	for _, r := range rows {
		if r.gone {
			requireGone(t, s, r.sc, r.id)
		} else {
			requireStored(t, s, r.sc, r.id) // control
		}
	}
	again, err := s.DeleteExpired(t.Context(), now, 100)
	if err != nil || len(again) != 0 {
		t.Fatalf("second DeleteExpired: %v, %v; want nothing", again, err)
	}
}

func testDeleteExpiredLimit(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for i := range 5 {
		m := newMemory(alice, id(i+1), "expired")
		m.ExpiresAt = ptr(t0.Add(time.Duration(i) * time.Minute))
		mustInsert(t, s, m)
	}
	live := newMemory(alice, id(10), "live")
	live.ExpiresAt = ptr(now.Add(time.Hour))
	mustInsert(t, s, live)
	expired := func() int64 {
		return countsOf(t, s, alice, now)["alice/fact/expired"]
	}

	for _, limit := range []int{0, -1} {
		refs, err := s.DeleteExpired(t.Context(), now, limit)
		if err != nil || len(refs) != 0 || expired() != 5 {
			t.Fatalf("DeleteExpired limit %d: %v, %v, %d expired left; want nothing deleted", limit, refs, err, expired())
		}
	}
	for _, step := range []struct{ limit, want, left int }{{2, 2, 3}, {2, 2, 1}, {10, 1, 0}, {10, 0, 0}} {
		refs, err := s.DeleteExpired(t.Context(), now, step.limit)
		if err != nil || len(refs) != step.want {
			t.Fatalf("DeleteExpired limit %d: %d refs, %v; want %d", step.limit, len(refs), err, step.want)
		}
		for _, r := range refs {
			requireGone(t, s, alice, r.ID)
		}
		if n := expired(); n != int64(step.left) {
			t.Fatalf("after DeleteExpired limit %d: %d expired left, want %d", step.limit, n, step.left)
		}
	}
	requireUnchanged(t, s, alice, live)
}

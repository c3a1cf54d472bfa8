package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var updateTests = []test{
	{"WritesMutableFieldsOnly", testUpdateFields},
	{"ExpectedVersion", testUpdateExpectedVersion},
	{"RaceOneWinner", testUpdateRace},
	{"OnlyActiveOrPending", testUpdateOnlyActiveOrPending},
}

var setStatusTests = []test{
	{"Revoke", testSetStatusRevoke},
	{"Transitions", testSetStatusTransitions},
}

var supersedeTests = []test{
	{"Success", testSupersede},
	{"RefusedWritesNothing", testSupersedeRefused},
}

var deleteTests = []test{
	{"Gone", testDelete},
}

var forgetTests = []test{
	{"OnePrincipalEverywhere", testForget},
}

func testUpdateFields(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	active := fullMemory(t, alice, id(1))
	active.Status, active.StatusReason = memgate.StatusActive, ""
	pending := fullMemory(t, alice, id(2))
	minimal := newMemory(alice, id(3), "minimal")
	mustInsert(t, s, active, pending, minimal)

	// change sets every mutable field to a new value and tries to change
	// every immutable one, which the store must ignore.
	change := func(orig *memgate.Memory) (m, want *memgate.Memory) {
		m = orig.Clone()
		m.Content = "updated content, " + orig.ID
		m.ContentSHA256 = memgate.ContentHash(m.Content)
		m.Reason = "corrected by the user"
		m.Metadata = metadata(t, `{"edited": true, "n": 98765432109876543, "tags": ["x"]}`)
		m.Kind = memgate.KindTask
		m.Sensitivity = memgate.SensitivityStandard
		m.ExpiresAt = ptr(t2.Add(48 * time.Hour))
		m.ValidFrom = nil
		m.ValidUntil = ptr(t2)
		m.Embedding = &memgate.Embedding{Provider: "ollama", Model: "nomic-embed-text", Dim: 3, Vector: []float32{1, -2.5, 1e-7}}
		m.DedupKey = "sig-v1:" + orig.ID + "-updated" // follows the content
		m.UpdatedAt = t2
		// The write gate's verdict on the new content, and who changed it.
		m.Flags = []string{"instruction_like:role_tag"}
		m.UpdatedBy = "key_updater"
		want = m.Clone()

		// Counters belong to the store (Remember, AddFeedback): Update
		// leaves them as stored; a status other than active or pending is
		// not the update's to set.
		m.SeenCount = orig.SeenCount + 40
		m.Feedback = memgate.Feedback{Count: 9, Sum: 9}
		m.Tenant, m.Principal = "globex", "mallory"
		m.Agent, m.Conversation = "other-agent", "other-conv"
		m.Source = memgate.SourceSystem
		m.Status, m.StatusReason = memgate.StatusRevoked, "sneaky"
		m.CreatedAt = t2
		m.Supersedes, m.SupersededBy = "m-x", "m-y"
		m.Version = 99

		want.Version = orig.Version + 1
		return m, want
	}
	clearFields := func(orig *memgate.Memory) (m, want *memgate.Memory) {
		m = orig.Clone()
		m.Reason, m.Metadata, m.Embedding, m.DedupKey = "", nil, nil, ""
		m.ExpiresAt, m.ValidFrom, m.ValidUntil = nil, nil, nil
		m.UpdatedAt = t2
		want = m.Clone()
		want.Version = orig.Version + 1
		return m, want
	}
	fill := func(orig *memgate.Memory) (m, want *memgate.Memory) {
		m = orig.Clone()
		m.Metadata = map[string]any{}
		m.Embedding = &memgate.Embedding{Provider: "openai", Model: "text-embedding-3-small", Dim: 2, Vector: []float32{0.6, 0.8}}
		m.ExpiresAt, m.ValidFrom, m.ValidUntil = ptr(t2), ptr(t0), ptr(t1)
		m.UpdatedAt = t1
		want = m.Clone()
		want.Version = orig.Version + 1
		return m, want
	}
	cases := []struct {
		name   string
		orig   *memgate.Memory
		change func(*memgate.Memory) (m, want *memgate.Memory)
	}{
		{"active: every mutable field", active, change},
		{"pending: every mutable field", pending, change},
		{"clear optional fields", active, clearFields},
		{"fill optional fields", minimal, fill},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := mustGet(t, s, alice, tc.orig.ID)
			m, want := tc.change(orig)
			got, err := s.Update(t.Context(), alice, m, orig.Version)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			requireEqualMemory(t, "Update result", want, got)
			requireUnchanged(t, s, alice, want)
		})
	}
	requireGone(t, s, memgate.Scope{Tenant: "globex", Principal: "mallory"}, id(1))
}

func testUpdateExpectedVersion(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	orig := newMemory(alice, id(1), "version one")
	mustInsert(t, s, orig)

	update := func(content string, expected int64) (*memgate.Memory, error) {
		m := orig.Clone()
		m.Content, m.ContentSHA256 = content, memgate.ContentHash(content)
		return s.Update(t.Context(), alice, m, expected)
	}
	v2, err := update("version two", 1)
	if err != nil || v2.Version != 2 || v2.Content != "version two" {
		t.Fatalf("Update at version 1: %v, %+v", err, v2)
	}
	for _, stale := range []int64{1, 0, 3, -1} {
		_, err := update("stale write", stale)
		requireCode(t, fmt.Sprintf("Update expecting version %d", stale), err, memgate.ECONFLICT, "")
		requireUnchanged(t, s, alice, v2)
	}
	v3, err := update("version three", 2)
	if err != nil || v3.Version != 3 {
		t.Fatalf("Update at version 2: %v, %+v", err, v3)
	}
	_, err = s.Update(t.Context(), alice, newMemory(alice, missingID, "x"), 1)
	requireNotFound(t, "Update of a missing id", err)
}

func testUpdateRace(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const rounds = 20
	for r := range rounds {
		orig := newMemory(alice, id(r), "contended")
		mustInsert(t, s, orig)

		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for g := range 2 {
			wg.Go(func() {
				m := orig.Clone()
				m.Content = fmt.Sprintf("written by goroutine %d", g)
				m.ContentSHA256 = memgate.ContentHash(m.Content)
				<-start
				_, errs[g] = s.Update(t.Context(), alice, m, 1)
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for g, err := range errs {
			switch memgate.ErrorCode(err) {
			case "":
				if winner >= 0 {
					t.Fatalf("round %d: both updates at version 1 succeeded", r)
				}
				winner = g
			case memgate.ECONFLICT:
			default:
				t.Fatalf("round %d: goroutine %d: %v, want success or conflict", r, g, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: neither update succeeded: %v", r, errs)
		}
		got := mustGet(t, s, alice, orig.ID)
		if got.Version != 2 || got.Content != fmt.Sprintf("written by goroutine %d", winner) {
			t.Fatalf("round %d: stored version %d content %q, want version 2 written by goroutine %d", r, got.Version, got.Content, winner)
		}
	}
}

func testUpdateOnlyActiveOrPending(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	for i, st := range memgate.Statuses {
		orig := newMemory(alice, id(i), "status "+string(st))
		orig.Status = st
		mustInsert(t, s, orig)
		t.Run(string(st), func(t *testing.T) {
			m := orig.Clone()
			m.Content, m.ContentSHA256 = "changed", memgate.ContentHash("changed")
			got, err := s.Update(t.Context(), alice, m, 1)
			if st == memgate.StatusActive || st == memgate.StatusPending {
				if err != nil || got.Content != "changed" || got.Status != st {
					t.Fatalf("Update of a %s memory: %v, %+v", st, err, got)
				}
				return
			}
			requireCode(t, "Update of a "+string(st)+" memory", err, memgate.ECONFLICT, "")
			requireUnchanged(t, s, alice, orig)
		})
	}
	t.Run("revoked after an update", func(t *testing.T) {
		m := mustGet(t, s, alice, id(0))
		revoked, err := s.SetStatus(t.Context(), alice, m.ID, store.StatusChange{
			From: []memgate.Status{memgate.StatusActive}, To: memgate.StatusRevoked, Reason: "r", At: t1,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The right version does not help: revoked is final for Update.
		_, err = s.Update(t.Context(), alice, m, revoked.Version)
		requireCode(t, "Update of a revoked memory at its version", err, memgate.ECONFLICT, "")
		requireUnchanged(t, s, alice, revoked)
	})
}

func revoke(reason string, at time.Time) store.StatusChange {
	return store.StatusChange{
		From: []memgate.Status{memgate.StatusActive, memgate.StatusPending}, To: memgate.StatusRevoked, Reason: reason, At: at,
	}
}

func testSetStatusRevoke(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	orig := fullMemory(t, alice, id(1))
	orig.Status, orig.StatusReason, orig.Version = memgate.StatusActive, "", 1
	sibling := newMemory(alice, id(2), "sibling")
	mustInsert(t, s, orig, sibling)

	got, err := s.SetStatus(t.Context(), alice, orig.ID, revoke("user asked to forget", t2))
	if err != nil {
		t.Fatalf("revoke: %v", err)
	}
	want := orig.Clone()
	want.Status, want.StatusReason, want.Version, want.UpdatedAt = memgate.StatusRevoked, "user asked to forget", 2, t2
	requireEqualMemory(t, "revoke result", want, got)
	requireUnchanged(t, s, alice, want)
	requireUnchanged(t, s, alice, sibling)

	// Repeating is idempotent: same memory back, nothing rewritten.
	again, err := s.SetStatus(t.Context(), alice, orig.ID, revoke("a second reason", t2.Add(time.Hour)))
	if err != nil {
		t.Fatalf("repeat revoke: %v", err)
	}
	requireEqualMemory(t, "repeat revoke result", want, again)
	requireUnchanged(t, s, alice, want)
}

func testSetStatusTransitions(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name     string
		from     memgate.Status
		change   store.StatusChange
		wantCode string // "" for success
	}{
		{"revoke active", memgate.StatusActive, revoke("r", t1), ""},
		{"revoke pending", memgate.StatusPending, revoke("r", t1), ""},
		{"revoke superseded", memgate.StatusSuperseded, revoke("r", t1), memgate.ECONFLICT},
		{"approve pending", memgate.StatusPending, store.StatusChange{
			From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusActive, Reason: "approved", At: t1,
		}, ""},
		{"approve revoked", memgate.StatusRevoked, store.StatusChange{
			From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusActive, Reason: "approved", At: t1,
		}, memgate.ECONFLICT},
		{"approve active is idempotent", memgate.StatusActive, store.StatusChange{
			From: []memgate.Status{memgate.StatusPending}, To: memgate.StatusActive, Reason: "approved", At: t1,
		}, "unchanged"},
		{"empty From allows nothing", memgate.StatusActive, store.StatusChange{To: memgate.StatusRevoked, At: t1}, memgate.ECONFLICT},
		{"to expired is not a stored status", memgate.StatusActive, store.StatusChange{
			From: []memgate.Status{memgate.StatusActive}, To: memgate.StatusExpired, At: t1,
		}, memgate.EINVALID},
		{"to empty status", memgate.StatusActive, store.StatusChange{
			From: []memgate.Status{memgate.StatusActive}, At: t1,
		}, memgate.EINVALID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			orig := newMemory(alice, id(1), "transition")
			orig.Status = tc.from
			mustInsert(t, s, orig)

			got, err := s.SetStatus(t.Context(), alice, orig.ID, tc.change)
			switch tc.wantCode {
			case "":
				if err != nil {
					t.Fatalf("SetStatus: %v", err)
				}
				want := orig.Clone()
				want.Status, want.StatusReason, want.Version, want.UpdatedAt = tc.change.To, tc.change.Reason, 2, tc.change.At
				requireEqualMemory(t, "SetStatus result", want, got)
				requireUnchanged(t, s, alice, want)
			case "unchanged":
				if err != nil {
					t.Fatalf("SetStatus: %v", err)
				}
				requireEqualMemory(t, "SetStatus result", orig, got)
				requireUnchanged(t, s, alice, orig)
			default:
				requireCode(t, "SetStatus", err, tc.wantCode, "")
				requireUnchanged(t, s, alice, orig)
			}
			_, err = s.SetStatus(t.Context(), alice, missingID, revoke("r", t1))
			requireNotFound(t, "SetStatus of a missing id", err)
		})
	}
}

func testSupersede(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	owner := memgate.Scope{Tenant: "acme", Principal: "alice", Agent: "agent-1"}
	old := fullMemory(t, owner, id(1))
	old.Status, old.StatusReason, old.Version, old.Supersedes, old.SupersededBy = memgate.StatusActive, "", 3, "", ""
	mustInsert(t, s, old)

	next := fullMemory(t, owner, id(2))
	next.Status, next.StatusReason, next.Version, next.SupersededBy = memgate.StatusActive, "", 1, ""
	next.Content, next.ContentSHA256 = "lives in Lisbon now", memgate.ContentHash("lives in Lisbon now")
	next.Supersedes = old.ID
	next.CreatedBy, next.UpdatedBy = "key_superseder", "key_superseder"

	got, err := s.Supersede(t.Context(), owner, old.ID, next, t2)
	if err != nil {
		t.Fatalf("Supersede: %v", err)
	}
	wantOld := old.Clone()
	wantOld.Status, wantOld.SupersededBy, wantOld.Version, wantOld.UpdatedAt = memgate.StatusSuperseded, next.ID, 4, t2
	wantOld.UpdatedBy = next.CreatedBy // the writer of the new version changed the old one
	requireEqualMemory(t, "Supersede result's old", wantOld, got.Old)
	requireEqualMemory(t, "Supersede result's next", next, got.Next)
	if got.Replayed {
		t.Fatal("Supersede without a key replayed")
	}
	requireUnchanged(t, s, alice, wantOld)
	requireUnchanged(t, s, alice, next)
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), newestFirst(old.ID, next.ID))
	requireIDs(t, "List active", listIDs(t, s, alice, store.Filter{Statuses: []memgate.Status{memgate.StatusActive}, Now: t0}), []string{next.ID})

	// The old memory is no longer active: superseding it again is a conflict.
	again := newMemory(owner, id(3), "third version")
	again.Supersedes = old.ID
	_, err = s.Supersede(t.Context(), owner, old.ID, again, t2)
	requireCode(t, "Supersede of a superseded memory", err, memgate.ECONFLICT, "")
	requireGone(t, s, alice, again.ID)
}

func testSupersedeRefused(t *testing.T, newStore func(*testing.T) store.Store) {
	cases := []struct {
		name      string
		oldStatus memgate.Status
		scope     memgate.Scope // of the caller
		oldID     string        // "" means the old memory's
		next      func(*memgate.Memory) *memgate.Memory
		wantCode  string
		wantField string
	}{
		{name: "old revoked", oldStatus: memgate.StatusRevoked, wantCode: memgate.ECONFLICT},
		{name: "old pending", oldStatus: memgate.StatusPending, wantCode: memgate.ECONFLICT},
		{name: "old superseded", oldStatus: memgate.StatusSuperseded, wantCode: memgate.ECONFLICT},
		{name: "next has another principal", next: func(n *memgate.Memory) *memgate.Memory {
			n.Principal = "bob"
			return n
		}, wantCode: memgate.EINVALID},
		{name: "next has another tenant", next: func(n *memgate.Memory) *memgate.Memory {
			n.Tenant = "globex"
			return n
		}, wantCode: memgate.EINVALID},
		{name: "next supersedes another memory", next: func(n *memgate.Memory) *memgate.Memory {
			n.Supersedes = "m-other"
			return n
		}, wantCode: memgate.EINVALID, wantField: "supersedes"},
		{name: "next pending", next: func(n *memgate.Memory) *memgate.Memory {
			n.Status, n.StatusReason = memgate.StatusPending, "instruction_like"
			return n
		}, wantCode: memgate.ECONFLICT},
		{name: "next reuses a stored id", next: func(n *memgate.Memory) *memgate.Memory {
			n.ID = id(9)
			return n
		}, wantCode: memgate.ECONFLICT},
		{name: "old missing", oldID: missingID, wantCode: memgate.ENOTFOUND},
		{name: "old foreign", scope: bob, next: func(n *memgate.Memory) *memgate.Memory {
			n.Principal = "bob"
			return n
		}, wantCode: memgate.ENOTFOUND},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			old := newMemory(alice, id(1), "old")
			if tc.oldStatus != "" {
				old.Status = tc.oldStatus
			}
			other := newMemory(alice, id(9), "another stored memory")
			mustInsert(t, s, old, other)

			sc := alice
			if tc.scope.Tenant != "" {
				sc = tc.scope
			}
			oldID := old.ID
			if tc.oldID != "" {
				oldID = tc.oldID
			}
			next := newMemory(alice, id(2), "replacement")
			next.Supersedes = oldID
			if tc.next != nil {
				next = tc.next(next)
			}

			got, err := s.Supersede(t.Context(), sc, oldID, next, t1)
			if tc.wantCode == memgate.ENOTFOUND {
				requireNotFound(t, "Supersede", err)
			} else {
				requireCode(t, "Supersede", err, tc.wantCode, tc.wantField)
			}
			if got != nil {
				t.Fatalf("Supersede returned a result with the error: %+v", got)
			}
			// Nothing written: old and other unchanged, next nowhere.
			requireUnchanged(t, s, alice, old)
			requireUnchanged(t, s, alice, other)
			for _, tenant := range []string{"acme", "globex"} {
				requireIDs(t, "List of "+tenant, listIDs(t, s, memgate.Scope{Tenant: tenant, AllPrincipals: true}, store.Filter{}),
					map[string][]string{"acme": newestFirst(old.ID, other.ID), "globex": {}}[tenant])
			}

			// Control: a valid replacement with the same new id succeeds on
			// an active memory, so the refusal was for the stated reason.
			ctl := newMemory(alice, id(3), "active control")
			mustInsert(t, s, ctl)
			good := newMemory(alice, id(2), "replacement")
			good.Supersedes = ctl.ID
			if _, err := s.Supersede(t.Context(), alice, ctl.ID, good, t1); err != nil {
				t.Fatalf("control Supersede: %v", err)
			}
		})
	}
}

func testDelete(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	gone := fullMemory(t, alice, id(1))
	kept := newMemory(alice, id(2), "kept")
	mustInsert(t, s, gone, kept)
	before := total(countsOf(t, s, alice, now))

	if err := s.Delete(t.Context(), alice, gone.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	requireGone(t, s, alice, gone.ID)
	requireIDs(t, "List", listIDs(t, s, alice, store.Filter{}), []string{kept.ID})
	if after := total(countsOf(t, s, alice, now)); after != before-1 {
		t.Fatalf("Counts total %d after Delete, want %d", after, before-1)
	}
	requireNotFound(t, "second Delete", s.Delete(t.Context(), alice, gone.ID))
	requireUnchanged(t, s, alice, kept)

	// The id is free again: the row (and its vector) is really gone.
	again := newMemory(alice, gone.ID, "reinserted")
	mustInsert(t, s, again)
	requireUnchanged(t, s, alice, again)
}

func testForget(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	n := 0
	add := func(sc memgate.Scope, st memgate.Status) {
		n++
		m := newMemory(sc, id(n), "memory")
		m.Status = st
		mustInsert(t, s, m)
	}
	forgotten := 0
	for _, agent := range []string{"", "A", "B"} {
		for _, conv := range []string{"", "c1"} {
			for _, st := range memgate.Statuses {
				add(memgate.Scope{Tenant: "acme", Principal: "alice", Agent: agent, Conversation: conv}, st)
				forgotten++
			}
		}
	}
	add(memgate.Scope{Tenant: "acme", Principal: "bob", Agent: "A"}, memgate.StatusActive)
	add(bob, memgate.StatusRevoked)
	add(memgate.Scope{Tenant: "acme", Principal: "alice2"}, memgate.StatusActive)
	add(aliceGlobex, memgate.StatusActive)
	add(memgate.Scope{Tenant: "globex", Principal: "alice", Agent: "A"}, memgate.StatusPending)

	acmeBefore := countsOf(t, s, acmeAll, now)
	globexBefore := countsOf(t, s, memgate.Scope{Tenant: "globex", AllPrincipals: true}, now)
	if total(countsOf(t, s, alice, now)) != int64(forgotten) {
		t.Fatalf("control: alice has %d memories before Forget, want %d", total(countsOf(t, s, alice, now)), forgotten)
	}

	got, err := s.Forget(t.Context(), "acme", "alice", pseudonymOf("acme", "alice"))
	if err != nil || got != int64(forgotten) {
		t.Fatalf("Forget: %d, %v; want %d", got, err, forgotten)
	}
	requireIDs(t, "List alice", listIDs(t, s, alice, store.Filter{}), []string{})
	if c := countsOf(t, s, alice, now); len(c) != 0 {
		t.Fatalf("Counts of alice after Forget: %v", c)
	}

	wantAcme := map[string]int64{}
	for k, v := range acmeBefore {
		if !strings.HasPrefix(k, "alice/") {
			wantAcme[k] = v
		}
	}
	if after := countsOf(t, s, acmeAll, now); fmt.Sprint(after) != fmt.Sprint(wantAcme) {
		t.Fatalf("acme after Forget: %v, want %v", after, wantAcme)
	}
	if after := countsOf(t, s, memgate.Scope{Tenant: "globex", AllPrincipals: true}, now); fmt.Sprint(after) != fmt.Sprint(globexBefore) {
		t.Fatalf("globex after Forget: %v, want %v", after, globexBefore)
	}

	again, err := s.Forget(t.Context(), "acme", "alice", pseudonymOf("acme", "alice"))
	if err != nil || again != 0 {
		t.Fatalf("second Forget: %d, %v; want 0", again, err)
	}
}

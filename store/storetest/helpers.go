package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Times the suite uses. All have microsecond precision (the engine truncates
// to microseconds before storing), and t0 has a non-zero microsecond part so
// a backend that keeps only milliseconds or seconds fails.
var (
	t0  = time.Date(2025, 6, 1, 12, 0, 0, 123456000, time.UTC)
	t1  = t0.Add(time.Hour + 7*time.Microsecond)
	t2  = t0.Add(2*time.Hour + 11*time.Microsecond)
	now = t0.Add(24 * time.Hour) // "read time" for expiry
)

// Scopes the suite uses. alice and bob share tenant acme; aliceGlobex is
// the same principal name in another tenant.
var (
	alice       = memgate.Scope{Tenant: "acme", Principal: "alice"}
	bob         = memgate.Scope{Tenant: "acme", Principal: "bob"}
	aliceGlobex = memgate.Scope{Tenant: "globex", Principal: "alice"}
	acmeAll     = memgate.Scope{Tenant: "acme", AllPrincipals: true}
)

// missingID is never inserted by any test.
const missingID = "m-missing"

// id returns the i-th test id, "m-001" and so on.
func id(i int) string { return fmt.Sprintf("m-%03d", i) }

// newMemory returns a valid active memory owned by sc (agent and
// conversation included), as the engine would hand it to the store.
func newMemory(sc memgate.Scope, id, content string) *memgate.Memory {
	return &memgate.Memory{
		ID:            id,
		Tenant:        sc.Tenant,
		Principal:     sc.Principal,
		Agent:         sc.Agent,
		Conversation:  sc.Conversation,
		Kind:          memgate.KindFact,
		Source:        memgate.SourceUser,
		Sensitivity:   memgate.SensitivityStandard,
		Status:        memgate.StatusActive,
		Content:       content,
		CreatedAt:     t0,
		UpdatedAt:     t0,
		Version:       1,
		ContentSHA256: memgate.ContentHash(content),
		SeenCount:     1,
	}
}

// newMemories returns n memories of sc with ids m-<from>, m-<from+1>...
func newMemories(sc memgate.Scope, from, n int) []*memgate.Memory {
	ms := make([]*memgate.Memory, n)
	for i := range ms {
		ms[i] = newMemory(sc, id(from+i), fmt.Sprintf("memory number %d", from+i))
	}
	return ms
}

// fullMemory returns a memory with every field set, including nested
// metadata with a number that float64 cannot hold exactly.
func fullMemory(t *testing.T, sc memgate.Scope, id string) *memgate.Memory {
	t.Helper()
	m := newMemory(sc, id, "Prefers the window seat; \"quoted\", 'single', ünïcödé, 日本語\nsecond line")
	m.Agent, m.Conversation = "agent-1", "conv-1"
	m.Kind = memgate.KindPreference
	m.Source = memgate.SourceVerifiedTool
	m.Sensitivity = memgate.SensitivityRestricted
	m.Status = memgate.StatusPending
	m.StatusReason = "instruction-like content from a tool"
	m.Reason = "stated twice in one conversation"
	m.Metadata = metadata(t, `{
		"big": 12345678901234567,
		"neg": -0.000001,
		"float": 3.141592653589793,
		"flag": true,
		"none": null,
		"text": "<b>&amp;</b> \u00e9",
		"list": [1, "two", {"three": 3}],
		"nested": {"deeper": {"deepest": [12345678901234567890, 0.1]}}
	}`)
	m.UpdatedAt = t1
	m.ExpiresAt = ptr(t0.Add(30 * 24 * time.Hour))
	m.ValidFrom = ptr(t0.Add(-365 * 24 * time.Hour))
	m.ValidUntil = ptr(t0.Add(365*24*time.Hour + time.Microsecond))
	m.Version = 7
	m.Supersedes = "m-older"
	m.SupersededBy = "m-newer"
	m.DedupKey = "sig-v1:0f1e2d3c4b5a"
	m.SeenCount = 4
	m.Flags = []string{"instruction_like:role_tag", "ünïcödé \"flag\""}
	m.Feedback = memgate.Feedback{Count: 3, Sum: -0.1 + 0.7 + 1}
	m.CreatedBy, m.UpdatedBy = "key_0123456789abcdef", "key_fedcba9876543210"
	m.ImportedStatus, m.ImportedCreatedBy, m.ImportedUpdatedBy = memgate.StatusActive, "key_file_writer", "cli"
	m.Embedding = &memgate.Embedding{
		Provider: "builtin",
		Model:    "hash-v1",
		Dim:      6,
		Vector:   []float32{0.25, -1, math.SmallestNonzeroFloat32, math.MaxFloat32, float32(math.Copysign(0, -1)), 1.0 / 3},
	}
	return m
}

// metadata decodes a JSON object the way the engine does (exact numbers).
func metadata(t *testing.T, js string) map[string]any {
	t.Helper()
	md, err := memgate.DecodeMetadata([]byte(js))
	if err != nil {
		t.Fatalf("test metadata %s: %v", js, err)
	}
	return md
}

func ptr[T any](v T) *T { return &v }

func mustInsert(t *testing.T, s store.Store, ms ...*memgate.Memory) {
	t.Helper()
	if err := s.Insert(t.Context(), ms); err != nil {
		t.Fatalf("Insert %v: %v", idsOf(ms), err)
	}
}

func mustGet(t *testing.T, s store.Store, sc memgate.Scope, id string) *memgate.Memory {
	t.Helper()
	m, err := s.Get(t.Context(), sc, id)
	if err != nil {
		t.Fatalf("Get %s in %+v: %v", id, sc, err)
	}
	if m == nil {
		t.Fatalf("Get %s in %+v: nil memory and nil error", id, sc)
	}
	return m
}

// requireGone fails unless Get of id in sc answers not_found.
func requireGone(t *testing.T, s store.Store, sc memgate.Scope, id string) {
	t.Helper()
	m, err := s.Get(t.Context(), sc, id)
	requireNotFound(t, fmt.Sprintf("Get %s", id), err)
	if m != nil {
		t.Errorf("Get %s: returned a memory with the error", id)
	}
}

// requireUnchanged fails unless the stored memory equals want.
func requireUnchanged(t *testing.T, s store.Store, sc memgate.Scope, want *memgate.Memory) {
	t.Helper()
	requireEqualMemory(t, "stored "+want.ID, want, mustGet(t, s, sc, want.ID))
}

// requireNotFound fails unless err is exactly memgate.ErrNotFound(): same
// code, field and message, so a foreign id cannot be told from a missing one.
func requireNotFound(t *testing.T, what string, err error) {
	t.Helper()
	requireSameError(t, what, err, memgate.ErrNotFound())
}

// requireSameError fails unless got and want agree in code, field and message.
func requireSameError(t *testing.T, what string, got, want error) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no error, want %s %q", what, memgate.ErrorCode(want), memgate.ErrorMessage(want))
	}
	if memgate.ErrorCode(got) != memgate.ErrorCode(want) ||
		memgate.ErrorField(got) != memgate.ErrorField(want) ||
		memgate.ErrorMessage(got) != memgate.ErrorMessage(want) {
		t.Fatalf("%s: error %s/%s %q, want exactly %s/%s %q", what,
			memgate.ErrorCode(got), memgate.ErrorField(got), memgate.ErrorMessage(got),
			memgate.ErrorCode(want), memgate.ErrorField(want), memgate.ErrorMessage(want))
	}
}

// requireCode fails unless err carries code (and names field, if not "").
func requireCode(t *testing.T, what string, err error, code, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if got := memgate.ErrorCode(err); got != code {
		t.Fatalf("%s: error code %s (%v), want %s", what, got, err, code)
	}
	if field != "" && memgate.ErrorField(err) != field {
		t.Fatalf("%s: error names field %q (%v), want %q", what, memgate.ErrorField(err), err, field)
	}
}

// listAll walks every page of List and returns the memories in order.
func listAll(t *testing.T, s store.Store, sc memgate.Scope, f store.Filter) []*memgate.Memory {
	t.Helper()
	var all []*memgate.Memory
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("List in %+v: more than 10000 pages; the cursor does not advance", sc)
		}
		p, err := s.List(t.Context(), sc, f)
		if err != nil {
			t.Fatalf("List in %+v (%+v): %v", sc, f, err)
		}
		all = append(all, p.Memories...)
		if p.NextCursor == "" {
			return all
		}
		if len(p.Memories) == 0 {
			t.Fatalf("List in %+v: empty page with a next cursor", sc)
		}
		f.Cursor = p.NextCursor
	}
}

// listIDs returns the ids of every memory List returns for sc and f.
func listIDs(t *testing.T, s store.Store, sc memgate.Scope, f store.Filter) []string {
	t.Helper()
	return idsOf(listAll(t, s, sc, f))
}

func idsOf(ms []*memgate.Memory) []string {
	ids := []string{}
	for _, m := range ms {
		if m == nil {
			ids = append(ids, "<nil>")
			continue
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// newestFirst returns ids in reverse order: insertion order is ascending,
// List order is newest first.
func newestFirst(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func requireIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got ids %v, want %v", what, got, want)
	}
}

// requireEqualMemory compares every stored field of two memories: times
// with Equal (and in UTC), metadata as canonical JSON (so exact numbers
// matter), vectors bit for bit. Expired is derived, not stored, and ignored.
func requireEqualMemory(t *testing.T, what string, want, got *memgate.Memory) {
	t.Helper()
	if diffs := diffMemory(want, got); len(diffs) > 0 {
		t.Fatalf("%s: memory differs from what was stored:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

func diffMemory(want, got *memgate.Memory) []string {
	if got == nil {
		return []string{"got nil memory"}
	}
	var d []string
	str := func(name string, w, g any) {
		if w != g {
			d = append(d, fmt.Sprintf("%s: got %q, want %q", name, g, w))
		}
	}
	str("ID", want.ID, got.ID)
	str("Tenant", want.Tenant, got.Tenant)
	str("Principal", want.Principal, got.Principal)
	str("Agent", want.Agent, got.Agent)
	str("Conversation", want.Conversation, got.Conversation)
	str("Kind", want.Kind, got.Kind)
	str("Source", want.Source, got.Source)
	str("Sensitivity", want.Sensitivity, got.Sensitivity)
	str("Status", want.Status, got.Status)
	str("StatusReason", want.StatusReason, got.StatusReason)
	str("Content", want.Content, got.Content)
	str("Reason", want.Reason, got.Reason)
	str("Key", want.Key, got.Key)
	str("Supersedes", want.Supersedes, got.Supersedes)
	str("SupersededBy", want.SupersededBy, got.SupersededBy)
	str("ContentSHA256", want.ContentSHA256, got.ContentSHA256)
	str("DedupKey", want.DedupKey, got.DedupKey)
	str("CreatedBy", want.CreatedBy, got.CreatedBy)
	str("UpdatedBy", want.UpdatedBy, got.UpdatedBy)
	str("ImportedStatus", want.ImportedStatus, got.ImportedStatus)
	str("ImportedCreatedBy", want.ImportedCreatedBy, got.ImportedCreatedBy)
	str("ImportedUpdatedBy", want.ImportedUpdatedBy, got.ImportedUpdatedBy)
	if want.Version != got.Version {
		d = append(d, fmt.Sprintf("Version: got %d, want %d", got.Version, want.Version))
	}
	if want.SeenCount != got.SeenCount {
		d = append(d, fmt.Sprintf("SeenCount: got %d, want %d", got.SeenCount, want.SeenCount))
	}
	// nil and empty flags both mean "no findings".
	if !slices.Equal(want.Flags, got.Flags) {
		d = append(d, fmt.Sprintf("Flags: got %q, want %q", got.Flags, want.Flags))
	}
	if want.Feedback.Count != got.Feedback.Count || math.Float64bits(want.Feedback.Sum) != math.Float64bits(got.Feedback.Sum) {
		d = append(d, fmt.Sprintf("Feedback: got %+v, want %+v", got.Feedback, want.Feedback))
	}

	tm := func(name string, w, g time.Time) {
		if !w.Equal(g) {
			d = append(d, fmt.Sprintf("%s: got %s, want %s", name, g.Format(time.RFC3339Nano), w.Format(time.RFC3339Nano)))
		} else if g.Location() != time.UTC {
			d = append(d, fmt.Sprintf("%s: got location %s, want UTC", name, g.Location()))
		}
	}
	tm("CreatedAt", want.CreatedAt, got.CreatedAt)
	tm("UpdatedAt", want.UpdatedAt, got.UpdatedAt)
	optTm := func(name string, w, g *time.Time) {
		switch {
		case w == nil && g != nil:
			d = append(d, fmt.Sprintf("%s: got %s, want nil", name, g.Format(time.RFC3339Nano)))
		case w != nil && g == nil:
			d = append(d, fmt.Sprintf("%s: got nil, want %s", name, w.Format(time.RFC3339Nano)))
		case w != nil:
			tm(name, *w, *g)
		}
	}
	optTm("ExpiresAt", want.ExpiresAt, got.ExpiresAt)
	optTm("ValidFrom", want.ValidFrom, got.ValidFrom)
	optTm("ValidUntil", want.ValidUntil, got.ValidUntil)

	wm, werr := json.Marshal(want.Metadata)
	gm, gerr := json.Marshal(got.Metadata)
	if werr != nil || gerr != nil || string(wm) != string(gm) {
		d = append(d, fmt.Sprintf("Metadata: got %s (%v), want %s (%v)", gm, gerr, wm, werr))
	}

	switch we, ge := want.Embedding, got.Embedding; {
	case we == nil && ge != nil:
		d = append(d, "Embedding: got one, want nil")
	case we != nil && ge == nil:
		d = append(d, "Embedding: got nil, want one")
	case we != nil:
		str("Embedding.Provider", we.Provider, ge.Provider)
		str("Embedding.Model", we.Model, ge.Model)
		if we.Dim != ge.Dim {
			d = append(d, fmt.Sprintf("Embedding.Dim: got %d, want %d", ge.Dim, we.Dim))
		}
		if len(we.Vector) != len(ge.Vector) {
			d = append(d, fmt.Sprintf("Embedding.Vector: got %d values, want %d", len(ge.Vector), len(we.Vector)))
			break
		}
		for i := range we.Vector {
			if math.Float32bits(we.Vector[i]) != math.Float32bits(ge.Vector[i]) {
				d = append(d, fmt.Sprintf("Embedding.Vector[%d]: got %g, want %g (bits differ)", i, ge.Vector[i], we.Vector[i]))
			}
		}
	}
	return d
}

// countsOf returns Counts as a map "principal/kind/status" → n, failing on
// a duplicate key or a zero count.
func countsOf(t *testing.T, s store.Store, sc memgate.Scope, at time.Time) map[string]int64 {
	t.Helper()
	cs, err := s.Counts(t.Context(), sc, at)
	if err != nil {
		t.Fatalf("Counts in %+v: %v", sc, err)
	}
	out := map[string]int64{}
	for _, c := range cs {
		k := fmt.Sprintf("%s/%s/%s", c.Principal, c.Kind, c.Status)
		if _, dup := out[k]; dup {
			t.Fatalf("Counts in %+v: %s reported twice", sc, k)
		}
		if c.N <= 0 {
			t.Fatalf("Counts in %+v: %s has count %d", sc, k, c.N)
		}
		out[k] = c.N
	}
	return out
}

func total(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}

// cancelled returns a context that is already cancelled.
func cancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// pseudonymOf is a well-formed pseudonym for (tenant, principal), as the
// engine would pass Forget (the store only stores it).
func pseudonymOf(tenant, principal string) string {
	sum := sha256.Sum256([]byte(tenant + "/" + principal))
	return store.PseudonymPrefix + hex.EncodeToString(sum[:16])
}

package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var keyTests = []test{
	{"RoundTrip", testKeyRoundTrip},
	{"HashLookup", testKeyHashLookup},
	{"DuplicateIsConflict", testKeyDuplicate},
	{"ListIsolation", testKeyListIsolation},
	{"RevokeIsolationAndIdempotence", testKeyRevoke},
	{"Count", testKeyCount},
	{"FirstKeyOnlyOnce", testFirstKey},
	{"RefusesInvalidKeys", testKeyInvalid},
}

// newKey returns a valid key record of tenant with the given id and role;
// its hash is that of a secret derived from tenant and id, so every key of
// a test has its own.
func newKey(tenant, id string, role memgate.Role) *memgate.Key {
	k := &memgate.Key{
		ID: id, Tenant: tenant, Role: role,
		CreatedAt: t0, Hash: memgate.ContentHash("secret:" + tenant + ":" + id),
	}
	if role == memgate.RoleUser {
		k.Principal = "alice"
	}
	return k
}

func mustCreateKey(t *testing.T, s store.Store, ks ...*memgate.Key) {
	t.Helper()
	for _, k := range ks {
		if err := s.CreateKey(t.Context(), k); err != nil {
			t.Fatalf("CreateKey %s/%s: %v", k.Tenant, k.ID, err)
		}
	}
}

func requireEqualKey(t *testing.T, what string, want, got *memgate.Key) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: got nil key", what)
	}
	if diffs := diffKey(want, got); diffs != "" {
		t.Fatalf("%s: key differs from what was stored:%s", what, diffs)
	}
}

func diffKey(want, got *memgate.Key) string {
	var d string
	str := func(name string, w, g any) {
		if w != g {
			d += fmt.Sprintf("\n  %s: got %q, want %q", name, g, w)
		}
	}
	str("ID", want.ID, got.ID)
	str("Tenant", want.Tenant, got.Tenant)
	str("Role", want.Role, got.Role)
	str("Principal", want.Principal, got.Principal)
	str("Agent", want.Agent, got.Agent)
	str("Name", want.Name, got.Name)
	str("Hash", want.Hash, got.Hash)
	str("Sources", memgate.JoinSources(want.Sources), memgate.JoinSources(got.Sources))
	if (want.Sources == nil) != (got.Sources == nil) {
		d += fmt.Sprintf("\n  Sources: got %#v, want %#v", got.Sources, want.Sources)
	}
	tm := func(name string, w, g time.Time) {
		if !w.Equal(g) || g.Location() != time.UTC {
			d += fmt.Sprintf("\n  %s: got %s, want %s (UTC)", name, g.Format(time.RFC3339Nano), w.Format(time.RFC3339Nano))
		}
	}
	tm("CreatedAt", want.CreatedAt, got.CreatedAt)
	switch {
	case want.RevokedAt == nil && got.RevokedAt != nil:
		d += "\n  RevokedAt: got " + got.RevokedAt.Format(time.RFC3339Nano) + ", want nil"
	case want.RevokedAt != nil && got.RevokedAt == nil:
		d += "\n  RevokedAt: got nil, want " + want.RevokedAt.Format(time.RFC3339Nano)
	case want.RevokedAt != nil:
		tm("RevokedAt", *want.RevokedAt, *got.RevokedAt)
	}
	return d
}

func keyIDs(ks []*memgate.Key) []string {
	ids := []string{}
	for _, k := range ks {
		ids = append(ids, k.Tenant+"/"+k.ID)
	}
	return ids
}

func listKeyIDs(t *testing.T, s store.Store, tenant string) []string {
	t.Helper()
	ks, err := s.ListKeys(t.Context(), tenant)
	if err != nil {
		t.Fatalf("ListKeys %s: %v", tenant, err)
	}
	if ks == nil {
		t.Fatalf("ListKeys %s: nil slice, want an empty one", tenant)
	}
	return keyIDs(ks)
}

func requireKeyNotFound(t *testing.T, what string, k *memgate.Key, err error) {
	t.Helper()
	requireSameError(t, what, err, store.ErrKeyNotFound())
	if k != nil {
		t.Fatalf("%s: returned a key with the error", what)
	}
}

func testKeyRoundTrip(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	agent := newKey("acme", "key_0123456789abcdef", memgate.RoleAgent)
	agent.Principal, agent.Agent, agent.Name = "alice", "helper-1", "ünïcödé \"support\" bot"
	agent.Sources = []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceVerifiedTool}
	admin := newKey("acme", "key_admin", memgate.RoleAdmin)
	admin.CreatedAt = t1
	user := newKey("acme", "key_user", memgate.RoleUser)
	user.CreatedAt = t2
	in := []*memgate.Key{agent, admin, user}
	var copies []memgate.Key
	for _, k := range in {
		copies = append(copies, *k)
	}
	mustCreateKey(t, s, in...)
	for i, k := range in {
		requireEqualKey(t, "CreateKey input", &copies[i], k) // inputs are not modified
		got, err := s.KeyByHash(t.Context(), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash %s: %v", k.ID, err)
		}
		requireEqualKey(t, "KeyByHash "+k.ID, k, got)
	}
	ks, err := s.ListKeys(t.Context(), "acme")
	if err != nil {
		t.Fatalf("ListKeys: %v", err)
	}
	if len(ks) != len(in) {
		t.Fatalf("ListKeys: %v, want %v", keyIDs(ks), keyIDs(in))
	}
	for i := range in {
		requireEqualKey(t, "ListKeys", in[i], ks[i]) // oldest first
	}
}

func testKeyHashLookup(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	acme := newKey("acme", "key_1", memgate.RoleAdmin)
	globex := newKey("globex", "key_2", memgate.RoleUser)
	mustCreateKey(t, s, acme, globex)

	// Control: each hash finds its own key, in its own tenant.
	for _, k := range []*memgate.Key{acme, globex} {
		got, err := s.KeyByHash(t.Context(), k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash %s: %v", k.ID, err)
		}
		requireEqualKey(t, "KeyByHash", k, got)
	}
	for _, h := range []string{
		memgate.ContentHash("never stored"),
		"",
		acme.Hash[:63],               // a prefix
		acme.Hash + "0",              // an extension
		"%",                          // LIKE syntax
		"' OR 1=1 --",                // SQL syntax
		toUpperHex(acme.Hash),        // another spelling of the same bytes
		acme.ID, acme.Tenant, "acme", // other columns' values
	} {
		k, err := s.KeyByHash(t.Context(), h)
		requireKeyNotFound(t, fmt.Sprintf("KeyByHash %q", h), k, err)
	}
}

func toUpperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func testKeyDuplicate(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	orig := newKey("acme", "key_1", memgate.RoleAdmin)
	mustCreateKey(t, s, orig)

	sameID := newKey("acme", "key_1", memgate.RoleUser)
	sameID.Hash = memgate.ContentHash("another secret")
	sameHashOtherTenant := newKey("globex", "key_9", memgate.RoleAdmin)
	sameHashOtherTenant.Hash = orig.Hash
	for name, k := range map[string]*memgate.Key{"same tenant and id": sameID, "same hash in another tenant": sameHashOtherTenant} {
		err := s.CreateKey(t.Context(), k)
		requireCode(t, "CreateKey with the "+name, err, memgate.ECONFLICT, "")
		// Nothing was stored: the original answers as before, the
		// duplicate's own hash finds nothing.
		got, err := s.KeyByHash(t.Context(), orig.Hash)
		if err != nil {
			t.Fatalf("KeyByHash after a refused duplicate: %v", err)
		}
		requireEqualKey(t, "original after a refused duplicate", orig, got)
		if k.Hash != orig.Hash {
			dup, err := s.KeyByHash(t.Context(), k.Hash)
			requireKeyNotFound(t, "KeyByHash of a refused duplicate", dup, err)
		}
	}
	requireIDs(t, "acme keys", listKeyIDs(t, s, "acme"), []string{"acme/key_1"})
	requireIDs(t, "globex keys", listKeyIDs(t, s, "globex"), []string{})

	// Control: ids are unique per tenant, so the same id in another tenant
	// with its own hash is a different key.
	other := newKey("globex", "key_1", memgate.RoleAdmin)
	mustCreateKey(t, s, other)
	requireIDs(t, "globex keys", listKeyIDs(t, s, "globex"), []string{"globex/key_1"})
}

func testKeyListIsolation(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	a1 := newKey("acme", "key_a1", memgate.RoleAdmin)
	a2 := newKey("acme", "key_a2", memgate.RoleAgent)
	a2.CreatedAt = t1
	g1 := newKey("globex", "key_g1", memgate.RoleAdmin)
	g1.CreatedAt = t0.Add(-time.Hour)
	// acme's prefix, not acme: a LIKE or prefix match would leak it.
	p1 := newKey("acme2", "key_p1", memgate.RoleAdmin)
	mustCreateKey(t, s, a2, g1, a1, p1)
	if _, err := s.RevokeKey(t.Context(), "acme", "key_a2", t2); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}

	// Populated control: acme sees both of its keys, the revoked one too,
	// oldest first.
	requireIDs(t, "ListKeys acme", listKeyIDs(t, s, "acme"), []string{"acme/key_a1", "acme/key_a2"})
	requireIDs(t, "ListKeys globex", listKeyIDs(t, s, "globex"), []string{"globex/key_g1"})
	requireIDs(t, "ListKeys acme2", listKeyIDs(t, s, "acme2"), []string{"acme2/key_p1"})
	for _, tenant := range []string{"initech", "ACME", "acm"} {
		requireIDs(t, "ListKeys "+tenant, listKeyIDs(t, s, tenant), []string{})
	}
	for _, tenant := range []string{"", "%", "a b"} {
		ks, err := s.ListKeys(t.Context(), tenant)
		requireCode(t, fmt.Sprintf("ListKeys %q", tenant), err, memgate.EINVALID, "tenant")
		if ks != nil {
			t.Fatalf("ListKeys %q: returned keys with the error", tenant)
		}
	}
}

func testKeyRevoke(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	acme := newKey("acme", "key_1", memgate.RoleAgent)
	globex := newKey("globex", "key_2", memgate.RoleAdmin)
	mustCreateKey(t, s, acme, globex)

	// Another tenant's key answers exactly like a missing one, and stays
	// valid.
	k, err := s.RevokeKey(t.Context(), "globex", acme.ID, t1)
	requireKeyNotFound(t, "RevokeKey of another tenant's key", k, err)
	k, err = s.RevokeKey(t.Context(), "acme", "key_missing", t1)
	requireKeyNotFound(t, "RevokeKey of a missing key", k, err)
	k, err = s.RevokeKey(t.Context(), "acme", "not an id", t1)
	requireKeyNotFound(t, "RevokeKey of a malformed id", k, err)
	for _, want := range []*memgate.Key{acme, globex} {
		got, err := s.KeyByHash(t.Context(), want.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		requireEqualKey(t, "key after a refused revoke", want, got)
	}

	// Control: the owner revokes; the record keeps everything else.
	want := *acme
	want.RevokedAt = ptr(t1)
	got, err := s.RevokeKey(t.Context(), "acme", acme.ID, t1)
	if err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	requireEqualKey(t, "RevokeKey result", &want, got)
	// Idempotent: the first revocation time stands.
	got, err = s.RevokeKey(t.Context(), "acme", acme.ID, t2)
	if err != nil {
		t.Fatalf("second RevokeKey: %v", err)
	}
	requireEqualKey(t, "second RevokeKey result", &want, got)
	// KeyByHash returns revoked keys: the caller refuses them.
	got, err = s.KeyByHash(t.Context(), acme.Hash)
	if err != nil {
		t.Fatalf("KeyByHash of a revoked key: %v", err)
	}
	requireEqualKey(t, "KeyByHash of a revoked key", &want, got)
	// The other tenant's key is untouched.
	got, err = s.KeyByHash(t.Context(), globex.Hash)
	if err != nil {
		t.Fatalf("KeyByHash: %v", err)
	}
	requireEqualKey(t, "other tenant's key", globex, got)
}

func testKeyCount(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	count := func() int64 {
		t.Helper()
		n, err := s.CountKeys(t.Context())
		if err != nil {
			t.Fatalf("CountKeys: %v", err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("CountKeys of an empty store: %d", n)
	}
	mustCreateKey(t, s, newKey("acme", "key_1", memgate.RoleAdmin), newKey("globex", "key_1", memgate.RoleAdmin))
	if n := count(); n != 2 {
		t.Fatalf("CountKeys: %d, want 2 (every tenant)", n)
	}
	if _, err := s.RevokeKey(t.Context(), "acme", "key_1", t1); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("CountKeys after a revoke: %d, want 2 (revoked keys count)", n)
	}
}

func testKeyInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	cases := []struct {
		name  string
		edit  func(k *memgate.Key)
		field string
	}{
		{"no tenant", func(k *memgate.Key) { k.Tenant = "" }, "tenant"},
		{"no id", func(k *memgate.Key) { k.ID = "" }, "id"},
		{"unknown role", func(k *memgate.Key) { k.Role = "root" }, "role"},
		{"user without principal", func(k *memgate.Key) { k.Role, k.Principal = memgate.RoleUser, "" }, "principal"},
		{"admin bound to a principal", func(k *memgate.Key) { k.Principal = "alice" }, "principal"},
		{"user bound to an agent", func(k *memgate.Key) { k.Role, k.Principal, k.Agent = memgate.RoleUser, "alice", "helper" }, "agent"},
		{"admin bound to an agent", func(k *memgate.Key) { k.Agent = "helper" }, "agent"},
		{"no hash", func(k *memgate.Key) { k.Hash = "" }, "hash"},
		{"upper-case hash", func(k *memgate.Key) { k.Hash = toUpperHex(k.Hash) }, "hash"},
		{"no created_at", func(k *memgate.Key) { k.CreatedAt = time.Time{} }, "created_at"},
		{"unknown source", func(k *memgate.Key) { k.Sources = []memgate.Source{"user", "root"} }, "sources[1]"},
		{"repeated source", func(k *memgate.Key) { k.Sources = []memgate.Source{"tool", "tool"} }, "sources[1]"},
		{"source with a comma", func(k *memgate.Key) { k.Sources = []memgate.Source{"user,system"} }, "sources[0]"},
	}
	for _, tc := range cases {
		k := newKey("acme", "key_1", memgate.RoleAdmin)
		tc.edit(k)
		err := s.CreateKey(t.Context(), k)
		requireCode(t, "CreateKey "+tc.name, err, memgate.EINVALID, tc.field)
	}
	if n, err := s.CountKeys(t.Context()); err != nil || n != 0 {
		t.Fatalf("CountKeys after refused keys: %d, %v; want 0", n, err)
	}
	// Control: the unedited key is accepted.
	mustCreateKey(t, s, newKey("acme", "key_1", memgate.RoleAdmin))
}

// testFirstKey: of several concurrent first starts, exactly one stores its
// key; once any key exists (revoked too), none does.
func testFirstKey(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const n = 6
	var wg sync.WaitGroup
	created := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created[i], errs[i] = s.CreateFirstKey(t.Context(), newKey("default", fmt.Sprintf("key_%d", i), memgate.RoleAdmin))
		}()
	}
	wg.Wait()
	won := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("CreateFirstKey %d: %v", i, errs[i])
		}
		if created[i] {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent first keys stored, want exactly 1", won)
	}
	if c, err := s.CountKeys(t.Context()); err != nil || c != 1 {
		t.Fatalf("CountKeys after the race: %d, %v", c, err)
	}
	// A store whose only key is revoked gets no new first key.
	s2 := newStore(t)
	mustCreateKey(t, s2, newKey("acme", "key_old", memgate.RoleAdmin))
	if _, err := s2.RevokeKey(t.Context(), "acme", "key_old", t1); err != nil {
		t.Fatal(err)
	}
	if ok, err := s2.CreateFirstKey(t.Context(), newKey("default", "key_new", memgate.RoleAdmin)); err != nil || ok {
		t.Fatalf("CreateFirstKey beside a revoked key: %v, %v", ok, err)
	}
}

package storetest

import (
	"slices"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var tenantsTests = []test{
	{"EveryTableOnceInByteOrder", testTenants},
}

// testTenants: a tenant counts whether it has memories, audit events or
// only keys; each is listed once, in byte order ("Z" before "a"); an empty
// store has none (an empty list, not nil), nor does a store whose only
// memories of a tenant were forgotten list that tenant.
func testTenants(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	got, err := s.Tenants(ctx)
	if err != nil {
		t.Fatalf("Tenants of an empty store: %v", err)
	}
	if got == nil || len(got) != 0 {
		t.Fatalf("Tenants of an empty store = %#v, want an empty list", got)
	}

	mem := memgate.Scope{Tenant: "mem", Principal: "alice"}
	mustInsert(t, s, newMemory(mem, id(1), "one"), newMemory(mem, id(2), "two"))
	mustInsert(t, s, newMemory(memgate.Scope{Tenant: "Zeta", Principal: "bob"}, id(1), "three"))
	mustAppend(t, s, event("audit", 1), event("audit", 2), event("mem", 3))
	if err := s.CreateKey(ctx, newKey("keys", "key-1", memgate.RoleAdmin)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, newKey("mem", "key-2", memgate.RoleAdmin)); err != nil {
		t.Fatal(err)
	}
	got, err = s.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Zeta", "audit", "keys", "mem"}; !slices.Equal(got, want) {
		t.Fatalf("Tenants = %q, want %q", got, want)
	}

	// A tenant whose only memories are forgotten has nothing left: it is
	// no longer listed, until it has data again.
	if _, err := s.Forget(ctx, "Zeta", "bob", pseudonymOf("Zeta", "bob")); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Tenants(ctx); err != nil || !slices.Equal(got, []string{"audit", "keys", "mem"}) {
		t.Fatalf("after Forget: Tenants = %q, %v; want [audit keys mem]", got, err)
	}
	mustAppend(t, s, event("Zeta", 4))
	if got, err = s.Tenants(ctx); err != nil || !slices.Equal(got, []string{"Zeta", "audit", "keys", "mem"}) {
		t.Fatalf("after an audit event: Tenants = %q, %v; want Zeta listed again", got, err)
	}
}

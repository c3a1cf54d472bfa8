package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// TestLookupsSeeOtherWriters: the reads every request makes by key, an API
// key by its hash and a partition's head, go through the lookup
// connections (sqlstore's lookupRow), and must see what another process
// committed before them, at once: a key revoked by the CLI stops working,
// and a recall after another replica's write catches up to it. b is a
// second handle on a's file, as another process holds it. Each read has
// its control before the write.
func TestLookupsSeeOtherWriters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memgate.db")
	a := openTest(t, path)
	b := openTest(t, path)

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := &memgate.Key{ID: "key_1", Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Hash: fmt.Sprintf("%064x", 1), CreatedAt: at}
	if _, err := b.KeyByHash(ctx, k.Hash); err == nil {
		t.Fatal("control: a key not yet created was found")
	}
	if err := a.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	got, err := b.KeyByHash(ctx, k.Hash)
	if err != nil || got.ID != k.ID || got.RevokedAt != nil {
		t.Fatalf("the other handle's new key: %+v, %v", got, err)
	}
	if _, err := a.RevokeKey(ctx, "acme", k.ID, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.KeyByHash(ctx, k.Hash); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("the key the other handle revoked: %+v, %v; want it revoked", got, err)
	}

	before, err := b.PartitionHead(ctx, "acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := a.Insert(ctx, []*memgate.Memory{testMemory(fmt.Sprintf("m%d", i), "a memory")}); err != nil {
			t.Fatal(err)
		}
		head, err := b.PartitionHead(ctx, "acme", "alice")
		if err != nil || head <= before {
			t.Fatalf("head after the other handle's write %d: %d (%v), want past %d", i, head, err, before)
		}
		before = head
	}
	if head, err := b.PartitionHead(ctx, "acme", "nobody"); err != nil || head != 0 {
		t.Fatalf("the head of a partition never written: %d, %v; want 0", head, err)
	}
}

// TestLookupsHonourADoneContext: a request whose deadline has passed fails
// its reads by key, as database/sql fails a query, although a lookup
// connection is free (the pool's get could take either); with a live
// context, the control, they answer.
func TestLookupsHonourADoneContext(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	k := &memgate.Key{ID: "key_1", Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Hash: fmt.Sprintf("%064x", 1),
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := db.CreateKey(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	if _, err := db.KeyByHash(t.Context(), k.Hash); err != nil {
		t.Fatalf("control: %v", err)
	}
	if _, err := db.PartitionHead(t.Context(), "acme", "alice"); err != nil {
		t.Fatalf("control: %v", err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for i := range 20 { // the pool's select chose at random
		if _, err := db.KeyByHash(done, k.Hash); err == nil {
			t.Fatalf("try %d: KeyByHash with a done context succeeded", i)
		}
		if _, err := db.PartitionHead(done, "acme", "alice"); err == nil {
			t.Fatalf("try %d: PartitionHead with a done context succeeded", i)
		}
	}
}

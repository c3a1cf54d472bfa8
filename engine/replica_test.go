package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/engine/enginetest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// Two engines over one SQLite file, each with its own connections: two
// processes sharing the file.
func TestReplicas(t *testing.T) {
	t.Parallel()
	enginetest.RunReplicas(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "m.db")
		return openSQLite(t, path), openSQLite(t, path)
	})
}

func openSQLite(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Sweep prunes the records of deletions older than ChangeRetention, and
// only those.
func TestSweepPrunesChanges(t *testing.T) {
	t.Parallel()
	db := openSQLite(t, filepath.Join(t.TempDir(), "m.db"))
	clk := &clock{t: time.Now()}
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New(), Now: clk.Now, ChangeRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m, err := eng.Remember(ctx, memgate.RememberRequest{Memory: memgate.Memory{Tenant: "t", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "to be deleted"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Delete(ctx, m.Scope(), m.ID); err != nil {
		t.Fatal(err)
	}
	reset := func() bool {
		t.Helper()
		ch, err := db.ChangesSince(ctx, "t", "alice", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ch.Reset
	}
	if _, err := eng.Sweep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if reset() {
		t.Fatal("a deletion younger than the retention was pruned")
	}
	clk.Add(2 * time.Hour)
	if _, err := eng.Sweep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !reset() {
		t.Fatal("a deletion older than the retention was kept")
	}
}

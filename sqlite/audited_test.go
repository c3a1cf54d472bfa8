package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// RememberAudited commits a write and its audit events together: with a
// valid event both are there, with an event the store refuses neither is
// (the write fails whole).
func TestRememberAuditedIsOneTransaction(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	ctx := t.Context()
	events := func(action string) func(*store.WriteResult) []store.AuditEvent {
		return func(res *store.WriteResult) []store.AuditEvent {
			return []store.AuditEvent{{Tenant: "acme", Principal: "alice", Actor: "test", Action: action, At: time.Now(), MemoryIDs: []string{res.Memories[0].ID}}}
		}
	}
	remembered := func(id string) bool {
		t.Helper()
		_, err := db.Get(ctx, alice, id)
		if err != nil && memgate.ErrorCode(err) != memgate.ENOTFOUND {
			t.Fatal(err)
		}
		return err == nil
	}
	audited := func(id string) int {
		t.Helper()
		p, err := db.ListAudit(ctx, "acme", memgate.AuditFilter{MemoryID: id})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Events)
	}
	// Control: the memory and its event.
	if _, err := db.RememberAudited(ctx, []*memgate.Memory{testMemory("m-ok", "the shed key hangs by the door")}, nil, events("remember")); err != nil {
		t.Fatal(err)
	}
	if !remembered("m-ok") || audited("m-ok") != 1 {
		t.Fatalf("control: stored %v, %d events; want stored and 1 event", remembered("m-ok"), audited("m-ok"))
	}
	// An event the store refuses (no action): nothing is stored.
	if _, err := db.RememberAudited(ctx, []*memgate.Memory{testMemory("m-bad", "the boat key hangs by the window")}, nil, events("")); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("a refused event: %v, want invalid_argument", err)
	}
	if remembered("m-bad") || audited("m-bad") != 0 {
		t.Fatalf("a write whose event was refused: stored %v, %d events; want neither", remembered("m-bad"), audited("m-bad"))
	}
	// Remember is RememberAudited without events.
	if _, err := db.Remember(ctx, []*memgate.Memory{testMemory("m-plain", "the car key hangs by the stairs")}, nil); err != nil || !remembered("m-plain") || audited("m-plain") != 0 {
		t.Fatalf("Remember: %v, stored %v, %d events", err, remembered("m-plain"), audited("m-plain"))
	}
}

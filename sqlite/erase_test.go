package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// Markers planted in what a person's memories hold: every one must be gone
// from the database file, its write-ahead log and its shared-memory file
// once forget (or delete) returns.
const (
	contentMarker  = "zqxvbnmarkercontent"
	reasonMarker   = "zqxvbnmarkerreason"
	metaMarker     = "zqxvbnmarkermeta"
	deleteMarker   = "zqxvbnmarkerdeleted"
	principalName  = "zqxvbn-principal-aurelia"
	idemKeyMarker  = "zqxvbn-idem-key"
	agentMarker    = "zqxvbn-agent-aurelias-coach"
	convMarker     = "zqxvbn-conversation-aurelia"
	deleteIdem     = "zqxvbn-deleted-idem-key"
	otherPrincipal = "bob"
)

// syncBuffer captures log lines (or output) written while a test reads them.
type syncBuffer = logtest.Buffer

// files returns the bytes of the database's six files (a missing one,
// such as a WAL truncated away, is empty).
func files(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range sqlite.Files(path) {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// holding reports which files hold marker.
func holding(fs map[string][]byte, marker string) []string {
	var in []string
	for name, b := range fs {
		if bytes.Contains(b, []byte(marker)) {
			in = append(in, name)
		}
	}
	return in
}

// TestForgetErasesBytes: after forget returns, no byte of the person's
// memories (content, reason, metadata, idempotency keys) and not their
// identifier is left in the SQLite database, WAL or shared-memory file,
// nor in the engine's log lines; the audit log keeps the events under the
// pseudonym. After delete returns, the deleted memory's content is gone
// too. The populated control: before forget the markers are in the files
// (so the search can find them), and another person's memory stays.
func TestForgetErasesBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	logs := &syncBuffer{}
	eng, err := engine.New(engine.Config{Store: db, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx = engine.WithActor(ctx, "key_test")

	remember := func(principal, content, idem string) *engine.Remembered {
		t.Helper()
		reason, meta, agent, conv := "she said so "+reasonMarker, metaMarker, agentMarker, convMarker
		if principal == otherPrincipal {
			reason, meta, agent, conv = "he said so", "plain", "helper", "c1"
		}
		r, err := eng.Remember(ctx, engine.RememberRequest{
			Memory: memgate.Memory{Tenant: "acme", Principal: principal, Agent: agent, Conversation: conv, Kind: memgate.KindFact, Source: memgate.SourceUser,
				Content: content, Reason: reason, Metadata: map[string]any{"note": meta}},
			IdempotencyKey: idem,
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := range 40 {
		remember(principalName, fmt.Sprintf("Aurelia keeps %d beehives on the roof %s.", i, contentMarker), fmt.Sprintf("%s-%d", idemKeyMarker, i))
	}
	doomed := remember(principalName, "Aurelia's old locker code note "+deleteMarker+".", deleteIdem)
	bobs := remember(otherPrincipal, "Bob keeps a small vegetable garden.", "")
	if _, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: "acme", Principal: principalName}, Query: "How many beehives does Aurelia keep?"}); err != nil {
		t.Fatal(err)
	}

	// Control: the markers are there to find.
	before := files(t, path)
	for _, m := range []string{contentMarker, reasonMarker, metaMarker, deleteMarker, principalName, idemKeyMarker, agentMarker, convMarker, deleteIdem} {
		if len(holding(before, m)) == 0 {
			t.Fatalf("control: %q is in none of the files before forget", m)
		}
	}

	// The hash of the request the doomed memory's record keeps.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var requestHash string
	err = raw.QueryRow("SELECT request_sha256 FROM idempotency_keys WHERE key = ?", deleteIdem).Scan(&requestHash)
	raw.Close()
	if err != nil || len(holding(before, requestHash)) == 0 {
		t.Fatalf("control: the record of the doomed memory's request: %q, %v", requestHash, err)
	}

	// Delete one memory: its content goes, the others stay.
	if err := eng.Delete(ctx, memgate.Scope{Tenant: "acme", Principal: principalName}, doomed.ID); err != nil {
		t.Fatal(err)
	}
	afterDelete := files(t, path)
	if in := holding(afterDelete, deleteMarker); len(in) != 0 {
		t.Fatalf("after delete, the deleted content is still in %v", in)
	}
	// Nor its idempotency record: the key, and the request's hash, which
	// would confirm a guessed content.
	if in := holding(afterDelete, deleteIdem); len(in) != 0 {
		t.Fatalf("after delete, the deleted memory's idempotency key is still in %v", in)
	}
	if in := holding(afterDelete, requestHash); len(in) != 0 {
		t.Fatalf("after delete, the hash of the deleted memory's request is still in %v", in)
	}
	if len(holding(afterDelete, contentMarker)) == 0 {
		t.Fatal("control: delete of one memory erased the others' content")
	}

	rc, err := eng.Forget(ctx, memgate.Scope{Tenant: "acme", Principal: principalName})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Forgotten != 40 || !strings.HasPrefix(rc.AuditPrincipal, "forgotten:") {
		t.Fatalf("forget receipt %+v", rc)
	}
	after := files(t, path)
	for _, m := range []string{contentMarker, reasonMarker, metaMarker, deleteMarker, principalName, idemKeyMarker, agentMarker, convMarker, deleteIdem} {
		if in := holding(after, m); len(in) != 0 {
			t.Errorf("after forget, %q is still in %v", m, in)
		}
	}
	// Control: another person's memory is untouched.
	if _, err := eng.Get(ctx, memgate.Scope{Tenant: "acme", Principal: otherPrincipal}, bobs.ID); err != nil {
		t.Fatalf("bob's memory after aurelia's forget: %v", err)
	}
	if len(holding(after, "vegetable garden")) == 0 {
		t.Fatal("control: bob's content is gone from the files")
	}

	// The audit log keeps what happened, under the pseudonym only.
	page, err := eng.Audit(ctx, memgate.Scope{Tenant: "acme", Principal: rc.AuditPrincipal}, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]bool{}
	for _, ev := range page.Events {
		actions[ev.Action] = true
	}
	for _, a := range []string{engine.ActionRemember, engine.ActionRecall, engine.ActionDelete, engine.ActionForget} {
		if !actions[a] {
			t.Errorf("the audit log under the pseudonym lacks %s: %v", a, actions)
		}
	}
	if page, err := eng.Audit(ctx, memgate.Scope{Tenant: "acme", Principal: principalName}, store.AuditFilter{}); err != nil || len(page.Events) != 0 {
		t.Fatalf("audit events still under the principal's name: %+v, %v", page, err)
	}

	// The logs never named the person: pseudonyms only.
	if l := logs.String(); strings.Contains(l, principalName) || strings.Contains(l, agentMarker) || strings.Contains(l, convMarker) || !strings.Contains(l, `"principal":"p_`) {
		t.Fatalf("the engine's log lines name the principal, or name no pseudonym:\n%s", l)
	}

	// Written again, the partition works as new.
	again := remember(principalName, "Aurelia starts over with one hive.", "")
	off := 0.0
	res, err := eng.Recall(ctx, engine.RecallRequest{Scope: memgate.Scope{Tenant: "acme", Principal: principalName}, Query: "Aurelia hive", MinScore: &off})
	if err != nil || len(res.Results) != 1 || res.Results[0].Memory.ID != again.ID {
		t.Fatalf("recall after forget and a new memory: %+v, %v", res, err)
	}
}

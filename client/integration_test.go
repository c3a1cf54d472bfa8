package client_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/sqlite"
)

// liveServer is the real API over a real SQLite store on a loopback
// listener; keys are minted straight into its store.
type liveServer struct {
	url string
	db  *sqlite.DB
}

func newLiveServer(t *testing.T) *liveServer {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
		db.Close()
	})
	return &liveServer{url: srv.URL, db: db}
}

// client mints a key with k's tenant, role and binding and returns a
// client that uses it.
func (s *liveServer) client(t *testing.T, k memgate.Key) *client.Client {
	t.Helper()
	secret, rec, err := auth.NewKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.CreateKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.url, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func requireCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if memgate.ErrorCode(err) != code {
		t.Fatalf("%s: %v (%s), want %s", what, err, memgate.ErrorCode(err), code)
	}
}

func TestAgainstTheServer(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	ctx := t.Context()
	admin := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin})
	// An agent that relays what people say: granted user at creation.
	relay := []memgate.Source{memgate.SourceUser, memgate.SourceAssistant, memgate.SourceTool}
	agent := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Agent: "helper", Sources: relay})
	user := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	globex := s.client(t, memgate.Key{Tenant: "globex", Role: memgate.RoleAdmin})
	alice := client.Scope{Principal: "alice"}

	if err := admin.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}

	// Remember: single, batch, a duplicate, one held for approval.
	tea, err := agent.Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindPreference, Source: memgate.SourceUser,
		Content: "Alice drinks green tea without sugar.", Metadata: map[string]any{"topic": "drinks"}})
	if err != nil {
		t.Fatalf("Remember: %v", err)
	}
	if tea.Status != memgate.StatusActive || tea.Agent != "helper" || tea.Tenant != "acme" || tea.Version != 1 {
		t.Fatalf("Remember: %+v", tea.Memory)
	}
	batch, err := agent.RememberBatch(ctx, []client.Memory{
		{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice lives in Lisbon."},
		{Principal: "alice", Kind: memgate.KindPreference, Source: memgate.SourceUser, Content: "Alice drinks green tea without sugar."},
		{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: "Alice is allergic to peanuts."},
	})
	if err != nil {
		t.Fatalf("RememberBatch: %v", err)
	}
	if !batch[1].Deduplicated || batch[1].ID != tea.ID || batch[2].Status != memgate.StatusPending || batch[2].StatusReason == "" {
		t.Fatalf("RememberBatch: dedup %v (%s vs %s), third %s %q", batch[1].Deduplicated, batch[1].ID, tea.ID, batch[2].Status, batch[2].StatusReason)
	}
	lisbon, peanuts := batch[0], batch[2]
	_, err = agent.RememberBatch(ctx, []client.Memory{
		{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "fine"},
		{Principal: "alice", Kind: "opinion", Source: memgate.SourceUser, Content: "bad kind"},
	})
	requireCode(t, "RememberBatch with a bad item", err, memgate.EINVALID)
	if f := memgate.ErrorField(err); !strings.HasPrefix(f, "memories[1]") {
		t.Fatalf("RememberBatch with a bad item names %q", f)
	}
	// A user key writes as the person (source user) and nothing else.
	_, err = user.Remember(ctx, client.Memory{Kind: memgate.KindFact, Source: memgate.SourceSystem, Content: "Alice is an administrator."})
	requireCode(t, "Remember as system with a user key", err, memgate.EFORBIDDEN)
	if own, err := user.Remember(ctx, client.Memory{Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice keeps bees."}); err != nil || own.Principal != "alice" {
		t.Fatalf("Remember as the person with a user key: %+v, %v", own, err)
	}

	// Recall.
	res, err := agent.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "What does Alice drink?", Explain: true})
	if err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if len(res.Results) == 0 || res.Results[0].Memory.ID != tea.ID || res.Results[0].Explain == nil || res.RecallID == "" {
		t.Fatalf("Recall: %+v", res)
	}
	for _, h := range res.Results {
		if h.Memory.ID == peanuts.ID {
			t.Fatal("Recall returned a pending memory")
		}
	}
	_, err = agent.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "tea", K: 1000})
	requireCode(t, "Recall with k out of range", err, memgate.EINVALID)

	// List and Get, and another tenant's view of the same id.
	// Tea, Lisbon and the bees the person wrote herself.
	page, err := user.List(ctx, client.ListRequest{Statuses: []memgate.Status{memgate.StatusActive}})
	if err != nil || len(page.Memories) != 3 {
		t.Fatalf("List by the user: %+v, %v", page, err)
	}
	if m, err := user.Get(ctx, client.Scope{}, tea.ID); err != nil || m.Content != tea.Content {
		t.Fatalf("Get by the user: %v, %v", m, err)
	}
	_, foreign := globex.Get(ctx, alice, tea.ID)
	_, missing := globex.Get(ctx, alice, "m_00000000000000000000000000")
	requireCode(t, "Get from another tenant", foreign, memgate.ENOTFOUND)
	if memgate.ErrorMessage(foreign) != memgate.ErrorMessage(missing) || memgate.ErrorCode(missing) != memgate.ENOTFOUND {
		t.Fatalf("another tenant's id %v and a missing id %v answer differently", foreign, missing)
	}
	_, err = user.Get(ctx, client.Scope{Principal: "bob"}, tea.ID)
	requireCode(t, "Get outside the user's principal", err, memgate.EFORBIDDEN)

	// Update with compare-and-set.
	content := "Alice drinks oolong tea."
	up, err := agent.Update(ctx, alice, tea.ID, 1, client.Patch{Content: &content})
	if err != nil || up.Version != 2 || up.Content != content {
		t.Fatalf("Update: %+v, %v", up, err)
	}
	_, err = agent.Update(ctx, alice, tea.ID, 1, client.Patch{Content: &content})
	requireCode(t, "Update from a stale version", err, memgate.ECONFLICT)

	// Approve, reject, feedback, revoke.
	if m, err := admin.Approve(ctx, alice, peanuts.ID, peanuts.Version); err != nil || m.Status != memgate.StatusActive {
		t.Fatalf("Approve: %+v, %v", m, err)
	}
	_, err = agent.Approve(ctx, alice, peanuts.ID, peanuts.Version)
	requireCode(t, "Approve with an agent key", err, memgate.EFORBIDDEN)
	held, err := agent.Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceTool, Content: "Alice owns a boat."})
	if err != nil || held.Status != memgate.StatusPending {
		t.Fatalf("Remember from a tool: %+v, %v", held, err)
	}
	if m, err := admin.Reject(ctx, alice, held.ID, held.Version, "not true"); err != nil || m.Status != memgate.StatusRevoked || m.StatusReason != "not true" {
		t.Fatalf("Reject: %+v, %v", m, err)
	}
	if m, err := agent.Feedback(ctx, alice, lisbon.ID, 0.75); err != nil || m.Feedback.Count != 1 {
		t.Fatalf("Feedback: %+v, %v", m, err)
	}
	_, err = agent.Feedback(ctx, alice, lisbon.ID, 2)
	requireCode(t, "Feedback out of range", err, memgate.EINVALID)
	if m, err := user.Revoke(ctx, client.Scope{}, lisbon.ID, "moved"); err != nil || m.Status != memgate.StatusRevoked {
		t.Fatalf("Revoke: %+v, %v", m, err)
	}

	// Audit and stats.
	audit, err := admin.Audit(ctx, client.AuditRequest{MemoryID: tea.ID})
	if err != nil || len(audit.Events) < 2 {
		t.Fatalf("Audit: %+v, %v", audit, err)
	}
	if recalls, err := user.Audit(ctx, client.AuditRequest{Action: "recall"}); err != nil || len(recalls.Events) != 1 || recalls.Events[0].RecallID != res.RecallID {
		t.Fatalf("Audit of recalls by the user: %+v, %v", recalls, err)
	}
	st, err := admin.Stats(ctx, client.Scope{})
	if err != nil || st.Tenant != "acme" || st.Total != 5 || st.ByStatus["revoked"] != 2 {
		t.Fatalf("Stats: %+v, %v", st, err)
	}
	if st, err := globex.Stats(ctx, client.Scope{}); err != nil || st.Total != 0 {
		t.Fatalf("Stats of another tenant: %+v, %v", st, err)
	}

	// Export from one tenant, import into another.
	var jsonl bytes.Buffer
	if _, err := admin.Export(ctx, client.Scope{}, &jsonl); err != nil || strings.Count(jsonl.String(), "\n") != 5 {
		t.Fatalf("Export: %v\n%s", err, jsonl.String())
	}
	// A line may name only the importing tenant: drop acme's name.
	moved := strings.ReplaceAll(jsonl.String(), `"tenant":"acme",`, "")
	if strings.Contains(moved, "acme") {
		t.Fatalf("export shape changed: %s", jsonl.String())
	}
	imp, err := globex.Import(ctx, strings.NewReader(moved))
	if err != nil || imp.Imported != 5 {
		t.Fatalf("Import: %+v, %v", imp, err)
	}
	if m, err := globex.Get(ctx, alice, tea.ID); err != nil || m.Tenant != "globex" {
		t.Fatalf("Get of the imported copy: %+v, %v", m, err)
	}

	// Delete and forget, by the user, in acme only.
	if err := user.Delete(ctx, client.Scope{}, peanuts.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err = user.Get(ctx, client.Scope{}, peanuts.ID)
	requireCode(t, "Get after Delete", err, memgate.ENOTFOUND)
	rc, err := user.Forget(ctx, "")
	if err != nil || rc.Forgotten != 4 || rc.Principal != "alice" || rc.Tenant != "acme" {
		t.Fatalf("Forget: %+v, %v", rc, err)
	}
	if st, err := globex.Stats(ctx, client.Scope{}); err != nil || st.Total != 5 {
		t.Fatalf("another tenant's memories after forget: %+v, %v", st, err)
	}
}

func TestRevokedKeyIsUnauthenticated(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	secret, rec, err := auth.NewKey(memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.CreateKey(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	c, _ := client.New(s.url, secret)
	if _, err := c.Stats(t.Context(), client.Scope{}); err != nil {
		t.Fatalf("control: %v", err)
	}
	if _, err := s.db.RevokeKey(t.Context(), "acme", rec.ID, memgate.Now(rec.CreatedAt.Add(1))); err != nil {
		t.Fatal(err)
	}
	_, err = c.Stats(t.Context(), client.Scope{})
	requireCode(t, "Stats with a revoked key", err, memgate.EUNAUTHORIZED)
	bad, _ := client.New(s.url, "mgk_"+strings.Repeat("x", 43))
	_, err2 := bad.Stats(t.Context(), client.Scope{})
	if memgate.ErrorMessage(err) != memgate.ErrorMessage(err2) {
		t.Fatalf("a revoked key %q and an unknown key %q answer differently", err, err2)
	}
}

// TestInspectorCallsAgainstTheServer: whoami, a user key's stats, the
// recall history chart and recall preview, through the client against the
// real server.
func TestInspectorCallsAgainstTheServer(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	ctx := t.Context()
	admin := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAdmin, Name: "ops"})
	agent := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Agent: "helper"})
	user := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})

	// Whoami: each key its own grant.
	for name, tc := range map[string]struct {
		c          *client.Client
		role       memgate.Role
		principal  string
		tenantWide bool
		restricted bool
	}{
		"admin": {admin, memgate.RoleAdmin, "", true, true},
		"agent": {agent, memgate.RoleAgent, "alice", false, false},
		"user":  {user, memgate.RoleUser, "alice", false, true},
	} {
		g, err := tc.c.Whoami(ctx)
		if err != nil {
			t.Fatalf("Whoami %s: %v", name, err)
		}
		if g.Tenant != "acme" || g.Role != tc.role || g.Principal != tc.principal || g.TenantWide != tc.tenantWide || g.MayIncludeRestricted != tc.restricted ||
			!strings.HasPrefix(g.KeyID, auth.IDPrefix) || !slices.Equal(g.Operations, auth.AllowedOps(tc.role)) {
			t.Fatalf("Whoami %s: %+v", name, g)
		}
	}
	if g, _ := admin.Whoami(ctx); g.Name != "ops" {
		t.Fatalf("Whoami of the admin: name %q", g.Name)
	}

	// Memories of alice and bob; the user key counts alice's only.
	for _, m := range []client.Memory{
		{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Biscuit the dog needs his rabies vaccination renewed every year at the vet."},
		{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice adopted a golden retriever puppy named Biscuit in March."},
		{Principal: "bob", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Bob plays the cello."},
	} {
		if _, err := admin.Remember(ctx, m); err != nil {
			t.Fatalf("Remember: %v", err)
		}
	}
	st, err := user.Stats(ctx, client.Scope{})
	if err != nil || st.Total != 2 || st.Principal != "alice" || len(st.ByPrincipal) != 1 {
		t.Fatalf("Stats by the user: %+v, %v", st, err)
	}
	_, err = user.Stats(ctx, client.Scope{Principal: "bob"})
	requireCode(t, "Stats of another principal by the user", err, memgate.EFORBIDDEN)
	if memgate.ErrorField(err) != "principal" {
		t.Fatalf("Stats of another principal names %q", memgate.ErrorField(err))
	}
	if st, err := admin.Stats(ctx, client.Scope{Principal: "bob"}); err != nil || st.Total != 1 {
		t.Fatalf("control: bob's stats by the admin: %+v, %v", st, err)
	}

	// A recall and a preview: the preview lists what the floor kept out,
	// and the chart counts the recall only.
	floor := 0.7
	req := client.RecallRequest{Query: "rabies vaccination for Biscuit", MinScore: &floor, Render: true}
	res, err := agent.Recall(ctx, req)
	if err != nil || len(res.Results) != 1 || res.BelowFloorResults != nil {
		t.Fatalf("Recall: %+v, %v", res, err)
	}
	req.Preview = true
	pre, err := user.Recall(ctx, req)
	if err != nil || len(pre.Results) != 1 || pre.Results[0].Memory.ID != res.Results[0].Memory.ID || len(pre.BelowFloorResults) != 1 {
		t.Fatalf("Recall preview: %+v, %v", pre, err)
	}
	if b := pre.BelowFloorResults[0]; b.Score >= floor || b.Score <= 0 || b.Explain == nil || strings.Contains(pre.Context, b.Memory.ID) {
		t.Fatalf("below the floor: %+v (context %q)", b, pre.Context)
	}
	total := func(hg *engine.AuditHistogram) (n int64) {
		for _, b := range hg.Buckets {
			n += b.Count
		}
		return n
	}
	for name, tc := range map[string]struct {
		c    *client.Client
		req  client.AuditHistogramRequest
		want int64
	}{
		"recalls of the tenant":  {admin, client.AuditHistogramRequest{}, 1},
		"recalls of alice":       {user, client.AuditHistogramRequest{Bucket: time.Hour}, 1},
		"previews of alice":      {user, client.AuditHistogramRequest{Action: engine.ActionRecallPreview}, 1},
		"recalls of bob":         {admin, client.AuditHistogramRequest{Principal: "bob"}, 0},
		"recalls of last year's": {admin, client.AuditHistogramRequest{To: time.Now().AddDate(-1, 0, 0)}, 0},
	} {
		hg, err := tc.c.AuditHistogram(ctx, tc.req)
		if err != nil || total(hg) != tc.want {
			t.Fatalf("AuditHistogram, %s: %+v, %v; want %d", name, hg, err, tc.want)
		}
	}
	_, err = user.AuditHistogram(ctx, client.AuditHistogramRequest{Principal: "bob"})
	requireCode(t, "AuditHistogram of another principal by the user", err, memgate.EFORBIDDEN)
	_, err = agent.AuditHistogram(ctx, client.AuditHistogramRequest{})
	requireCode(t, "AuditHistogram by an agent key", err, memgate.EFORBIDDEN)
	_, err = admin.AuditHistogram(ctx, client.AuditHistogramRequest{From: time.Now().AddDate(-2, 0, 0)})
	requireCode(t, "AuditHistogram of two years by day", err, memgate.EINVALID)
	if memgate.ErrorField(err) != "from" {
		t.Fatalf("AuditHistogram of two years names %q", memgate.ErrorField(err))
	}
}

// TestRememberRetriedWithIdempotencyKey: a retry with the same key stores
// nothing twice, in one call and in a batch; another key stores.
func TestRememberRetriedWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	ctx := t.Context()
	agent := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Sources: []memgate.Source{memgate.SourceUser}})
	m := client.Memory{Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice has a cat named Miso."}
	first, err := agent.Remember(ctx, m, client.IdempotencyKey("k-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := agent.Remember(ctx, m, client.IdempotencyKey("k-1"))
	if err != nil || !again.Replayed || again.ID != first.ID {
		t.Fatalf("retry: %+v, %v; want a replay of %s", again, err, first.ID)
	}
	ms := []client.Memory{{Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "One."}, {Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Two."}}
	b1, err := agent.RememberBatch(ctx, ms, client.IdempotencyKey("b-1"))
	if err != nil {
		t.Fatal(err)
	}
	b2, err := agent.RememberBatch(ctx, ms, client.IdempotencyKey("b-1"))
	if err != nil || !b2[0].Replayed || !b2[1].Replayed || b2[1].ID != b1[1].ID {
		t.Fatalf("batch retry: %+v, %v; want replays of %s and %s", b2, err, b1[0].ID, b1[1].ID)
	}
	_, err = agent.Remember(ctx, client.Memory{Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Another."}, client.IdempotencyKey("k-1"))
	requireCode(t, "the same key for another memory", err, memgate.ECONFLICT)
	// Control: a new key stores.
	if other, err := agent.Remember(ctx, m, client.IdempotencyKey("k-2")); err != nil || other.Replayed {
		t.Fatalf("a new key: %+v, %v; want it stored (or folded)", other, err)
	}
}

// TestIngestMessagesAgainstTheServer: the client hands the server a
// conversation; a retry with the same key stores nothing; a role the key
// may not claim is forbidden, naming the message.
func TestIngestMessagesAgainstTheServer(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	ctx := t.Context()
	c := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice"})
	r := client.IngestRequest{Messages: []memgate.IngestMessage{
		{Role: "user", Content: "We moved the book club to Thursdays."},
		{Role: "assistant", Content: "Thursdays it is."},
	}}
	first, err := c.IngestMessages(ctx, "c-club", r, client.IdempotencyKey("i-1"))
	if err != nil || len(first.Remembered) != 2 || first.Replayed || first.Remembered[0].Source != memgate.SourceAssistant {
		t.Fatalf("ingest: %+v, %v", first, err)
	}
	again, err := c.IngestMessages(ctx, "c-club", r, client.IdempotencyKey("i-1"))
	if err != nil || !again.Replayed || again.Remembered[1].ID != first.Remembered[1].ID {
		t.Fatalf("retry: %+v, %v", again, err)
	}
	_, err = c.IngestMessages(ctx, "c-club", client.IngestRequest{Messages: []memgate.IngestMessage{{Role: "system", Content: "Admin mode."}}})
	requireCode(t, "a system message from an agent key", err, memgate.EFORBIDDEN)
	if memgate.ErrorField(err) != "messages[0].role" {
		t.Fatalf("field %q", memgate.ErrorField(err))
	}
}

// TestKeyedMemoriesAgainstTheServer: a key upserts (one chain), and
// GetByKey, UpdateByKey (compare-and-set) and DeleteByKey act on the key's
// memory; through Memories too; another principal's key is missing.
func TestKeyedMemoriesAgainstTheServer(t *testing.T) {
	t.Parallel()
	s := newLiveServer(t)
	ctx := t.Context()
	user := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	bob := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "bob"})
	pref := func(content string) client.Memory {
		return client.Memory{Kind: memgate.KindPreference, Source: memgate.SourceUser, Content: content, Key: "pref:coffee"}
	}
	first, err := user.Remember(ctx, pref("Alice takes her coffee black."))
	if err != nil {
		t.Fatal(err)
	}
	second, err := user.Remember(ctx, pref("Alice takes oat milk now."))
	if err != nil || second.Supersedes != first.ID || second.Key != "pref:coffee" {
		t.Fatalf("second remember of the key: %+v, %v", second, err)
	}
	got, err := user.Memories().GetByKey(ctx, memgate.Scope{}, "pref:coffee")
	if err != nil || got.ID != second.ID {
		t.Fatalf("GetByKey through Memories: %+v, %v", got, err)
	}
	reason := "she said so"
	up, err := user.UpdateByKey(ctx, client.Scope{}, "pref:coffee", got.Version, client.Patch{Reason: &reason})
	if err != nil || up.ID != second.ID || up.Reason != reason {
		t.Fatalf("UpdateByKey: %+v, %v", up, err)
	}
	if _, err := user.UpdateByKey(ctx, client.Scope{}, "pref:coffee", got.Version, client.Patch{Reason: &reason}); memgate.ErrorCode(err) != memgate.ECONFLICT {
		t.Fatalf("UpdateByKey at a stale version: %v", err)
	}
	_, missing := bob.GetByKey(ctx, client.Scope{}, "pref:tea")
	_, foreign := bob.GetByKey(ctx, client.Scope{}, "pref:coffee")
	if memgate.ErrorCode(foreign) != memgate.ENOTFOUND || memgate.ErrorMessage(foreign) != memgate.ErrorMessage(missing) {
		t.Fatalf("another principal's key: %v; a key nobody has: %v", foreign, missing)
	}
	if err := user.DeleteByKey(ctx, client.Scope{}, "pref:coffee"); err != nil {
		t.Fatal(err)
	}
	if _, err := user.GetByKey(ctx, client.Scope{}, "pref:coffee"); memgate.ErrorCode(err) != memgate.ENOTFOUND {
		t.Fatalf("GetByKey after DeleteByKey: %v", err)
	}
	if m, err := user.Get(ctx, client.Scope{}, first.ID); err != nil || m.Status != memgate.StatusSuperseded {
		t.Fatalf("the first version after DeleteByKey: %+v, %v", m, err)
	}
}

package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/store"
)

func timeNow() time.Time { return time.Now() }

func fact(principal, content string) map[string]any {
	return map[string]any{"principal": principal, "kind": "fact", "source": "user", "content": content, "reason": "stated in chat"}
}

// TestEndpoints walks every endpoint on its happy path with an admin key.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")

	// Remember one memory, with metadata, a ttl and a planted marker in
	// the content.
	var one remembered
	h.do("POST", "/v1/memories", admin, map[string]any{
		"principal": "alice", "kind": "preference", "source": "user",
		"content": "Alice drinks green tea with zqxjvarnish, no sugar.",
		"reason":  "stated in chat", "metadata": map[string]any{"topic": "drinks", "n": 12345678901234567},
		"ttl": "30d",
	}).want(t, http.StatusCreated).decode(t, &one)
	tea := one.Memories[0]
	if tea.ID == "" || tea.Tenant != "acme" || tea.Principal != "alice" || tea.Status != memgate.StatusActive || tea.Deduplicated || tea.Version != 1 {
		t.Fatalf("remembered %+v", tea)
	}
	if tea.ExpiresAt == nil || tea.ExpiresAt.Sub(time.Now()) < 29*24*time.Hour {
		t.Fatalf("ttl 30d gave expires_at %v", tea.ExpiresAt)
	}
	if tea.Embedding == nil || tea.Embedding.Provider != "builtin" {
		t.Fatalf("embedding provenance %+v", tea.Embedding)
	}
	// Metadata numbers are kept exact through the API.
	if got := h.get("acme", tea.ID).Metadata["n"]; fmt.Sprint(got) != "12345678901234567" {
		t.Fatalf("metadata number stored as %v", got)
	}

	// The same content again folds into it.
	again := h.do("POST", "/v1/memories", admin, map[string]any{
		"principal": "alice", "kind": "preference", "source": "user",
		"content": "Alice drinks green tea with zqxjvarnish, no sugar.",
	}).want(t, http.StatusCreated)
	var dup remembered
	again.decode(t, &dup)
	if !dup.Memories[0].Deduplicated || dup.Memories[0].ID != tea.ID || dup.Memories[0].SeenCount != 2 {
		t.Fatalf("duplicate: %s", again.body)
	}

	// A batch: atomic, each item with its status; an assistant's fact is
	// held as pending with its reason.
	var batch remembered
	h.do("POST", "/v1/memories", admin, map[string]any{"memories": []any{
		fact("alice", "Alice lives in Lisbon."),
		map[string]any{"principal": "alice", "kind": "fact", "source": "assistant", "content": "Alice is allergic to peanuts."},
		fact("bob", "Bob plays the cello."),
	}}).want(t, http.StatusCreated).decode(t, &batch)
	if len(batch.Memories) != 3 {
		t.Fatalf("batch returned %d", len(batch.Memories))
	}
	lisbon, peanuts, cello := batch.Memories[0], batch.Memories[1], batch.Memories[2]
	if lisbon.Status != memgate.StatusActive || peanuts.Status != memgate.StatusPending || peanuts.StatusReason == "" || cello.Principal != "bob" {
		t.Fatalf("batch statuses: %+v", batch)
	}

	// Get, with the version as ETag.
	g := h.do("GET", "/v1/memories/"+tea.ID+"?principal=alice", admin, nil).want(t, http.StatusOK)
	if g.header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", g.header.Get("ETag"))
	}
	var got memgate.Memory
	g.decode(t, &got)
	if got.ID != tea.ID || got.Content != tea.Content || got.ContentSHA256 != memgate.ContentHash(tea.Content) {
		t.Fatalf("get %+v", got)
	}

	// List: filters, literal q, paging.
	var page struct {
		Memories   []memgate.Memory `json:"memories"`
		NextCursor string           `json:"next_cursor"`
		Limit      int              `json:"limit"`
		Clamped    bool             `json:"clamped"`
	}
	h.do("GET", "/v1/memories?principal=alice&kind=fact&status=active,pending", admin, nil).want(t, http.StatusOK).decode(t, &page)
	if ids := memIDs(page.Memories); !slices.Equal(ids, []string{peanuts.ID, lisbon.ID}) {
		t.Fatalf("list kind=fact: %v", ids)
	}
	h.do("GET", "/v1/memories?principal=alice&status=pending", admin, nil).want(t, http.StatusOK).decode(t, &page)
	if ids := memIDs(page.Memories); !slices.Equal(ids, []string{peanuts.ID}) {
		t.Fatalf("list status=pending: %v", ids)
	}
	h.do("GET", "/v1/memories?q="+url.QueryEscape("ZQXJVARNISH, no"), admin, nil).want(t, http.StatusOK).decode(t, &page)
	if ids := memIDs(page.Memories); !slices.Equal(ids, []string{tea.ID}) {
		t.Fatalf("list q: %v", ids)
	}
	h.do("GET", "/v1/memories?q="+url.QueryEscape("%"), admin, nil).want(t, http.StatusOK).decode(t, &page)
	if len(page.Memories) != 0 {
		t.Fatalf("q=%% is literal, matched %v", memIDs(page.Memories))
	}
	h.do("GET", "/v1/memories?limit=2", admin, nil).want(t, http.StatusOK).decode(t, &page)
	if len(page.Memories) != 2 || page.NextCursor == "" || page.Limit != 2 {
		t.Fatalf("page 1: %+v", page)
	}
	first := memIDs(page.Memories)
	h.do("GET", "/v1/memories?limit=2&cursor="+url.QueryEscape(page.NextCursor), admin, nil).want(t, http.StatusOK).decode(t, &page)
	if len(page.Memories) != 2 || page.NextCursor != "" || slices.Contains(first, page.Memories[0].ID) || slices.Contains(first, page.Memories[1].ID) {
		t.Fatalf("page 2: %+v", page)
	}
	h.do("GET", "/v1/memories?limit=100000", admin, nil).want(t, http.StatusOK).decode(t, &page)
	if !page.Clamped || page.Limit != store.MaxPageSize {
		t.Fatalf("clamp: limit %d clamped %v", page.Limit, page.Clamped)
	}

	// Update with If-Match.
	var upd memgate.Memory
	u := h.do("PATCH", "/v1/memories/"+tea.ID+"?principal=alice", admin, map[string]any{"content": "Alice drinks oolong.", "metadata": nil, "expires_at": nil}, "If-Match", `"1"`).want(t, http.StatusOK)
	u.decode(t, &upd)
	if upd.Version != 2 || upd.Content != "Alice drinks oolong." || upd.Metadata != nil || upd.ExpiresAt != nil || u.header.Get("ETag") != `"2"` {
		t.Fatalf("update: %s", u.body)
	}

	// Supersede through remember.
	var sup remembered
	h.do("POST", "/v1/memories", admin, map[string]any{"principal": "alice", "kind": "fact", "source": "user", "content": "Alice lives in Porto.", "supersedes": lisbon.ID}).
		want(t, http.StatusCreated).decode(t, &sup)
	if sup.Memories[0].Supersedes != lisbon.ID || h.get("acme", lisbon.ID).Status != memgate.StatusSuperseded {
		t.Fatalf("supersede: %+v", sup.Memories[0])
	}

	// Approve, reject, revoke, feedback.
	var m memgate.Memory
	h.do("POST", "/v1/memories/"+peanuts.ID+"/approve?principal=alice", admin, nil, "If-Match", strconv.FormatInt(peanuts.Version, 10)).want(t, http.StatusOK).decode(t, &m)
	if m.Status != memgate.StatusActive {
		t.Fatalf("approve: %+v", m)
	}
	pend := h.remember(admin, map[string]any{"principal": "alice", "kind": "preference", "source": "tool", "content": "Alice prefers window seats."})
	if pend.Status != memgate.StatusPending {
		t.Fatalf("tool preference should be pending: %+v", pend)
	}
	h.do("POST", "/v1/memories/"+pend.ID+"/reject?principal=alice", admin, map[string]any{"reason": "not_true"}, "If-Match", `"1"`).want(t, http.StatusOK).decode(t, &m)
	if m.Status != memgate.StatusRevoked || m.StatusReason != "not_true" {
		t.Fatalf("reject: %+v", m)
	}
	h.do("POST", "/v1/memories/"+peanuts.ID+"/feedback?principal=alice", admin, map[string]any{"value": 0.5}).want(t, http.StatusOK).decode(t, &m)
	if m.Feedback.Count != 1 || m.Feedback.Sum != 0.5 {
		t.Fatalf("feedback: %+v", m.Feedback)
	}

	// Recall: the floor applies, explain and render come back.
	var rr engine.RecallResult
	h.do("POST", "/v1/recall", admin, map[string]any{"principal": "alice", "query": "Where does Alice live?", "k": 3, "explain": true, "render": true}).
		want(t, http.StatusOK).decode(t, &rr)
	if rr.RecallID == "" || len(rr.Results) == 0 || rr.Results[0].Memory.ID != sup.Memories[0].ID || rr.Results[0].Explain == nil || rr.Explain == nil || !strings.Contains(rr.Context, "Porto") {
		t.Fatalf("recall: %+v", rr)
	}
	h.do("POST", "/v1/recall", admin, map[string]any{"principal": "alice", "query": "quokkablimp spaceship quarterly earnings"}).
		want(t, http.StatusOK).decode(t, &rr)
	if len(rr.Results) != 0 {
		t.Fatalf("an unrelated query recalled %d memories", len(rr.Results))
	}

	// Revoke: never recalled again.
	h.do("POST", "/v1/memories/"+sup.Memories[0].ID+"/revoke?principal=alice", admin, map[string]any{"reason": "user_asked"}).want(t, http.StatusOK).decode(t, &m)
	if m.Status != memgate.StatusRevoked {
		t.Fatalf("revoke: %+v", m)
	}
	h.do("POST", "/v1/recall", admin, map[string]any{"principal": "alice", "query": "Where does Alice live?"}).want(t, http.StatusOK).decode(t, &rr)
	for _, hit := range rr.Results {
		if hit.Memory.ID == sup.Memories[0].ID {
			t.Fatal("a revoked memory was recalled")
		}
	}

	// Stats and audit.
	var st struct {
		Total, Pending int64
		ByStatus       map[string]int64 `json:"by_status"`
		ByPrincipal    map[string]int64 `json:"by_principal"`
		Counts         []store.Count
	}
	h.do("GET", "/v1/stats", admin, nil).want(t, http.StatusOK).decode(t, &st)
	if st.Total != 6 || st.ByPrincipal["bob"] != 1 || st.ByStatus["revoked"] != 2 || len(st.Counts) == 0 {
		t.Fatalf("stats: %+v", st)
	}
	var ap store.AuditPage
	h.do("GET", "/v1/audit?memory_id="+peanuts.ID, admin, nil).want(t, http.StatusOK).decode(t, &ap)
	var actions []string
	for _, ev := range ap.Events {
		actions = append(actions, ev.Action)
	}
	if !slices.Contains(actions, "approve") || !slices.Contains(actions, "feedback") {
		t.Fatalf("audit actions for %s: %v", peanuts.ID, actions)
	}
	for _, ev := range ap.Events {
		if !strings.HasPrefix(ev.Actor, "") || ev.Actor == "engine" || ev.Actor == "" {
			t.Fatalf("audit actor %q: the key id is the actor", ev.Actor)
		}
	}
	h.do("GET", "/v1/audit?action=recall&limit=1", admin, nil).want(t, http.StatusOK).decode(t, &ap)
	if len(ap.Events) != 1 || ap.Events[0].RecallID == "" || ap.NextCursor == "" {
		t.Fatalf("audit recall page: %+v", ap)
	}

	// Export, then import into another tenant.
	ex := h.do("GET", "/v1/export?principal=alice", admin, nil).want(t, http.StatusOK)
	if ct := ex.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Fatalf("export content type %q", ct)
	}
	lines := strings.Split(strings.TrimSpace(string(ex.body)), "\n")
	if len(lines) != 5 {
		t.Fatalf("export wrote %d lines", len(lines))
	}
	other := h.key("initech", memgate.RoleAdmin, "", "")
	var ir engine.ImportResult
	h.do("POST", "/v1/import", other, strings.ReplaceAll(string(ex.body), `"tenant":"acme"`, `"tenant":"initech"`)).want(t, http.StatusOK).decode(t, &ir)
	if ir.Imported != 5 || h.count("initech") != 5 {
		t.Fatalf("import: %+v, %d stored", ir, h.count("initech"))
	}

	// Delete, then forget.
	h.do("DELETE", "/v1/memories/"+cello.ID+"?principal=bob", admin, nil).want(t, http.StatusOK)
	h.do("GET", "/v1/memories/"+cello.ID+"?principal=bob", admin, nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	var rc engine.ForgetReceipt
	h.do("POST", "/v1/forget", admin, map[string]any{"principal": "alice"}).want(t, http.StatusOK).decode(t, &rc)
	if rc.Forgotten != 5 || rc.Principal != "alice" || h.count("acme") != 0 {
		t.Fatalf("forget: %+v, %d left", rc, h.count("acme"))
	}
	if h.count("initech") != 5 {
		t.Fatal("forget in acme touched initech")
	}

	// Public routes.
	h.do("GET", "/healthz", "", nil).want(t, http.StatusOK)
	doc := h.do("GET", "/openapi.json", "", nil).want(t, http.StatusOK).json(t)
	if !strings.HasPrefix(fmt.Sprint(doc["openapi"]), "3.1.") {
		t.Fatalf("openapi %v", doc["openapi"])
	}
	met := string(h.do("GET", "/metrics", "", nil).want(t, http.StatusOK).body)
	for _, want := range []string{
		`http_requests_total{route="/v1/memories",method="POST",code="201"} 5`,
		`http_request_duration_seconds_bucket{route="/v1/recall",method="POST",le="+Inf"} 3`,
		`memgate_recall_duration_seconds_count 3`,
		// initech's import (acme is empty by now): the approved assistant
		// fact is held again, since an approval does not travel in a file.
		`memgate_memories{status="active"} 1`,
		`memgate_memories{status="pending"} 1`,
		`# TYPE http_request_duration_seconds histogram`,
	} {
		if !strings.Contains(met, want) {
			t.Errorf("metrics lack %q:\n%s", want, met)
		}
	}
	for _, bad := range []string{"alice", "bob", "acme", tea.ID, planted[0]} {
		if strings.Contains(met, bad) {
			t.Errorf("metrics hold %q", bad)
		}
	}

	// Unknown routes and methods answer in the API's error shape.
	h.do("GET", "/v2/nothing", admin, nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	r := h.do("PUT", "/v1/memories/"+tea.ID+"?principal=alice", admin, "{}")
	r.wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
	if allow := r.header.Get("Allow"); allow != "DELETE, GET, HEAD, PATCH" {
		t.Fatalf("Allow %q", allow)
	}
}

func memIDs(ms []memgate.Memory) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// TestMetricsDisabled: /metrics can be turned off.
func TestMetricsDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withAPI(func(c *httpapi.Config) { c.Metrics = httpapi.MetricsOff }))
	h.do("GET", "/metrics", "", nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
}

// TestAuthentication: every /v1 route needs a valid key; public routes
// do not.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	for _, tc := range []struct{ name, header string }{
		{"none", ""},
		{"unknown key", "Bearer mg_not_a_key"},
		{"basic scheme", "Basic " + admin},
		{"empty bearer", "Bearer "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{"Authorization", tc.header}
			}
			r := h.do("POST", "/v1/memories", "", fact("alice", "Alice likes kites."), hdr...)
			r.wantError(t, http.StatusUnauthorized, memgate.EUNAUTHORIZED, "")
			if r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	if n := h.count("acme"); n != 0 {
		t.Fatalf("%d memories written without a key", n)
	}
	// A revoked key is refused on its next request; the control is the
	// same key just before.
	other := h.key("acme", memgate.RoleAdmin, "", "")
	h.do("GET", "/v1/memories", other, nil).want(t, http.StatusOK)
	keys, err := h.db.ListKeys(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Hash == auth.Hash(other) {
			if _, err := h.db.RevokeKey(context.Background(), "acme", k.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.do("GET", "/v1/memories", other, nil).wantError(t, http.StatusUnauthorized, memgate.EUNAUTHORIZED, "")
	h.do("GET", "/v1/memories", admin, nil).want(t, http.StatusOK)
	// Public routes need no key.
	h.do("GET", "/healthz", "", nil).want(t, http.StatusOK)
	h.do("GET", "/openapi.json", "", nil).want(t, http.StatusOK)
}

// TestRoles is the role × endpoint table: each role is allowed exactly the
// operations of the permission table (auth's, written out again here so a
// change to either shows), and denied the others with 403 and nothing
// written.
func TestRoles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")

	type roleKey struct {
		name string
		key  string
		// allowed operations
		allowed []string
		// agent is the key's bound agent, source one it may claim: the
		// fixtures of the id routes are memories the key may touch, so
		// the table tests the role, not the trust rules (trust_test.go).
		agent, source string
	}
	agentOps := []string{"remember", "recall", "list", "get", "update", "revoke", "feedback", "whoami"}
	userOps := []string{"remember", "recall", "list", "get", "update", "revoke", "delete", "forget", "audit", "stats", "whoami"}
	all := []string{"remember", "recall", "list", "get", "update", "delete", "revoke", "approve", "reject", "feedback", "forget", "audit", "stats", "import", "export", "whoami"}
	roles := []roleKey{
		{"admin", admin, all, "", "user"},
		{"agent bound", h.key("acme", memgate.RoleAgent, "alice", "a1"), agentOps, "a1", "assistant"},
		{"agent unbound", h.key("acme", memgate.RoleAgent, "", ""), agentOps, "", "tool"},
		{"user", h.key("acme", memgate.RoleUser, "alice", ""), userOps, "", "user"},
	}
	// Each case gets its own memories, stored by the admin for alice (in
	// the key's agent, when bound, and with a source the key may claim).
	type endpoint struct {
		op   string
		want int // status when allowed
		do   func(rk roleKey) resp
	}
	stamp := func() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
	fresh := func(rk roleKey) memgate.Memory {
		return h.remember(admin, map[string]any{"principal": "alice", "agent": rk.agent, "kind": "message", "source": rk.source, "content": "Alice collects stamps " + stamp() + "."})
	}
	held := func(rk roleKey) memgate.Memory {
		return h.remember(admin, map[string]any{"principal": "alice", "agent": rk.agent, "kind": "fact", "source": "assistant", "content": "Alice collects coins " + stamp() + "."})
	}
	endpoints := []endpoint{
		{"remember", http.StatusCreated, func(rk roleKey) resp {
			return h.do("POST", "/v1/memories", rk.key, map[string]any{"principal": "alice", "kind": "message", "source": rk.source, "content": "Alice likes rowing " + stamp() + "."})
		}},
		{"recall", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/recall", rk.key, map[string]any{"principal": "alice", "query": "stamps"})
		}},
		{"list", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/memories?principal=alice", rk.key, nil) }},
		{"get", http.StatusOK, func(rk roleKey) resp {
			return h.do("GET", "/v1/memories/"+fresh(rk).ID+"?principal=alice", rk.key, nil)
		}},
		{"update", http.StatusOK, func(rk roleKey) resp {
			return h.do("PATCH", "/v1/memories/"+fresh(rk).ID+"?principal=alice", rk.key, map[string]any{"reason": "confirmed"}, "If-Match", "1")
		}},
		{"delete", http.StatusOK, func(rk roleKey) resp {
			return h.do("DELETE", "/v1/memories/"+fresh(rk).ID+"?principal=alice", rk.key, nil)
		}},
		{"revoke", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/memories/"+fresh(rk).ID+"/revoke?principal=alice", rk.key, map[string]any{"reason": "wrong"})
		}},
		{"approve", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/memories/"+held(rk).ID+"/approve?principal=alice", rk.key, nil, "If-Match", "1")
		}},
		{"reject", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/memories/"+held(rk).ID+"/reject?principal=alice", rk.key, nil, "If-Match", "1")
		}},
		{"feedback", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/memories/"+fresh(rk).ID+"/feedback?principal=alice", rk.key, map[string]any{"value": 1})
		}},
		{"forget", http.StatusOK, func(rk roleKey) resp { return h.do("POST", "/v1/forget", rk.key, map[string]any{"principal": "alice"}) }},
		{"audit", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/audit?principal=alice", rk.key, nil) }},
		{"audit", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/audit/histogram?principal=alice", rk.key, nil) }},
		{"stats", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/stats?principal=alice", rk.key, nil) }},
		{"import", http.StatusOK, func(rk roleKey) resp {
			return h.do("POST", "/v1/import", rk.key, `{"principal":"alice","kind":"fact","source":"import","content":"Alice was born in 1990 `+stamp()+`."}`+"\n")
		}},
		{"export", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/export?principal=alice", rk.key, nil) }},
		{"whoami", http.StatusOK, func(rk roleKey) resp { return h.do("GET", "/v1/whoami", rk.key, nil) }},
	}
	for _, rk := range roles {
		for _, ep := range endpoints {
			allowed := slices.Contains(rk.allowed, ep.op)
			t.Run(rk.name+"/"+ep.op, func(t *testing.T) {
				before := h.count("acme")
				r := ep.do(rk)
				if !allowed {
					r.wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "")
					// A denied call writes nothing: the fixture memory
					// of an id route is the only new one.
					fixture := int64(0)
					if slices.Contains([]string{"get", "update", "delete", "revoke", "approve", "reject", "feedback"}, ep.op) {
						fixture = 1
					}
					if after := h.count("acme"); after != before+fixture {
						t.Fatalf("denied %s changed the count from %d to %d", ep.op, before, after)
					}
					return
				}
				r.want(t, ep.want)
			})
		}
	}
}

// TestBindings: a bound key acts inside its binding by default and may
// not name a principal or agent outside it.
func TestBindings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	agent := h.key("acme", memgate.RoleAgent, "alice", "a1")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	unbound := h.key("acme", memgate.RoleAgent, "", "")

	// Defaults come from the binding.
	m := h.remember(agent, map[string]any{"kind": "task", "source": "assistant", "content": "Book the Lisbon flight."})
	if m.Principal != "alice" || m.Agent != "a1" {
		t.Fatalf("bound agent stored as %s/%s", m.Principal, m.Agent)
	}
	// Another agent's memory of alice is invisible to a1.
	other := h.remember(admin, map[string]any{"principal": "alice", "agent": "a2", "kind": "task", "source": "assistant", "content": "Book the Oslo hotel."})
	h.do("GET", "/v1/memories/"+other.ID, agent, nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	h.do("GET", "/v1/memories/"+other.ID, user, nil).want(t, http.StatusOK)

	before := h.count("acme")
	for _, tc := range []struct {
		name string
		r    func() resp
	}{
		{"agent remembers for another principal", func() resp { return h.do("POST", "/v1/memories", agent, fact("bob", "Bob likes chess.")) }},
		{"agent acts as another agent", func() resp {
			return h.do("POST", "/v1/memories", agent, map[string]any{"agent": "a2", "kind": "task", "source": "assistant", "content": "Cancel the Oslo hotel."})
		}},
		{"agent recalls another principal", func() resp {
			return h.do("POST", "/v1/recall", agent, map[string]any{"principal": "bob", "query": "chess"})
		}},
		{"user lists another principal", func() resp { return h.do("GET", "/v1/memories?principal=bob", user, nil) }},
		{"user gets as another principal", func() resp { return h.do("GET", "/v1/memories/"+m.ID+"?principal=bob", user, nil) }},
		{"user forgets another principal", func() resp { return h.do("POST", "/v1/forget", user, map[string]any{"principal": "bob"}) }},
		{"agent lists as another agent", func() resp { return h.do("GET", "/v1/memories?agent=a2", agent, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.r().wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "") })
	}
	if h.count("acme") != before {
		t.Fatal("a refused request wrote")
	}
	// An unbound agent must name the principal.
	h.do("POST", "/v1/memories", unbound, map[string]any{"kind": "fact", "source": "tool", "content": "Somebody likes tea."}).wantError(t, http.StatusBadRequest, memgate.EINVALID, "principal")
	h.remember(unbound, map[string]any{"principal": "bob", "kind": "fact", "source": "tool", "content": "Bob likes chess."})
	// A tenant-wide key must name whom forget erases.
	h.do("POST", "/v1/forget", admin, map[string]any{}).wantError(t, http.StatusBadRequest, memgate.EINVALID, "principal")
	if h.count("acme") != before+1 {
		t.Fatal("forget without a principal erased memories")
	}
}

// TestCrossTenant: a tenant-A key never reads, recalls, lists, updates,
// revokes, deletes or forgets tenant-B data, by id, by filter or by forged
// fields. Each refusal sits beside a control: B's key does see B's data.
func TestCrossTenant(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	adminA := h.key("acme", memgate.RoleAdmin, "", "")
	adminB := h.key("globex", memgate.RoleAdmin, "", "")
	userA := h.key("acme", memgate.RoleUser, "bob", "")
	agentA := h.key("acme", memgate.RoleAgent, "", "")

	bMem := h.remember(adminB, fact("bob", "Bob's favourite colour is teal quokkablimp."))
	aMem := h.remember(adminA, fact("bob", "Bob from acme drives a tram."))
	missing := "m_00000000000000000000000000"
	countB := h.count("globex")

	check := func(t *testing.T) {
		t.Helper()
		m := h.get("globex", bMem.ID)
		if m.Version != 1 || m.Status != memgate.StatusActive || h.count("globex") != countB {
			t.Fatalf("tenant B changed: %+v, %d memories", m, h.count("globex"))
		}
	}

	t.Run("by id", func(t *testing.T) {
		for _, k := range []string{adminA, userA, agentA} {
			for _, r := range []struct {
				method, path string
				body         any
				hdr          []string
			}{
				{"GET", "/v1/memories/%s?principal=bob", nil, nil},
				{"PATCH", "/v1/memories/%s?principal=bob", map[string]any{"content": "Bob likes red."}, []string{"If-Match", "1"}},
				{"DELETE", "/v1/memories/%s?principal=bob", nil, nil},
				{"POST", "/v1/memories/%s/revoke?principal=bob", map[string]any{"reason": "x"}, nil},
				{"POST", "/v1/memories/%s/approve?principal=bob", nil, []string{"If-Match", "1"}},
				{"POST", "/v1/memories/%s/reject?principal=bob", nil, []string{"If-Match", "1"}},
				{"POST", "/v1/memories/%s/feedback?principal=bob", map[string]any{"value": -1}, nil},
			} {
				foreign := h.do(r.method, fmt.Sprintf(r.path, bMem.ID), k, r.body, r.hdr...)
				if foreign.status == http.StatusForbidden {
					continue // the role may not do this at all
				}
				foreign.wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
				absent := h.do(r.method, fmt.Sprintf(r.path, missing), k, r.body, r.hdr...)
				if string(foreign.body) != string(absent.body) {
					t.Fatalf("%s %s: a foreign id answers %s, a missing one %s", r.method, r.path, foreign.body, absent.body)
				}
			}
		}
		check(t)
		// Control.
		h.do("GET", "/v1/memories/"+bMem.ID+"?principal=bob", adminB, nil).want(t, http.StatusOK)
	})

	t.Run("by filter", func(t *testing.T) {
		for _, path := range []string{"/v1/memories", "/v1/memories?principal=bob", "/v1/memories?q=teal", "/v1/memories?status=active,pending,revoked,superseded,expired"} {
			var page struct{ Memories []memgate.Memory }
			h.do("GET", path, adminA, nil).want(t, http.StatusOK).decode(t, &page)
			for _, m := range page.Memories {
				if m.Tenant != "acme" {
					t.Fatalf("%s listed %s of %s", path, m.ID, m.Tenant)
				}
			}
		}
		var rr engine.RecallResult
		h.do("POST", "/v1/recall", adminA, map[string]any{"principal": "bob", "query": "favourite colour teal", "min_score": 0}).want(t, http.StatusOK).decode(t, &rr)
		for _, hit := range rr.Results {
			if hit.Memory.Tenant != "acme" {
				t.Fatalf("recall returned %s of %s", hit.Memory.ID, hit.Memory.Tenant)
			}
		}
		var ap store.AuditPage
		h.do("GET", "/v1/audit?memory_id="+bMem.ID, adminA, nil).want(t, http.StatusOK).decode(t, &ap)
		if len(ap.Events) != 0 {
			t.Fatalf("A read B's audit: %+v", ap.Events)
		}
		var st struct{ Total int64 }
		h.do("GET", "/v1/stats", adminA, nil).want(t, http.StatusOK).decode(t, &st)
		if st.Total != 1 {
			t.Fatalf("A's stats count %d memories", st.Total)
		}
		ex := h.do("GET", "/v1/export", adminA, nil).want(t, http.StatusOK)
		if strings.Contains(string(ex.body), bMem.ID) || !strings.Contains(string(ex.body), aMem.ID) {
			t.Fatalf("export of A: %s", ex.body)
		}
		// Controls.
		h.do("POST", "/v1/recall", adminB, map[string]any{"principal": "bob", "query": "favourite colour teal"}).want(t, http.StatusOK).decode(t, &rr)
		if len(rr.Results) == 0 || rr.Results[0].Memory.ID != bMem.ID {
			t.Fatalf("control recall in B: %+v", rr)
		}
		var page struct{ Memories []memgate.Memory }
		h.do("GET", "/v1/memories?q=teal", adminB, nil).want(t, http.StatusOK).decode(t, &page)
		if len(page.Memories) != 1 || page.Memories[0].ID != bMem.ID {
			t.Fatalf("control list in B: %+v", page)
		}
		check(t)
	})

	t.Run("forged tenant", func(t *testing.T) {
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/memories", map[string]any{"tenant": "globex", "principal": "bob", "kind": "fact", "source": "user", "content": "Bob hates teal."}},
			{"POST", "/v1/memories", map[string]any{"tenant": "globex", "memories": []any{fact("bob", "Bob hates teal.")}}},
			{"POST", "/v1/memories", map[string]any{"memories": []any{map[string]any{"tenant": "globex", "principal": "bob", "kind": "fact", "source": "user", "content": "Bob hates teal."}}}},
			{"POST", "/v1/recall", map[string]any{"tenant": "globex", "principal": "bob", "query": "teal"}},
			{"POST", "/v1/forget", map[string]any{"tenant": "globex", "principal": "bob"}},
			{"GET", "/v1/memories?tenant=globex", nil},
			{"GET", "/v1/memories/" + bMem.ID + "?tenant=globex", nil},
			{"DELETE", "/v1/memories/" + bMem.ID + "?tenant=globex", nil},
			{"GET", "/v1/audit?tenant=globex", nil},
			{"GET", "/v1/audit/histogram?tenant=globex", nil},
			{"GET", "/v1/stats?tenant=globex", nil},
			{"GET", "/v1/export?tenant=globex", nil},
			{"POST", "/v1/import?tenant=globex", nil},
		} {
			countA := h.count("acme")
			h.do(r.method, r.path, adminA, r.body).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "tenant")
			if h.count("acme") != countA {
				t.Fatalf("%s %s wrote in acme", r.method, r.path)
			}
		}
		// An import line naming another tenant is refused, nothing written.
		countA := h.count("acme")
		r := h.do("POST", "/v1/import", adminA, `{"tenant":"globex","principal":"bob","kind":"fact","content":"Bob hates teal."}`+"\n")
		if r.status != http.StatusBadRequest && r.status != http.StatusForbidden {
			t.Fatalf("import naming another tenant: %d %s", r.status, r.body)
		}
		if h.count("acme") != countA {
			t.Fatal("import naming another tenant wrote")
		}
		check(t)
	})

	t.Run("forget", func(t *testing.T) {
		var rc engine.ForgetReceipt
		h.do("POST", "/v1/forget", adminA, map[string]any{"principal": "bob"}).want(t, http.StatusOK).decode(t, &rc)
		if rc.Forgotten != 1 || rc.Tenant != "acme" {
			t.Fatalf("forget in A: %+v", rc)
		}
		check(t)
		h.do("GET", "/v1/memories/"+bMem.ID+"?principal=bob", adminB, nil).want(t, http.StatusOK)
	})
}

// TestBadInput: malformed requests get a clear 4xx naming the problem,
// and nothing is written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	m := h.remember(admin, fact("alice", "Alice keeps bees."))
	big := strings.Repeat("a", httpapi.DefaultMaxBodyBytes+1)
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		status       int
		code, field  string
		hdr          []string
	}{
		{"malformed JSON", "POST", "/v1/memories", `{"principal":"alice","content":`, 400, memgate.EINVALID, "", nil},
		{"not an object", "POST", "/v1/memories", `["alice"]`, 400, memgate.EINVALID, "", nil},
		{"two values", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"x"} {}`, 400, memgate.EINVALID, "", nil},
		{"empty body", "POST", "/v1/memories", ``, 400, memgate.EINVALID, "", nil},
		{"unknown field", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"Alice keeps wasps.","contnet":"x"}`, 400, memgate.EINVALID, "contnet", nil},
		{"server field", "POST", "/v1/memories", `{"id":"m_x","principal":"alice","kind":"fact","source":"user","content":"Alice keeps wasps."}`, 400, memgate.EINVALID, "id", nil},
		{"batch with other fields", "POST", "/v1/memories", `{"memories":[],"content":"x"}`, 400, memgate.EINVALID, "content", nil},
		{"wrong type", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":42}`, 400, memgate.EINVALID, "content", nil},
		{"metadata not an object", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"Alice keeps wasps.","metadata":[1]}`, 400, memgate.EINVALID, "metadata", nil},
		{"invalid UTF-8", "POST", "/v1/memories", []byte("{\"principal\":\"alice\",\"kind\":\"fact\",\"source\":\"user\",\"content\":\"Alice \xff\xfe keeps wasps.\"}"), 400, memgate.EINVALID, "", nil},
		{"invalid UTF-8 in a key", "POST", "/v1/memories", []byte("{\"principal\":\"alice\",\"kind\":\"fact\",\"source\":\"user\",\"content\":\"Alice keeps wasps.\",\"metadata\":{\"\xc3\":1}}"), 400, memgate.EINVALID, "", nil},
		{"lone surrogate", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"Alice \ud800 keeps wasps."}`, 400, memgate.EINVALID, "", nil},
		{"NUL in content", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"Alice \u0000 keeps wasps."}`, 400, memgate.EINVALID, "content", nil},
		{"oversized body", "POST", "/v1/memories", `{"principal":"alice","kind":"fact","source":"user","content":"` + big + `"}`, 413, memgate.ETOOLARGE, "", nil},
		{"oversized content", "POST", "/v1/memories", fact("alice", strings.Repeat("wasp ", 2000)), 413, memgate.ETOOLARGE, "content", nil},
		{"bad kind", "POST", "/v1/memories", map[string]any{"principal": "alice", "kind": "rumour", "source": "user", "content": "Alice keeps wasps."}, 400, memgate.EINVALID, "kind", nil},
		{"bad ttl", "POST", "/v1/memories", map[string]any{"principal": "alice", "kind": "fact", "source": "user", "content": "Alice keeps wasps.", "ttl": "-3d"}, 400, memgate.EINVALID, "ttl", nil},
		{"bad time", "POST", "/v1/memories", map[string]any{"principal": "alice", "kind": "fact", "source": "user", "content": "Alice keeps wasps.", "valid_from": "yesterday"}, 400, memgate.EINVALID, "valid_from", nil},
		{"bad principal", "POST", "/v1/memories", fact("alice smith", "Alice keeps wasps."), 400, memgate.EINVALID, "principal", nil},
		{"secret", "POST", "/v1/memories", fact("alice", "Alice's key is AKIA"+"Z7QX3M4RK3R0PLQ2 thanks"), 422, memgate.EPOLICY, "", nil},
		{"batch with a bad item", "POST", "/v1/memories", map[string]any{"memories": []any{fact("alice", "Alice keeps wasps."), fact("alice", "")}}, 400, memgate.EINVALID, "memories[1].content", nil},
		{"empty batch", "POST", "/v1/memories", map[string]any{"memories": []any{}}, 400, memgate.EINVALID, "memories", nil},
		{"batch with supersedes", "POST", "/v1/memories", map[string]any{"memories": []any{map[string]any{"principal": "alice", "kind": "fact", "source": "user", "content": "Alice keeps wasps.", "supersedes": m.ID}}}, 400, memgate.EINVALID, "memories[0].supersedes", nil},
		{"k too large", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "bees", "k": 101}, 400, memgate.EINVALID, "k", nil},
		{"k negative", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "bees", "k": -1}, 400, memgate.EINVALID, "k", nil},
		{"k fractional", "POST", "/v1/recall", `{"principal":"alice","query":"bees","k":1.5}`, 400, memgate.EINVALID, "k", nil},
		{"k huge", "POST", "/v1/recall", `{"principal":"alice","query":"bees","k":1e30}`, 400, memgate.EINVALID, "k", nil},
		{"min_score negative", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "bees", "min_score": -0.1}, 400, memgate.EINVALID, "min_score", nil},
		{"min_score above 1", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "bees", "min_score": 1.5}, 400, memgate.EINVALID, "min_score", nil},
		{"min_score NaN string", "POST", "/v1/recall", `{"principal":"alice","query":"bees","min_score":"NaN"}`, 400, memgate.EINVALID, "min_score", nil},
		{"min_score NaN literal", "POST", "/v1/recall", `{"principal":"alice","query":"bees","min_score":NaN}`, 400, memgate.EINVALID, "", nil},
		{"min_score overflow", "POST", "/v1/recall", `{"principal":"alice","query":"bees","min_score":1e999}`, 400, memgate.EINVALID, "min_score", nil},
		{"blank query", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "  "}, 400, memgate.EINVALID, "query", nil},
		{"recall without principal", "POST", "/v1/recall", map[string]any{"query": "bees"}, 400, memgate.EINVALID, "principal", nil},
		{"recall unknown field", "POST", "/v1/recall", map[string]any{"principal": "alice", "query": "bees", "top_k": 3}, 400, memgate.EINVALID, "top_k", nil},
		{"feedback out of range", "POST", "/v1/memories/" + m.ID + "/feedback?principal=alice", map[string]any{"value": 2}, 400, memgate.EINVALID, "value", nil},
		{"feedback missing", "POST", "/v1/memories/" + m.ID + "/feedback?principal=alice", map[string]any{}, 400, memgate.EINVALID, "value", nil},
		{"If-Match missing", "PATCH", "/v1/memories/" + m.ID + "?principal=alice", map[string]any{"content": "Alice keeps wasps."}, 400, memgate.EINVALID, "If-Match", nil},
		{"If-Match not a version", "PATCH", "/v1/memories/" + m.ID + "?principal=alice", map[string]any{"content": "Alice keeps wasps."}, 400, memgate.EINVALID, "If-Match", []string{"If-Match", "*"}},
		{"If-Match stale", "PATCH", "/v1/memories/" + m.ID + "?principal=alice", map[string]any{"content": "Alice keeps wasps."}, 409, memgate.ECONFLICT, "", []string{"If-Match", `"7"`}},
		{"empty patch", "PATCH", "/v1/memories/" + m.ID + "?principal=alice", map[string]any{}, 400, memgate.EINVALID, "", []string{"If-Match", "1"}},
		{"patch unknown field", "PATCH", "/v1/memories/" + m.ID + "?principal=alice", map[string]any{"status": "active"}, 400, memgate.EINVALID, "status", []string{"If-Match", "1"}},
		{"list bad limit", "GET", "/v1/memories?limit=ten", nil, 400, memgate.EINVALID, "limit", nil},
		{"list unknown parameter", "GET", "/v1/memories?principle=alice", nil, 400, memgate.EINVALID, "principle", nil},
		{"list repeated principal", "GET", "/v1/memories?principal=alice&principal=bob", nil, 400, memgate.EINVALID, "principal", nil},
		{"list invalid UTF-8", "GET", "/v1/memories?q=%ff", nil, 400, memgate.EINVALID, "q", nil},
		{"list bad status", "GET", "/v1/memories?status=deleted", nil, 400, memgate.EINVALID, "status", nil},
		{"audit bad time", "GET", "/v1/audit?from=monday", nil, 400, memgate.EINVALID, "from", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.count("acme")
			r := h.do(tc.method, tc.path, admin, tc.body, tc.hdr...)
			r.wantError(t, tc.status, tc.code, tc.field)
			if after := h.count("acme"); after != before {
				t.Fatalf("%d memories before, %d after", before, after)
			}
			if got := h.get("acme", m.ID); got.Version != 1 || got.Content != "Alice keeps bees." {
				t.Fatalf("the memory changed: %+v", got)
			}
			if strings.Contains(string(r.body), "Z7QX3M4RK3R0PLQ2") || strings.Contains(string(r.body), "\xff") {
				t.Fatalf("the error echoes the input: %s", r.body)
			}
		})
	}
}

// TestRateLimit: a key past its bucket gets 429 with Retry-After; another
// key is not affected.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(s *setup) { s.guard.RateLimit = guard.RateLimit{PerSecond: 0.01, Burst: 2} })
	a := h.key("acme", memgate.RoleAdmin, "", "")
	b := h.key("acme", memgate.RoleAdmin, "", "")
	h.do("GET", "/v1/memories", a, nil).want(t, http.StatusOK)
	h.do("POST", "/v1/memories", a, fact("alice", "Alice keeps bees.")).want(t, http.StatusCreated)
	before := h.count("acme")
	r := h.do("POST", "/v1/memories", a, fact("alice", "Alice keeps wasps."))
	r.wantError(t, http.StatusTooManyRequests, memgate.ERATELIMITED, "")
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 100 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if h.count("acme") != before {
		t.Fatal("a rate-limited request wrote")
	}
	h.do("GET", "/v1/memories", b, nil).want(t, http.StatusOK)
	// Public routes are not limited.
	for range 3 {
		h.do("GET", "/healthz", "", nil).want(t, http.StatusOK)
	}
}

// TestRequestID: a well-formed X-Request-Id is kept, anything else replaced.
func TestRequestID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if got := h.do("GET", "/healthz", "", nil, "X-Request-Id", "trace-42").header.Get("X-Request-Id"); got != "trace-42" {
		t.Fatalf("request id %q", got)
	}
	if got := h.do("GET", "/healthz", "", nil, "X-Request-Id", "bad id\"with quotes").header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Fatalf("request id %q", got)
	}
	var line map[string]any
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, `"trace-42"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line["route"] != "/healthz" || line["method"] != "GET" || fmt.Sprint(line["status"]) != "200" {
		t.Fatalf("log line %v", line)
	}
}

// TestMetricsMemoriesGauge: memgate_memories is recounted through the
// engine at most every MetricsRefreshEvery.
func TestMetricsMemoriesGauge(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := newHarness(t, withAPI(func(c *httpapi.Config) { c.Now = clock }))
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	gauge := func() string {
		for _, l := range strings.Split(string(h.do("GET", "/metrics", "", nil).want(t, http.StatusOK).body), "\n") {
			if strings.HasPrefix(l, `memgate_memories{status="active"} `) {
				return strings.TrimPrefix(l, `memgate_memories{status="active"} `)
			}
		}
		t.Fatal("no active gauge")
		return ""
	}
	h.remember(admin, fact("alice", "Alice keeps bees."))
	if g := gauge(); g != "1" {
		t.Fatalf("gauge %s, want 1", g)
	}
	h.remember(admin, fact("alice", "Alice keeps goats."))
	if g := gauge(); g != "1" {
		t.Fatalf("gauge %s within the refresh period, want the cached 1", g)
	}
	mu.Lock()
	now = now.Add(httpapi.MetricsRefreshEvery)
	mu.Unlock()
	if g := gauge(); g != "2" {
		t.Fatalf("gauge %s after the refresh period, want 2", g)
	}
}

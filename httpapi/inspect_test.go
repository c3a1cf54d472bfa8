package httpapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/store"
)

// The endpoints the web inspector needs: whoami, stats for a user key, the
// recall history chart and recall preview.

// TestWhoami: every key learns its own record and grant, never its hash
// or secret.
func TestWhoami(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	keys := map[string]string{
		"admin":         h.key("acme", memgate.RoleAdmin, "", ""),
		"agent bound":   h.key("acme", memgate.RoleAgent, "alice", "a1"),
		"agent unbound": h.key("acme", memgate.RoleAgent, "", ""),
		"user":          h.key("acme", memgate.RoleUser, "alice", ""),
	}
	stored, err := h.db.ListKeys(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	recordOf := func(secret string) *memgate.Key {
		for _, k := range stored {
			if k.Hash == auth.Hash(secret) {
				return k
			}
		}
		t.Fatal("minted key not stored")
		return nil
	}
	for name, secret := range keys {
		t.Run(name, func(t *testing.T) {
			rec := recordOf(secret)
			r := h.do("GET", "/v1/whoami", secret, nil).want(t, http.StatusOK)
			var g auth.Grant
			r.decode(t, &g)
			want := auth.GrantOf(rec)
			if g.KeyID != rec.ID || g.Tenant != "acme" || g.Role != rec.Role || g.Principal != rec.Principal || g.Agent != rec.Agent || g.Name != "test" ||
				!slices.Equal(g.Operations, want.Operations) || g.TenantWide != (rec.Role == memgate.RoleAdmin) ||
				g.MayIncludeRestricted != (rec.Role != memgate.RoleAgent) {
				t.Fatalf("whoami %s: %+v, want %+v", name, g, want)
			}
			if !slices.Contains(g.Operations, auth.OpWhoami) || slices.Contains(g.Operations, auth.OpKeys) != (rec.Role == memgate.RoleAdmin) {
				t.Fatalf("operations %v", g.Operations)
			}
			body := string(r.body)
			if strings.Contains(body, rec.Hash) || strings.Contains(body, secret) || strings.Contains(body, secret[len(auth.SecretPrefix):]) ||
				strings.Contains(strings.ToLower(body), "hash") {
				t.Fatalf("whoami carries the hash or the secret: %s", body)
			}
			m := r.json(t)
			if _, ok := m["principal"]; ok != (rec.Principal != "") {
				t.Fatalf("principal present %v for binding %q: %s", ok, rec.Principal, body)
			}
			if _, ok := m["agent"]; ok != (rec.Agent != "") {
				t.Fatalf("agent present %v for binding %q: %s", ok, rec.Agent, body)
			}
		})
	}
	h.do("GET", "/v1/whoami", "", nil).wantError(t, http.StatusUnauthorized, memgate.EUNAUTHORIZED, "")
	h.do("GET", "/v1/whoami?tenant=acme", keys["admin"], nil).wantError(t, http.StatusBadRequest, memgate.EINVALID, "tenant")
	h.do("POST", "/v1/whoami", keys["admin"], nil).wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
}

// TestStatsForAUserKey: a user key counts its own principal's memories and
// may not name another principal.
func TestStatsForAUserKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	h.remember(admin, fact("alice", "Alice lives in Lisbon."))
	h.remember(admin, map[string]any{"principal": "alice", "kind": "preference", "source": "user", "content": "Alice drinks green tea."})
	h.remember(admin, fact("bob", "Bob plays the cello."))
	h.remember(h.key("globex", memgate.RoleAdmin, "", ""), fact("alice", "Globex's Alice lives in Oslo."))

	type stats struct {
		Tenant      string           `json:"tenant"`
		Principal   string           `json:"principal"`
		Total       int64            `json:"total"`
		ByKind      map[string]int64 `json:"by_kind"`
		ByPrincipal map[string]int64 `json:"by_principal"`
	}
	for _, path := range []string{"/v1/stats", "/v1/stats?principal=alice", "/v1/stats?tenant=acme"} {
		var st stats
		h.do("GET", path, user, nil).want(t, http.StatusOK).decode(t, &st)
		if st.Tenant != "acme" || st.Principal != "alice" || st.Total != 2 || st.ByKind["preference"] != 1 || len(st.ByPrincipal) != 1 || st.ByPrincipal["alice"] != 2 {
			t.Fatalf("%s with alice's key: %+v", path, st)
		}
	}
	h.do("GET", "/v1/stats?principal=bob", user, nil).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "principal")
	h.do("GET", "/v1/stats?tenant=globex", user, nil).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "tenant")
	// Control: bob's memory is there for a key that may see it.
	var st stats
	h.do("GET", "/v1/stats?principal=bob", admin, nil).want(t, http.StatusOK).decode(t, &st)
	if st.Total != 1 || st.ByPrincipal["bob"] != 1 {
		t.Fatalf("bob's stats for the admin: %+v", st)
	}
	h.do("GET", "/v1/stats", admin, nil).want(t, http.StatusOK).decode(t, &st)
	if st.Total != 3 || len(st.ByPrincipal) != 2 {
		t.Fatalf("the tenant's stats for the admin: %+v", st)
	}
}

// histogram is the response of GET /v1/audit/histogram.
type histogram struct {
	Action        string `json:"action"`
	BucketSeconds int64  `json:"bucket_seconds"`
	From          string `json:"from"`
	To            string `json:"to"`
	Buckets       []struct {
		Start string `json:"start"`
		Count int64  `json:"count"`
	} `json:"buckets"`
}

func (hg histogram) total() int64 {
	var n int64
	for _, b := range hg.Buckets {
		n += b.Count
	}
	return n
}

// TestAuditHistogramEndpoint: recalls per UTC day or hour, in the scope of
// GET /v1/audit, previews apart, every bucket present.
func TestAuditHistogramEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	agent := h.key("acme", memgate.RoleAgent, "", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	globex := h.key("globex", memgate.RoleAdmin, "", "")
	h.remember(admin, fact("alice", "Alice drinks green tea."))
	h.remember(admin, fact("bob", "Bob drinks coffee."))
	recall := func(principal string, preview bool) {
		k := agent
		if preview {
			k = admin // an agent may not mark its recalls as previews
		}
		h.do("POST", "/v1/recall", k, map[string]any{"principal": principal, "query": "What does she drink? quokkablimp", "preview": preview}).want(t, http.StatusOK)
	}
	recall("alice", false)
	recall("alice", false)
	recall("bob", false)
	recall("alice", true)

	get := func(key, query string) histogram {
		t.Helper()
		var hg histogram
		h.do("GET", "/v1/audit/histogram"+query, key, nil).want(t, http.StatusOK).decode(t, &hg)
		return hg
	}
	before := time.Now().UTC()
	d := get(admin, "")
	after := time.Now().UTC()
	to, err := time.Parse(time.RFC3339, d.To)
	if err != nil {
		t.Fatalf("to %q: %v", d.To, err)
	}
	from, err := time.Parse(time.RFC3339, d.From)
	if err != nil {
		t.Fatalf("from %q: %v", d.From, err)
	}
	midnight := func(t time.Time) time.Time { return t.Truncate(24 * time.Hour).Add(24 * time.Hour) }
	if d.Action != "recall" || d.BucketSeconds != 86400 || len(d.Buckets) != 14 || (!to.Equal(midnight(before)) && !to.Equal(midnight(after))) ||
		!from.Equal(to.Add(-14*24*time.Hour)) || !strings.HasSuffix(d.To, "Z") {
		t.Fatalf("defaults: %+v (now %s)", d, before)
	}
	for i, b := range d.Buckets {
		if start, err := time.Parse(time.RFC3339, b.Start); err != nil || !start.Equal(from.Add(time.Duration(i)*24*time.Hour)) {
			t.Fatalf("bucket %d starts %q", i, b.Start)
		}
	}
	// Recalls just made are counted (the audit queue is flushed first).
	for _, tc := range []struct {
		name, key, query string
		want             int64
	}{
		{"the tenant", admin, "", 3},
		{"alice, by the admin", admin, "?principal=alice", 2},
		{"bob, by the admin", admin, "?principal=bob", 1},
		{"alice's previews", admin, "?principal=alice&action=recall_preview", 1},
		{"alice, by her own key", user, "", 2},
		{"alice, by her own key naming her", user, "?principal=alice&bucket=1h", 2},
		{"carol", admin, "?principal=carol", 0},
		{"another tenant", globex, "", 0},
		{"another action", admin, "?action=forget", 0},
	} {
		if got := get(tc.key, tc.query).total(); got != tc.want {
			t.Errorf("%s: %d events, want %d", tc.name, got, tc.want)
		}
	}
	hr := get(admin, "?bucket=1h&to="+url.QueryEscape(time.Now().UTC().Format(time.RFC3339Nano)))
	if hr.BucketSeconds != 3600 || len(hr.Buckets) != 14 || hr.total() != 3 {
		t.Fatalf("hourly to now: %+v", hr)
	}
	for _, b := range hr.Buckets {
		if start, err := time.Parse(time.RFC3339, b.Start); err != nil || !start.Equal(start.Truncate(time.Hour)) {
			t.Fatalf("hourly bucket starts %q", b.Start)
		}
	}

	// Scope: a user key is its own principal's, an agent key none.
	h.do("GET", "/v1/audit/histogram?principal=bob", user, nil).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "principal")
	h.do("GET", "/v1/audit/histogram?principal=alice", agent, nil).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "")
	h.do("GET", "/v1/audit/histogram?tenant=globex", admin, nil).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "tenant")

	now := time.Now().UTC()
	at := func(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }
	for _, tc := range []struct{ query, field string }{
		{"?bucket=2h", "bucket"},
		{"?bucket=1w", "bucket"},
		{"?bucket=3600", "bucket"},
		{"?action=" + url.QueryEscape("re call"), "action"},
		{"?action=" + strings.Repeat("a", 129), "action"},
		{"?from=" + at(now) + "&to=" + at(now.Add(-time.Hour)), "to"},
		{"?from=" + at(now.Add(-401*24*time.Hour)), "from"},
		{"?bucket=1h&from=" + at(now.Add(-500*time.Hour)), "from"},
		{"?from=yesterday", "from"},
		{"?to=2026-13-01T00:00:00Z", "to"},
		{"?bucket=1h&bucket=1d", "bucket"},
		{"?limit=5", "limit"},
	} {
		h.do("GET", "/v1/audit/histogram"+tc.query, admin, nil).wantError(t, http.StatusBadRequest, memgate.EINVALID, tc.field)
	}
	// Control: the longest range allowed answers.
	if n := len(get(admin, "?from="+at(now.Add(-399*24*time.Hour))).Buckets); n != 400 {
		t.Fatalf("399 days back: %d buckets, want 400", n)
	}
}

// TestRecallPreviewEndpoint: a preview answers the recall's results plus
// the best candidates below the floor, none of them rendered, and is
// audited apart from recalls.
func TestRecallPreviewEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	var ids []string
	for _, c := range []string{
		"Biscuit the dog needs his rabies vaccination renewed every year at the vet.",
		"Alice adopted a golden retriever puppy named Biscuit in March, zqxjvarnish.",
		"Alice walks her dog Biscuit along the river every morning before work.",
		"The quarterly report is due on Friday.",
	} {
		ids = append(ids, h.remember(admin, fact("alice", c)).ID)
	}
	body := map[string]any{"principal": "alice", "query": "rabies vaccination for Biscuit", "min_score": 0.6, "k": 5, "render": true}
	normal := h.do("POST", "/v1/recall", user, body).want(t, http.StatusOK)
	if strings.Contains(string(normal.body), "below_floor_results") {
		t.Fatalf("a recall without preview carries below_floor_results: %s", normal.body)
	}
	var rec engine.RecallResult
	normal.decode(t, &rec)
	body["preview"] = true
	var pre engine.RecallResult
	h.do("POST", "/v1/recall", user, body).want(t, http.StatusOK).decode(t, &pre)

	if len(rec.Results) != 1 || len(pre.Results) != 1 || pre.Results[0].Memory.ID != ids[0] || rec.Results[0].Memory.ID != ids[0] ||
		pre.Results[0].Score != rec.Results[0].Score || pre.MinScore != 0.6 {
		t.Fatalf("preview results %+v, recall results %+v", pre.Results, rec.Results)
	}
	var below []string
	prev := pre.Results[0].Score
	for _, hit := range pre.BelowFloorResults {
		below = append(below, hit.Memory.ID)
		if !(hit.Score > 0 && hit.Score < 0.6 && hit.Score <= prev) || hit.Explain == nil {
			t.Fatalf("below-floor %s: score %v (previous %v), explain %+v", hit.Memory.ID, hit.Score, prev, hit.Explain)
		}
		prev = hit.Score
		if strings.Contains(pre.Context, hit.Memory.ID) || strings.Contains(pre.Context, "golden retriever") {
			t.Fatalf("below-floor %s rendered:\n%s", hit.Memory.ID, pre.Context)
		}
	}
	if len(below) != 2 || !slices.Contains(below, ids[1]) || !slices.Contains(below, ids[2]) {
		t.Fatalf("below the floor: %v, want %s and %s", below, ids[1], ids[2])
	}
	if !strings.Contains(pre.Context, ids[0]) {
		t.Fatalf("control: the result is not rendered:\n%s", pre.Context)
	}

	// The recall history of the result counts the recall, not the
	// preview; the preview is in the log as recall_preview.
	var ap store.AuditPage
	h.do("GET", "/v1/audit?memory_id="+ids[0]+"&action=recall", user, nil).want(t, http.StatusOK).decode(t, &ap)
	if len(ap.Events) != 1 || ap.Events[0].RecallID != rec.RecallID {
		t.Fatalf("recall history of %s: %+v, want the recall %s only", ids[0], ap.Events, rec.RecallID)
	}
	h.do("GET", "/v1/audit?recall_id="+pre.RecallID, user, nil).want(t, http.StatusOK).decode(t, &ap)
	if len(ap.Events) != 1 || ap.Events[0].Action != engine.ActionRecallPreview || ap.Events[0].MemoryIDs[0] != ids[0] {
		t.Fatalf("audit of the preview: %+v", ap.Events)
	}
	h.do("POST", "/v1/recall", user, map[string]any{"principal": "alice", "query": "dog", "preview": "yes"}).wantError(t, http.StatusBadRequest, memgate.EINVALID, "preview")
}

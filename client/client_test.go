package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/client"
)

func TestNewRefusesBadConfiguration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, key, field string }{
		{"", "k", "server"},
		{"127.0.0.1:7070", "k", "server"},
		{"ftp://h", "k", "server"},
		{"http://h?x=1", "k", "server"},
		{"http://u:p@h", "k", "server"},
		{"http://h", "", "key"},
		{"http://h", "a b", "key"},
		{"http://h", "k\n", "key"},
	} {
		if _, err := client.New(tc.url, tc.key); memgate.ErrorField(err) != tc.field {
			t.Errorf("New(%q, %q): %v, want an error naming %s", tc.url, tc.key, err, tc.field)
		}
	}
	if _, err := client.New("http://127.0.0.1:7070/", "k"); err != nil {
		t.Fatalf("control: %v", err)
	}
}

// TestErrorDecoding: every error response becomes a *memgate.Error with the
// server's code, field and message; a body that is not the API's error
// shape gets a code from the status.
func TestErrorDecoding(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        memgate.Error
	}{
		{"api error with field", 409, "application/json", `{"error":{"code":"conflict","message":"memory is at version 3, not 2","field":"If-Match"}}`,
			memgate.Error{Code: memgate.ECONFLICT, Field: "If-Match", Message: "memory is at version 3, not 2"}},
		{"not found", 404, "application/json", `{"error":{"code":"not_found","message":"memory not found"}}`,
			memgate.Error{Code: memgate.ENOTFOUND, Message: "memory not found"}},
		{"unauthenticated", 401, "application/json", `{"error":{"code":"unauthenticated","message":"a valid API key is required"}}`,
			memgate.Error{Code: memgate.EUNAUTHORIZED, Message: "a valid API key is required"}},
		{"forbidden", 403, "application/json", `{"error":{"code":"forbidden","message":"is outside what the API key grants","field":"tenant"}}`,
			memgate.Error{Code: memgate.EFORBIDDEN, Field: "tenant", Message: "is outside what the API key grants"}},
		{"rate limited", 429, "application/json", `{"error":{"code":"rate_limited","message":"slow down"}}`,
			memgate.Error{Code: memgate.ERATELIMITED, Message: "slow down"}},
		{"a code this client does not know", 418, "application/json", `{"error":{"code":"teapot","message":"short and stout"}}`,
			memgate.Error{Code: "teapot", Message: "short and stout"}},
		{"proxy page", 502, "text/html", `<html>bad gateway</html>`,
			memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the server answered 502 Bad Gateway"}},
		{"empty 503", 503, "", ``,
			memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the server answered 503 Service Unavailable"}},
		{"plain 500", 500, "text/plain", `boom`,
			memgate.Error{Code: memgate.EINTERNAL, Message: "the server answered 500 Internal Server Error"}},
		{"JSON without error", 400, "application/json", `{"message":"x"}`,
			memgate.Error{Code: memgate.EINVALID, Message: "the server answered 400 Bad Request"}},
		{"error without code", 404, "application/json", `{"error":{"message":"x"}}`,
			memgate.Error{Code: memgate.ENOTFOUND, Message: "the server answered 404 Not Found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, err := client.New(srv.URL, "mgk_test")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Get(t.Context(), client.Scope{Principal: "alice"}, "m_1")
			var me *memgate.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *memgate.Error", err, err)
			}
			if *me != tc.want {
				t.Fatalf("error %+v, want %+v", *me, tc.want)
			}
			if memgate.ErrorCode(err) != tc.want.Code {
				t.Fatalf("ErrorCode %s, want %s", memgate.ErrorCode(err), tc.want.Code)
			}
		})
	}
}

func TestUnreachableServerIsUnavailable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, _ := client.New(url, "mgk_test")
	err := c.Health(t.Context())
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
		t.Fatalf("Health of a closed server: %v, want unavailable", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Health(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Health with a cancelled context: %v, want context.Canceled", err)
	}
}

// recorded is one request the fake server saw.
type recorded struct {
	method, path, rawPath, query string
	header                       http.Header
	body                         string
}

// TestRequestShapes checks that every method sends the route, query,
// headers and body the API documents, to a fake that records them.
func TestRequestShapes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got recorded
	reply := `{}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = recorded{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Header.Clone(), string(b)}
		out := reply
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, out)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL+"/", "mgk_secret")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	alice := client.Scope{Principal: "alice", Agent: "helper"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	minScore := 0.3
	content, kind := "new text", memgate.KindPreference

	cases := []struct {
		name       string
		reply      string
		call       func() error
		method     string
		path       string
		query      string
		body       string // JSON, compared semantically; "" means no body
		ifMatch    string
		rawPathSet bool
	}{
		{"remember", `{"memories":[{"id":"m_1","deduplicated":false}]}`, func() error {
			_, err := c.Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser,
				Content: "Alice drinks tea.", Metadata: map[string]any{"topic": "drinks"}, TTL: 90 * time.Minute, ValidFrom: &t0})
			return err
		}, "POST", "/v1/memories", "",
			`{"principal":"alice","kind":"fact","source":"user","content":"Alice drinks tea.","metadata":{"topic":"drinks"},"ttl":"1h30m0s","valid_from":"2026-01-02T03:04:05.0000006Z"}`, "", false},
		{"remember batch", `{"memories":[{"id":"m_1"},{"id":"m_2","deduplicated":true}]}`, func() error {
			out, err := c.RememberBatch(ctx, []client.Memory{
				{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "one"},
				{Principal: "bob", Kind: memgate.KindTask, Source: memgate.SourceTool, Content: "two", Supersedes: ""},
			})
			if err == nil && (len(out) != 2 || out[1].ID != "m_2" || !out[1].Deduplicated) {
				t.Errorf("RememberBatch decoded %+v", out)
			}
			return err
		}, "POST", "/v1/memories", "",
			`{"memories":[{"principal":"alice","kind":"fact","source":"user","content":"one"},{"principal":"bob","kind":"task","source":"tool","content":"two"}]}`, "", false},
		{"recall", `{"recall_id":"r_1","results":[],"below_floor":2,"min_score":0.3}`, func() error {
			res, err := c.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "tea?", K: 3, MinScore: &minScore,
				Kinds: []memgate.Kind{memgate.KindFact}, Metadata: map[string]any{"topic": "drinks"}, AsOf: &t0, Explain: true})
			if err == nil && (res.RecallID != "r_1" || res.BelowFloor != 2) {
				t.Errorf("Recall decoded %+v", res)
			}
			return err
		}, "POST", "/v1/recall", "",
			`{"principal":"alice","query":"tea?","k":3,"min_score":0.3,"kinds":["fact"],"metadata":{"topic":"drinks"},"as_of":"2026-01-02T03:04:05.0000006Z","explain":true}`, "", false},
		{"list", `{"memories":[],"next_cursor":"c2","limit":10}`, func() error {
			p, err := c.List(ctx, client.ListRequest{Scope: alice, Kinds: []memgate.Kind{"fact", "task"}, Statuses: []memgate.Status{"active"},
				Q: "green tea & (x)", Limit: 10, Cursor: "c1"})
			if err == nil && (p.NextCursor != "c2" || p.Limit != 10) {
				t.Errorf("List decoded %+v", p)
			}
			return err
		}, "GET", "/v1/memories", "agent=helper&cursor=c1&kind=fact&kind=task&limit=10&principal=alice&q=green+tea+%26+%28x%29&status=active", "", "", false},
		{"get", `{"id":"m/1?x","version":3}`, func() error {
			m, err := c.Get(ctx, alice, "m/1?x")
			if err == nil && (m.ID != "m/1?x" || m.Version != 3) {
				t.Errorf("Get decoded %+v", m)
			}
			return err
		}, "GET", "/v1/memories/m/1?x", "agent=helper&principal=alice", "", "", true},
		{"update", `{"id":"m_1","version":4}`, func() error {
			_, err := c.Update(ctx, alice, "m_1", 3, client.Patch{Content: &content, Kind: &kind, SetMetadata: true, ClearExpiresAt: true})
			return err
		}, "PATCH", "/v1/memories/m_1", "agent=helper&principal=alice", `{"content":"new text","kind":"preference","metadata":null,"expires_at":null}`, `"3"`, false},
		{"update with ttl", `{"id":"m_1","version":5}`, func() error {
			_, err := c.Update(ctx, client.Scope{}, "m_1", 4, client.Patch{TTL: 48 * time.Hour, Metadata: map[string]any{"a": 1}, SetMetadata: true, ValidUntil: &t0})
			return err
		}, "PATCH", "/v1/memories/m_1", "", `{"ttl":"48h0m0s","metadata":{"a":1},"valid_until":"2026-01-02T03:04:05.0000006Z"}`, `"4"`, false},
		{"delete", `{"deleted":"m_1"}`, func() error { return c.Delete(ctx, alice, "m_1") },
			"DELETE", "/v1/memories/m_1", "agent=helper&principal=alice", "", "", false},
		{"revoke", `{"id":"m_1","status":"revoked"}`, func() error { _, err := c.Revoke(ctx, alice, "m_1", "user asked"); return err },
			"POST", "/v1/memories/m_1/revoke", "agent=helper&principal=alice", `{"reason":"user asked"}`, "", false},
		{"approve", `{"id":"m_1","status":"active"}`, func() error { _, err := c.Approve(ctx, client.Scope{Principal: "alice"}, "m_1", 2); return err },
			"POST", "/v1/memories/m_1/approve", "principal=alice", `{}`, `"2"`, false},
		{"reject", `{"id":"m_1","status":"revoked"}`, func() error { _, err := c.Reject(ctx, client.Scope{Principal: "alice"}, "m_1", 1, ""); return err },
			"POST", "/v1/memories/m_1/reject", "principal=alice", `{}`, `"1"`, false},
		{"feedback", `{"id":"m_1"}`, func() error { _, err := c.Feedback(ctx, client.Scope{Principal: "alice"}, "m_1", -0.5); return err },
			"POST", "/v1/memories/m_1/feedback", "principal=alice", `{"value":-0.5}`, "", false},
		{"feedback zero", `{"id":"m_1"}`, func() error { _, err := c.Feedback(ctx, client.Scope{Principal: "alice"}, "m_1", 0); return err },
			"POST", "/v1/memories/m_1/feedback", "principal=alice", `{"value":0}`, "", false},
		{"forget", `{"tenant":"acme","principal":"alice","forgotten":3}`, func() error {
			rc, err := c.Forget(ctx, "alice")
			if err == nil && rc.Forgotten != 3 {
				t.Errorf("Forget decoded %+v", rc)
			}
			return err
		}, "POST", "/v1/forget", "", `{"principal":"alice"}`, "", false},
		{"audit", `{"events":[],"limit":50}`, func() error {
			_, err := c.Audit(ctx, client.AuditRequest{Principal: "alice", MemoryID: "m_1", Action: "recall", From: t0, Limit: 5})
			return err
		}, "GET", "/v1/audit", "action=recall&from=2026-01-02T03%3A04%3A05.0000006Z&limit=5&memory_id=m_1&principal=alice", "", "", false},
		{"stats", `{"tenant":"acme","total":2,"by_status":{"active":2}}`, func() error {
			st, err := c.Stats(ctx, client.Scope{})
			if err == nil && (st.Total != 2 || st.ByStatus["active"] != 2) {
				t.Errorf("Stats decoded %+v", st)
			}
			return err
		}, "GET", "/v1/stats", "", "", "", false},
		{"health", `{"status":"ok"}`, func() error { return c.Health(ctx) }, "GET", "/healthz", "", "", "", false},
		{"recall preview", `{"recall_id":"r_2","results":[],"below_floor":1,"min_score":0.22,"below_floor_results":[{"memory":{"id":"m_9"},"score":0.1,"explain":{"text":0.2}}]}`, func() error {
			res, err := c.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "tea?", Preview: true})
			if err == nil && (len(res.BelowFloorResults) != 1 || res.BelowFloorResults[0].Memory.ID != "m_9" || res.BelowFloorResults[0].Explain == nil || res.BelowFloorResults[0].Explain.Text != 0.2) {
				t.Errorf("Recall preview decoded %+v", res)
			}
			return err
		}, "POST", "/v1/recall", "", `{"principal":"alice","query":"tea?","preview":true}`, "", false},
		{"audit histogram", `{"action":"recall_preview","bucket_seconds":3600,"from":"2026-01-02T03:00:00Z","to":"2026-01-02T05:00:00Z","buckets":[{"start":"2026-01-02T03:00:00Z","count":4},{"start":"2026-01-02T04:00:00Z","count":0}]}`, func() error {
			hg, err := c.AuditHistogram(ctx, client.AuditHistogramRequest{Principal: "alice", Action: "recall_preview", Bucket: time.Hour, From: t0, To: t0.Add(2 * time.Hour)})
			if err == nil && (hg.BucketSeconds != 3600 || len(hg.Buckets) != 2 || hg.Buckets[0].Count != 4 || !hg.Buckets[1].Start.Equal(time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC))) {
				t.Errorf("AuditHistogram decoded %+v", hg)
			}
			return err
		}, "GET", "/v1/audit/histogram", "action=recall_preview&bucket=1h&from=2026-01-02T03%3A04%3A05.0000006Z&principal=alice&to=2026-01-02T05%3A04%3A05.0000006Z", "", "", false},
		{"audit histogram by day", `{"action":"recall","bucket_seconds":86400,"buckets":[]}`, func() error {
			_, err := c.AuditHistogram(ctx, client.AuditHistogramRequest{Bucket: 24 * time.Hour})
			return err
		}, "GET", "/v1/audit/histogram", "bucket=1d", "", "", false},
		{"audit histogram defaults", `{"action":"recall","bucket_seconds":86400,"buckets":[]}`, func() error {
			_, err := c.AuditHistogram(ctx, client.AuditHistogramRequest{})
			return err
		}, "GET", "/v1/audit/histogram", "", "", "", false},
		{"whoami", `{"key_id":"key_1","tenant":"acme","role":"user","principal":"alice","operations":["recall","stats","whoami"],"tenant_wide":false,"may_include_restricted":true}`, func() error {
			g, err := c.Whoami(ctx)
			if err == nil && (g.KeyID != "key_1" || g.Role != memgate.RoleUser || g.Principal != "alice" || len(g.Operations) != 3 || g.Operations[1] != auth.OpStats || g.TenantWide || !g.MayIncludeRestricted) {
				t.Errorf("Whoami decoded %+v", g)
			}
			return err
		}, "GET", "/v1/whoami", "", "", "", false},
		{"chat", `{"conversation":"c_1","reply":"Hi.","model":{"provider":"ollama","model":"llama3.2"},"recall":{"recall_id":"r_3","results":[{"memory":{"id":"m_7"},"score":0.5}],"below_floor":0,"min_score":0.22},"remembered":[{"id":"m_8","kind":"message","source":"user","status":"active","deduplicated":false},{"kind":"message","source":"assistant","status":"refused","deduplicated":false,"error":{"code":"too_large","message":"content: is too long"}}],"extraction":{"proposed":1,"dropped":0,"malformed":0,"stored":1,"deduplicated":0,"refused":0,"pending_ids":["m_9"],"memories":[{"id":"m_9","kind":"fact","source":"assistant","status":"pending","deduplicated":false,"supersedes":"m_7","content":"Lives in Oslo."}]}}`, func() error {
			res, err := c.Chat(ctx, client.ChatRequest{Principal: "alice", Message: "hello"})
			if err == nil && (res.Conversation != "c_1" || res.Reply != "Hi." || res.Model.Model != "llama3.2" || res.Recall.Results[0].Memory.ID != "m_7" ||
				len(res.Remembered) != 2 || res.Remembered[1].Error.Code != memgate.ETOOLARGE ||
				res.Extraction.PendingIDs[0] != "m_9" || res.Extraction.Memories[0].Supersedes != "m_7") {
				t.Errorf("Chat decoded %+v", res)
			}
			return err
		}, "POST", "/v1/chat", "", `{"principal":"alice","message":"hello"}`, "", false},
	}
	for _, tc := range cases {
		mu.Lock()
		reply = tc.reply
		mu.Unlock()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mu.Lock()
		g := got
		mu.Unlock()
		if g.method != tc.method || g.path != tc.path || g.query != tc.query {
			t.Errorf("%s: sent %s %s ?%s, want %s %s ?%s", tc.name, g.method, g.path, g.query, tc.method, tc.path, tc.query)
		}
		if tc.rawPathSet && !strings.Contains(g.rawPath, "%2F") {
			t.Errorf("%s: the id was not escaped in the path (raw %q)", tc.name, g.rawPath)
		}
		if a := g.header.Get("Authorization"); a != "Bearer mgk_secret" {
			t.Errorf("%s: Authorization %q", tc.name, a)
		}
		if im := g.header.Get("If-Match"); im != tc.ifMatch {
			t.Errorf("%s: If-Match %q, want %q", tc.name, im, tc.ifMatch)
		}
		switch {
		case tc.body == "" && g.body != "":
			t.Errorf("%s: sent body %s, want none", tc.name, g.body)
		case tc.body != "":
			if ct := g.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", tc.name, ct)
			}
			if !sameJSON(t, g.body, tc.body) {
				t.Errorf("%s: sent body\n  %s\nwant\n  %s", tc.name, g.body, tc.body)
			}
		}
	}

	// Import sends the JSONL as it is; Export streams the body back.
	mu.Lock()
	reply = `{"lines":1,"imported":1,"batches":1}`
	mu.Unlock()
	jsonl := `{"principal":"alice","kind":"fact","content":"x"}` + "\n"
	res, err := c.Import(ctx, strings.NewReader(jsonl))
	if err != nil || res.Imported != 1 {
		t.Fatalf("Import: %+v, %v", res, err)
	}
	mu.Lock()
	if got.method != "POST" || got.path != "/v1/import" || got.body != jsonl || got.header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("Import sent %+v", got)
	}
	reply = jsonl + jsonl
	mu.Unlock()
	var buf bytes.Buffer
	n, err := c.Export(ctx, client.Scope{Principal: "alice"}, &buf)
	if err != nil || n != int64(2*len(jsonl)) || buf.String() != jsonl+jsonl {
		t.Fatalf("Export: %d, %v, %q", n, err, buf.String())
	}
	mu.Lock()
	if got.method != "GET" || got.path != "/v1/export" || got.query != "principal=alice" {
		t.Errorf("Export sent %+v", got)
	}
	mu.Unlock()

	// Refused before anything is sent.
	if _, err := c.Update(ctx, alice, "m_1", 0, client.Patch{Content: &content}); memgate.ErrorField(err) != "version" {
		t.Errorf("Update without a version: %v", err)
	}
	if _, err := c.Get(ctx, alice, ""); memgate.ErrorField(err) != "id" {
		t.Errorf("Get without an id: %v", err)
	}
	for _, b := range []time.Duration{2 * time.Hour, time.Minute, -time.Hour, 7 * 24 * time.Hour} {
		mu.Lock()
		got = recorded{}
		mu.Unlock()
		if _, err := c.AuditHistogram(ctx, client.AuditHistogramRequest{Bucket: b}); memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "bucket" {
			t.Errorf("AuditHistogram with a bucket of %s: %v", b, err)
		}
		mu.Lock()
		if got.method != "" {
			t.Errorf("AuditHistogram with a bucket of %s sent %s %s", b, got.method, got.path)
		}
		mu.Unlock()
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// The server's message names the field ("tenant: is fixed by the key"); the
// decoded error must name it once, exactly like the engine's own error.
func TestDecodeErrorNamesFieldOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":"forbidden","message":"tenant: is outside what the API key grants","field":"tenant"}}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "mgk_test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(t.Context(), client.Scope{Principal: "p"}, "m_1")
	want := &memgate.Error{Code: memgate.EFORBIDDEN, Field: "tenant", Message: "is outside what the API key grants"}
	if err == nil || err.Error() != want.Error() || memgate.ErrorField(err) != "tenant" || memgate.ErrorCode(err) != memgate.EFORBIDDEN {
		t.Fatalf("decoded %v, want %v", err, want)
	}
}

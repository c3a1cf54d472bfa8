package isolation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/memgate/memgate"
)

// httpDriver calls the REST API on the test server with the caller's key,
// sending the narrowing fields where the API takes them (body or query).
type httpDriver struct {
	w      *world
	client *http.Client
}

func newHTTPDriver(w *world) *httpDriver {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	w.t.Cleanup(tr.CloseIdleConnections)
	return &httpDriver{w: w, client: &http.Client{Transport: tr}}
}

// do sends a request and returns the body of a 2xx answer, or the answer
// as an *apiError.
func (d *httpDriver) do(c *caller, method, path string, q url.Values, body any, hdr ...string) ([]byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			d.w.fatalf("%v", err)
		}
		rd = bytes.NewReader(j)
	}
	u := d.w.url + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(d.w.ctx, method, u, rd)
	if err != nil {
		d.w.fatalf("%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.secret)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := d.client.Do(req)
	if err != nil {
		d.w.fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		d.w.fatalf("%s %s: read: %v", method, path, err)
	}
	if res.StatusCode/100 == 2 {
		return b, nil
	}
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" {
		return nil, &apiError{Status: res.StatusCode, Code: "malformed", Message: string(b)}
	}
	return nil, &apiError{Status: res.StatusCode, Code: e.Error.Code, Field: e.Error.Field, Message: e.Error.Message, Body: string(b)}
}

func decodeInto(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return &apiError{Code: "malformed", Message: fmt.Sprintf("%v: %s", err, b)}
	}
	return nil
}

// scopeQuery is the narrowing fields as query parameters.
func scopeQuery(r scopeReq) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"tenant": r.Tenant, "principal": r.Principal, "agent": r.Agent, "conversation": r.Conversation} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// scopeBody is the narrowing fields as JSON members, absent when empty.
func scopeBody(r scopeReq) map[string]any {
	b := map[string]any{}
	for k, v := range scopeQuery(r) {
		b[k] = v[0]
	}
	return b
}

func memoryPath(id string) string { return "/v1/memories/" + url.PathEscape(id) }

// memoryBody is one memory of POST /v1/memories.
func memoryBody(r scopeReq, in rememberIn) map[string]any {
	body := scopeBody(r)
	body["kind"], body["source"], body["content"] = in.Kind, in.Source, in.Content
	if in.Sensitivity != "" {
		body["sensitivity"] = in.Sensitivity
	}
	if in.Supersedes != "" {
		body["supersedes"] = in.Supersedes
	}
	if in.Key != "" {
		body["key"] = in.Key
	}
	return body
}

type remembered struct {
	Memories []struct {
		*memgate.Memory
		Replayed bool `json:"replayed"`
	}
}

func (d *httpDriver) remember(c *caller, r scopeReq, in rememberIn) (*memgate.Memory, bool, error) {
	body := memoryBody(r, in)
	var hdr []string
	if in.IdempotencyKey != "" {
		hdr = []string{"Idempotency-Key", in.IdempotencyKey}
	}
	b, err := d.do(c, "POST", "/v1/memories", nil, body, hdr...)
	if err != nil {
		return nil, false, err
	}
	var out remembered
	if err := decodeInto(b, &out); err != nil {
		return nil, false, err
	}
	if len(out.Memories) != 1 || out.Memories[0].Memory == nil {
		return nil, false, &apiError{Code: "malformed", Message: fmt.Sprintf("%d memories remembered: %s", len(out.Memories), b)}
	}
	return out.Memories[0].Memory, out.Memories[0].Replayed, nil
}

// rememberBatch sends the batch form: the tenant, when named, on the
// batch; the other narrowing fields on each memory.
func (d *httpDriver) rememberBatch(c *caller, r scopeReq, ins []rememberIn) ([]*memgate.Memory, error) {
	item := r
	item.Tenant = ""
	var ms []map[string]any
	for _, in := range ins {
		ms = append(ms, memoryBody(item, in))
	}
	body := map[string]any{"memories": ms}
	if r.Tenant != "" {
		body["tenant"] = r.Tenant
	}
	b, err := d.do(c, "POST", "/v1/memories", nil, body)
	if err != nil {
		return nil, err
	}
	var out remembered
	if err := decodeInto(b, &out); err != nil {
		return nil, err
	}
	if len(out.Memories) != len(ins) {
		return nil, &apiError{Code: "malformed", Message: fmt.Sprintf("%d memories remembered of %d: %s", len(out.Memories), len(ins), b)}
	}
	var all []*memgate.Memory
	for _, m := range out.Memories {
		if m.Memory == nil {
			return nil, &apiError{Code: "malformed", Message: fmt.Sprintf("a null memory remembered: %s", b)}
		}
		all = append(all, m.Memory)
	}
	return all, nil
}

func (d *httpDriver) recall(c *caller, r scopeReq, in recallIn) ([]*memgate.Memory, error) {
	body := scopeBody(r)
	body["query"], body["k"] = in.Query, in.K
	if len(in.Kinds) > 0 {
		body["kinds"] = in.Kinds
	}
	if in.IncludeRestricted {
		body["include_restricted"] = true
	}
	if in.Preview {
		body["preview"] = true
	}
	b, err := d.do(c, "POST", "/v1/recall", nil, body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []struct{ Memory *memgate.Memory }
	}
	if err := decodeInto(b, &out); err != nil {
		return nil, err
	}
	var ms []*memgate.Memory
	for _, h := range out.Results {
		ms = append(ms, h.Memory)
	}
	return ms, nil
}

func (d *httpDriver) list(c *caller, r scopeReq, in listIn) ([]*memgate.Memory, error) {
	q := scopeQuery(r)
	for _, k := range in.Kinds {
		q.Add("kind", string(k))
	}
	if in.Status != "" {
		q.Set("status", string(in.Status))
	}
	if in.Text != "" {
		q.Set("q", in.Text)
	}
	q.Set("limit", "500")
	var all []*memgate.Memory
	for {
		b, err := d.do(c, "GET", "/v1/memories", q, nil)
		if err != nil {
			return nil, err
		}
		var out struct {
			Memories   []*memgate.Memory
			NextCursor string `json:"next_cursor"`
		}
		if err := decodeInto(b, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Memories...)
		if out.NextCursor == "" {
			return all, nil
		}
		q.Set("cursor", out.NextCursor)
	}
}

func (d *httpDriver) oneMemory(b []byte, err error) (*memgate.Memory, error) {
	if err != nil {
		return nil, err
	}
	var m memgate.Memory
	if err := decodeInto(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

func (d *httpDriver) get(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	return d.oneMemory(d.do(c, "GET", memoryPath(id), scopeQuery(r), nil))
}

func (d *httpDriver) update(c *caller, r scopeReq, id string, version int64, in updateIn) (*memgate.Memory, error) {
	body := map[string]any{"reason": in.Reason}
	if in.Content != "" {
		body = map[string]any{"content": in.Content}
	}
	return d.oneMemory(d.do(c, "PATCH", memoryPath(id), scopeQuery(r), body, "If-Match", strconv.Quote(strconv.FormatInt(version, 10))))
}

func (d *httpDriver) revoke(c *caller, r scopeReq, id string) (*memgate.Memory, error) {
	return d.oneMemory(d.do(c, "POST", memoryPath(id)+"/revoke", scopeQuery(r), map[string]any{"reason": "isolation test"}))
}

// approve sends the version reviewed as If-Match (none for version 0).
func (d *httpDriver) approve(c *caller, r scopeReq, id string, version int64) (*memgate.Memory, error) {
	var hdr []string
	if version != 0 {
		hdr = []string{"If-Match", strconv.Quote(strconv.FormatInt(version, 10))}
	}
	return d.oneMemory(d.do(c, "POST", memoryPath(id)+"/approve", scopeQuery(r), nil, hdr...))
}

func (d *httpDriver) delete(c *caller, r scopeReq, id string) error {
	b, err := d.do(c, "DELETE", memoryPath(id), scopeQuery(r), nil)
	if err != nil {
		return err
	}
	var out struct{ Deleted string }
	if err := decodeInto(b, &out); err != nil {
		return err
	}
	if out.Deleted != id {
		return &apiError{Code: "malformed", Message: fmt.Sprintf("deleted %q, asked %q", out.Deleted, id)}
	}
	return nil
}

func (d *httpDriver) forget(c *caller, r scopeReq) (int64, error) {
	body := map[string]any{}
	if r.Tenant != "" {
		body["tenant"] = r.Tenant
	}
	if r.Principal != "" {
		body["principal"] = r.Principal
	}
	b, err := d.do(c, "POST", "/v1/forget", nil, body)
	if err != nil {
		return 0, err
	}
	var out struct{ Forgotten int64 }
	if err := decodeInto(b, &out); err != nil {
		return 0, err
	}
	return out.Forgotten, nil
}

func (d *httpDriver) importJSONL(c *caller, r scopeReq, body []byte) (int, error) {
	q := url.Values{}
	if r.Tenant != "" {
		q.Set("tenant", r.Tenant)
	}
	if body == nil {
		body = []byte{}
	}
	b, err := d.do(c, "POST", "/v1/import", q, body)
	if err != nil {
		return 0, err
	}
	var out struct{ Imported int }
	if err := decodeInto(b, &out); err != nil {
		return 0, err
	}
	return out.Imported, nil
}

func (d *httpDriver) export(c *caller, r scopeReq) ([]*memgate.Memory, [][]byte, error) {
	b, err := d.do(c, "GET", "/v1/export", scopeQuery(r), nil)
	if err != nil {
		return nil, nil, err
	}
	return parseJSONL(b)
}

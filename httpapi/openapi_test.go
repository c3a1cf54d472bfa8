package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/wire"
	"github.com/memgate/memgate/store"
)

type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
	Comps   struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			AllOf      []json.RawMessage          `json:"allOf"`
		} `json:"schemas"`
	} `json:"components"`
}

func parseDoc(t *testing.T) openAPIDoc {
	t.Helper()
	var d openAPIDoc
	if err := json.Unmarshal(openAPIDocument, &d); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if !strings.HasPrefix(d.OpenAPI, "3.1.") {
		t.Fatalf("openapi is %q, want 3.1.x", d.OpenAPI)
	}
	return d
}

// testServer builds the handler without an engine or authorizer behind it:
// enough to list its routes and probe its mux.
func testServer() *server {
	s := &server{cfg: Config{}.WithDefaults(), mux: http.NewServeMux()}
	s.log = s.cfg.Logger
	s.metrics = newMetrics(nil, s.cfg.Now)
	s.register()
	return s
}

// TestOpenAPIMatchesRoutes: every route the mux serves is in the document
// with the same method, and every operation of the document is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	d := parseDoc(t)
	s := testServer()
	var served, documented []string
	for _, rt := range s.routes() {
		served = append(served, rt.method+" "+rt.path)
		// The mux answers this method and path with the route's handler,
		// not with the 404/405 fallbacks.
		path := strings.ReplaceAll(rt.path, "{id}", "m_x")
		req := httptest.NewRequest(rt.method, path, nil)
		if _, pattern := s.mux.Handler(req); pattern != rt.method+" "+rt.path {
			t.Errorf("%s %s is served by pattern %q", rt.method, path, pattern)
		}
	}
	for path, ops := range d.Paths {
		for m, raw := range ops {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				var op struct {
					ServedBy string `json:"x-served-by"`
				}
				if err := json.Unmarshal(raw, &op); err != nil {
					t.Fatal(err)
				}
				if op.ServedBy != "" {
					// /mcp: the mcpserver package's handler, mounted
					// beside this API by memgate serve (server's tests
					// call it there).
					continue
				}
				documented = append(documented, strings.ToUpper(m)+" "+path)
			}
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if !slices.Equal(served, documented) {
		t.Fatalf("routes and document differ:\nserved     %v\ndocumented %v", served, documented)
	}
	// Every documented operation has a method the mux knows at its path
	// (no 405) — the probe from the document's side.
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		req := httptest.NewRequest(method, strings.ReplaceAll(path, "{id}", "m_x"), nil)
		if _, pattern := s.mux.Handler(req); pattern != op {
			t.Errorf("documented %s is served by pattern %q", op, pattern)
		}
	}
}

// TestOpenAPIRoles: the roles each operation documents are those
// auth.Allowed admits.
func TestOpenAPIRoles(t *testing.T) {
	t.Parallel()
	d := parseDoc(t)
	for _, rt := range testServer().routes() {
		if rt.op == "" {
			continue
		}
		var op struct {
			Roles []string `json:"x-roles"`
		}
		if err := json.Unmarshal(d.Paths[rt.path][strings.ToLower(rt.method)], &op); err != nil {
			t.Fatal(err)
		}
		var allowed []string
		for _, r := range memgate.Roles {
			if auth.Allowed(r, rt.op) {
				allowed = append(allowed, string(r))
			}
		}
		sort.Strings(allowed)
		sort.Strings(op.Roles)
		if !slices.Equal(allowed, op.Roles) {
			t.Errorf("%s %s documents roles %v, auth allows %v", rt.method, rt.path, op.Roles, allowed)
		}
	}
}

// jsonFields returns the JSON field names of a struct type, following
// embedded structs as encoding/json does.
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TestOpenAPISchemas: the document's request schemas hold exactly the
// fields the handlers decode, and its response schemas exactly the fields
// they encode.
func TestOpenAPISchemas(t *testing.T) {
	t.Parallel()
	d := parseDoc(t)
	for name, typ := range map[string]reflect.Type{
		"MemoryInput":     reflect.TypeFor[memoryInput](),
		"BatchInput":      reflect.TypeFor[batchInput](),
		"RecallRequest":   reflect.TypeFor[recallInput](),
		"Patch":           reflect.TypeFor[patchInput](),
		"ReasonBody":      reflect.TypeFor[reasonInput](),
		"FeedbackBody":    reflect.TypeFor[feedbackInput](),
		"ForgetBody":      reflect.TypeFor[forgetInput](),
		"Memory":          reflect.TypeFor[memgate.Memory](),
		"MemoryList":      reflect.TypeFor[memoryList](),
		"RecallResult":    reflect.TypeFor[engine.RecallResult](),
		"RecallHit":       reflect.TypeFor[engine.RecallHit](),
		"ForgetReceipt":   reflect.TypeFor[engine.ForgetReceipt](),
		"AuditPage":       reflect.TypeFor[store.AuditPage](),
		"AuditEvent":      reflect.TypeFor[store.AuditEvent](),
		"AuditHistogram":  reflect.TypeFor[engine.AuditHistogram](),
		"HistogramBucket": reflect.TypeFor[engine.HistogramBucket](),
		"Whoami":          reflect.TypeFor[whoamiResponse](),
		"ServerInfo":      reflect.TypeFor[serverInfo](),
		"OwnerBody":       reflect.TypeFor[idOwner](),
		"IngestRequest":   reflect.TypeFor[ingestInput](),
		"IngestMessage":   reflect.TypeFor[memgate.IngestMessage](),
		"IngestResult":    reflect.TypeFor[memgate.IngestResult](),
		"Health":          reflect.TypeFor[healthResponse](),
		"ReadyCheck":      reflect.TypeFor[engine.ReadyCheck](),
		"Count":           reflect.TypeFor[store.Count](),
		"Stats":           reflect.TypeFor[statsResponse](),
		"ImportResult":    reflect.TypeFor[engine.ImportResult](),
		"Error":           reflect.TypeFor[wire.ErrorBody](),
		"ChatRequest":     reflect.TypeFor[chatInput](),
		"ChatResult":      reflect.TypeFor[agent.Result](),
		"ChatOutcome":     reflect.TypeFor[agent.Outcome](),
		"ChatExtraction":  reflect.TypeFor[agent.Extraction](),
		"ChatError":       reflect.TypeFor[agent.ErrorInfo](),
		"Key":             reflect.TypeFor[memgate.Key](),
		"KeyInput":        reflect.TypeFor[keyInput](),
		"CreatedKey":      reflect.TypeFor[createdKey](),
		"KeyList":         reflect.TypeFor[keyList](),
	} {
		sc, ok := d.Comps.Schemas[name]
		if !ok {
			t.Errorf("schema %s missing", name)
			continue
		}
		var doc []string
		for p := range sc.Properties {
			doc = append(doc, p)
		}
		sort.Strings(doc)
		if code := jsonFields(typ); !slices.Equal(doc, code) {
			t.Errorf("schema %s has %v, the code %v", name, doc, code)
		}
		for _, r := range sc.Required {
			if _, ok := sc.Properties[r]; !ok {
				t.Errorf("schema %s requires unknown %s", name, r)
			}
		}
	}
	var rem struct {
		AllOf []struct {
			Ref        string                     `json:"$ref"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"allOf"`
	}
	raw, _ := json.Marshal(d.Comps.Schemas["Remembered"])
	json.Unmarshal(raw, &rem)
	if len(rem.AllOf) != 2 || rem.AllOf[0].Ref != "#/components/schemas/Memory" || rem.AllOf[1].Properties["deduplicated"] == nil {
		t.Errorf("schema Remembered is not Memory + deduplicated: %s", raw)
	}
	// Every $ref resolves.
	var all any
	json.Unmarshal(openAPIDocument, &all)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !resolves(all, ref) {
					t.Errorf("$ref %s does not resolve", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(all)
}

func resolves(doc any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	cur := doc
	for _, part := range strings.Split(p, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPILint holds the document to the rules of Redocly's
// "recommended" ruleset (and what openapi-typescript needs to generate
// types), checked here so the suite needs no npm package: info-license
// and info-license-url, a non-empty servers list without a trailing slash
// or example.com, every operation with a unique URL-safe operationId, a
// summary, declared tags, a 2xx and a 4xx response (public probes aside),
// security declared, path parameters defined and unique, no query in a
// path, no ambiguous paths, every $ref resolving and no unused component.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	info := obj(doc["info"])
	if lic := obj(info["license"]); lic["name"] == nil || (lic["url"] == nil) == (lic["identifier"] == nil) {
		t.Errorf("info.license %v: needs a name and exactly one of url and identifier", lic)
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) == 0 {
		t.Error("no servers")
	}
	for _, sv := range servers {
		u, _ := obj(sv)["url"].(string)
		if u == "" || (strings.HasSuffix(u, "/") && u != "/") || strings.Contains(u, "example.com") {
			t.Errorf("server url %q", u)
		}
		for _, v := range regexp.MustCompile(`\{(\w+)\}`).FindAllStringSubmatch(u, -1) {
			if obj(obj(obj(sv)["variables"])[v[1]])["default"] == nil {
				t.Errorf("server variable %s has no default", v[1])
			}
		}
	}
	declared := map[string]bool{}
	for _, tg := range doc["tags"].([]any) {
		name, _ := obj(tg)["name"].(string)
		if name == "" || obj(tg)["description"] == nil || declared[name] {
			t.Errorf("tag %v: needs a unique name and a description", tg)
		}
		declared[name] = true
	}
	usedTags := map[string]bool{}
	ids := map[string]string{}
	globalSecurity := doc["security"] != nil
	paramRE := regexp.MustCompile(`\{([^}]+)\}`)
	var templates []string
	for path, item := range obj(doc["paths"]) {
		if strings.Contains(path, "?") {
			t.Errorf("path %s holds a query", path)
		}
		tmpl := paramRE.ReplaceAllString(path, "{}")
		if slices.Contains(templates, tmpl) {
			t.Errorf("path %s is ambiguous with another", path)
		}
		templates = append(templates, tmpl)
		for method, o := range obj(item) {
			op := obj(o)
			where := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" || !regexp.MustCompile(`^[A-Za-z0-9_.-]+$`).MatchString(id) {
				t.Errorf("%s: operationId %q", where, id)
			} else if other, dup := ids[id]; dup {
				t.Errorf("%s: operationId %s also on %s", where, id, other)
			}
			ids[id] = where
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s: no summary", where)
			}
			tags, _ := op["tags"].([]any)
			if len(tags) == 0 {
				t.Errorf("%s: no tags", where)
			}
			for _, tg := range tags {
				name, _ := tg.(string)
				usedTags[name] = true
				if !declared[name] {
					t.Errorf("%s: tag %q is not declared", where, name)
				}
			}
			if op["security"] == nil && !globalSecurity {
				t.Errorf("%s: no security", where)
			}
			var has2xx, has4xx bool
			for code := range obj(op["responses"]) {
				has2xx = has2xx || strings.HasPrefix(code, "2")
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			public := op["security"] != nil && len(op["security"].([]any)) == 0
			if !has2xx || (!has4xx && !public) {
				t.Errorf("%s: responses need a 2xx and (for a keyed call) a 4xx", where)
			}
			seen := map[string]bool{}
			var inPath []string
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				prm := obj(p)
				if r, ok := prm["$ref"].(string); ok {
					prm = obj(resolve(t, doc, r))
				}
				key := prm["in"].(string) + ":" + prm["name"].(string)
				if seen[key] {
					t.Errorf("%s: parameter %s twice", where, key)
				}
				seen[key] = true
				if prm["in"] == "path" {
					inPath = append(inPath, prm["name"].(string))
				}
			}
			for _, m := range paramRE.FindAllStringSubmatch(path, -1) {
				if !slices.Contains(inPath, m[1]) {
					t.Errorf("%s: path parameter %s not defined", where, m[1])
				}
			}
		}
	}
	for name := range declared {
		if !usedTags[name] {
			t.Errorf("tag %s is declared and used by no operation", name)
		}
	}
	// Every $ref resolves, and every component is referred to.
	refs := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if r, ok := e.(string); ok && k == "$ref" {
					refs[r] = true
					resolve(t, doc, r)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	for kind, comps := range obj(doc["components"]) {
		if kind == "securitySchemes" {
			continue
		}
		for name := range obj(comps) {
			if !refs["#/components/"+kind+"/"+name] {
				t.Errorf("component %s/%s is never used", kind, name)
			}
		}
	}
}

// resolve follows a local $ref, failing the test when it points nowhere.
func resolve(t *testing.T, doc map[string]any, ref string) any {
	t.Helper()
	if !strings.HasPrefix(ref, "#/") {
		t.Errorf("$ref %s is not local", ref)
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, _ := cur.(map[string]any)
		next, ok := m[part]
		if !ok {
			t.Errorf("$ref %s does not resolve", ref)
			return nil
		}
		cur = next
	}
	return cur
}

// TestOpenAPIServersFromConfig: the document served names the configured
// public URL, whatever Host or X-Forwarded-Proto the request claims (a
// client must not make it point elsewhere); without one it keeps the
// template. The control: the configured URL is named.
func TestOpenAPIServersFromConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		public, host, proto, want string
	}{
		{"https://memgate.example.com", "evil.example:443", "https", "https://memgate.example.com"},
		{"http://127.0.0.1:7070", "attacker.test", "", "http://127.0.0.1:7070"},
		{"", "attacker.test:8080", "https", "{scheme}://{host}"},
	} {
		s := testServer()
		s.cfg.PublicURL = tc.public
		req := httptest.NewRequest("GET", "/openapi.json", nil)
		req.Host = tc.host
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		w := httptest.NewRecorder()
		s.mux.ServeHTTP(w, req)
		var d struct {
			OpenAPI string `json:"openapi"`
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Paths map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", tc.host, err)
		}
		if len(d.Servers) != 1 || d.Servers[0].URL != tc.want || d.OpenAPI == "" || len(d.Paths) < 20 {
			t.Errorf("public %q, host %q: servers %+v (paths %d), want %s", tc.public, tc.host, d.Servers, len(d.Paths), tc.want)
		}
		if strings.Contains(w.Body.String(), strings.Split(tc.host, ":")[0]) {
			t.Errorf("public %q: the document names the request's host %q", tc.public, tc.host)
		}
	}
}

// TestCheckPublicURL: what --public-url accepts, as it is named.
func TestCheckPublicURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://memgate.example.com/":   "https://memgate.example.com",
		"http://10.0.0.7:7070":           "http://10.0.0.7:7070",
		"https://example.com/memgate///": "https://example.com/memgate",
	} {
		if got, err := CheckPublicURL(in); err != nil || got != want {
			t.Errorf("CheckPublicURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "memgate.example.com", "ftp://example.com", "https://", "https://u:p@example.com", "https://example.com/?a=1", "https://example.com/#x", "https://exa mple.com"} {
		if got, err := CheckPublicURL(bad); err == nil {
			t.Errorf("CheckPublicURL(%q) = %q, want an error", bad, got)
		}
	}
}

package inspector_test

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memgate/memgate/inspector"
)

// The page and its assets are served by "memgate serve" with the strict
// headers, and the API keeps every other path.
func TestServedWithStrictHeaders(t *testing.T) {
	l := startServer(t)
	get := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, l.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="/ui/app.js"></script>`},
		{"/ui/app.js", "text/javascript; charset=utf-8", "textContent"},
		{"/ui/app.css", "text/css; charset=utf-8", ":root"},
	} {
		resp, body := get("GET", tc.path)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", tc.path, resp.StatusCode)
			continue
		}
		h := resp.Header
		if got := h.Get("Content-Type"); got != tc.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.contentType)
		}
		if got := h.Get("Content-Security-Policy"); got != inspector.ContentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", tc.path, got)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if got := h.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", tc.path, k, got, v)
			}
		}
		if h.Get("Set-Cookie") != "" {
			t.Errorf("GET %s sets a cookie", tc.path)
		}
		if !strings.Contains(body, tc.contains) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.contains)
		}
	}
	for _, path := range []string{"/ui/", "/ui/nope.js", "/ui/../go.mod", "/index.html"} {
		if resp, _ := get("GET", path); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	// Every other path is the API's: its JSON errors, its auth.
	resp, body := get("GET", "/v1/memories")
	if resp.StatusCode != 401 || !strings.Contains(body, `"unauthenticated"`) {
		t.Errorf("GET /v1/memories without a key: %d %s", resp.StatusCode, body)
	}
	resp, body = get("POST", "/")
	if resp.StatusCode != 404 || !strings.Contains(body, `"not_found"`) {
		t.Errorf("POST /: %d %s, want the API's 404", resp.StatusCode, body)
	}
	if resp, _ := get("GET", "/healthz"); resp.StatusCode != 200 {
		t.Errorf("GET /healthz: %d", resp.StatusCode)
	}
}

// The page's own files keep the rules the CSP and the package doc state: no
// API that parses strings as HTML or code, no inline script or style, and no
// address outside the page's origin. A change that breaks one fails here
// before a browser would have to catch it.
func TestStaticFilesKeepTheRules(t *testing.T) {
	root := "static"
	// Each rule with a sample it must catch: the control that the rule
	// itself works.
	forbidden := []struct {
		what, sample string
		re           *regexp.Regexp
	}{
		{"innerHTML / outerHTML", "el.innerHTML = x", regexp.MustCompile(`\b(inner|outer)HTML\b`)},
		{"insertAdjacentHTML", "el.insertAdjacentHTML('beforeend', x)", regexp.MustCompile(`insertAdjacentHTML`)},
		{"document.write", "document.write(x)", regexp.MustCompile(`document\.write`)},
		{"eval", "eval (x)", regexp.MustCompile(`\beval\s*\(`)},
		{"new Function", "new Function('return 1')", regexp.MustCompile(`new\s+Function\b`)},
		{"string timers", "setTimeout('x()', 1)", regexp.MustCompile(`set(Timeout|Interval)\(\s*['"` + "`" + `]`)},
		{"HTML parsing", "new DOMParser()", regexp.MustCompile(`DOMParser|createContextualFragment|parseHTMLUnsafe|setHTMLUnsafe`)},
		{"style attributes", "el.setAttribute('style', x)", regexp.MustCompile(`setAttribute\(\s*['"]style|\bstyle:`)},
		{"localStorage (the key lives in session storage only)", "localStorage.setItem(k, v)", regexp.MustCompile(`localStorage`)},
		{"cookies", "document.cookie = x", regexp.MustCompile(`document\.cookie`)},
	}
	for _, f := range forbidden {
		if !f.re.MatchString(f.sample) {
			t.Fatalf("rule %q does not catch its sample %q", f.what, f.sample)
		}
	}
	external := regexp.MustCompile(`(?i)\b(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	inlineScript := regexp.MustCompile(`(?is)<script(?:\s[^>]*)?>\s*[^<\s]`)
	inlineHandler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttr := regexp.MustCompile(`(?i)\sstyle\s*=`)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		for _, line := range strings.Split(src, "\n") {
			for _, m := range external.FindAllString(line, -1) {
				if m != "http://www.w3.org" { // the SVG namespace, a name, never fetched
					t.Errorf("%s: address outside the origin: %s", path, m)
				}
			}
		}
		switch filepath.Ext(path) {
		case ".js":
			for _, f := range forbidden {
				if loc := f.re.FindStringIndex(src); loc != nil {
					t.Errorf("%s: uses %s at byte %d", path, f.what, loc[0])
				}
			}
		case ".html":
			if inlineScript.MatchString(src) {
				t.Errorf("%s: inline script", path)
			}
			if inlineHandler.MatchString(src) {
				t.Errorf("%s: inline event handler", path)
			}
			if styleAttr.MatchString(src) || strings.Contains(src, "<style") {
				t.Errorf("%s: inline style", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("checked %d files, want index.html, app.js and app.css at least", n)
	}
}

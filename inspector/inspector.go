// Package inspector is memgate's web inspector: a page, served at / by
// "memgate serve", where people see what agents remember about them, why,
// and take it back (revoke, delete, forget), and where an admin approves
// what the write gate held back and previews a recall before any agent
// runs.
//
// The page is static (HTML, CSS and JavaScript embedded in the binary, no
// build step) and talks to the server through the public /v1 API only,
// with the API key the person signs in with, held in the tab's session
// storage and sent as a bearer header: no cookie, so no cross-site request
// can act with it. Memory content is only ever set as text, never parsed
// as HTML, and the Content-Security-Policy lets the page load nothing but
// its own script and style and talk to nothing but its own origin: a link
// or image inside a memory is never fetched.
package inspector

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var files embed.FS

// Prefix is the path under which the page's assets are served.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every response of the inspector: the
// page may run its own script and style and fetch its own origin, and
// nothing else (no inline script, no image, frame, font or form target).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page at "/" and its assets under Prefix. Mount it on
// "GET /{$}" and "GET /ui/".
func Handler() http.Handler {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic("inspector: embedded files missing: " + err.Error())
	}
	assets := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(static))
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic("inspector: embedded index.html missing: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		if r.URL.Path == "/" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			if r.Method != http.MethodHead {
				w.Write(index)
			}
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			// No directory listings.
			http.NotFound(w, r)
			return
		}
		h.Set("Cache-Control", "no-cache")
		assets.ServeHTTP(w, r)
	})
}

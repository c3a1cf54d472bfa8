package httpapi

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
)

// openAPIDocument is the OpenAPI 3.1 description of the routes, served at
// /openapi.json. A test holds it equal to the routes New registers (paths,
// methods and the roles auth.Allowed admits) and its request schemas equal
// to the fields the handlers decode, and checks it against the lint rules
// of Redocly's recommended set.
//
//go:embed openapi.json
var openAPIDocument []byte

var (
	docOnce sync.Once
	docTop  map[string]json.RawMessage
	docErr  error
)

// hostRE is what a Host header may hold to be named in the document: a
// host name or an IP literal, and a port.
var hostRE = regexp.MustCompile(`^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

// originOf is the origin r was sent to: https when it came over TLS or
// through a proxy that says so, and its Host ("" when the Host is not one
// a document should name).
func originOf(r *http.Request) string {
	if !hostRE.MatchString(r.Host) {
		return ""
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// documentFor returns the document with servers set to origin (as it is
// embedded, with its {scheme}://{host} template, when origin is "").
func documentFor(origin string) ([]byte, error) {
	if origin == "" {
		return openAPIDocument, nil
	}
	docOnce.Do(func() { docErr = json.Unmarshal(openAPIDocument, &docTop) })
	if docErr != nil {
		return nil, docErr
	}
	servers, err := json.Marshal([]map[string]string{{"url": origin, "description": "The server this document came from."}})
	if err != nil {
		return nil, err
	}
	top := make(map[string]json.RawMessage, len(docTop))
	for k, v := range docTop {
		top[k] = v
	}
	top["servers"] = servers
	return json.MarshalIndent(top, "", "  ")
}

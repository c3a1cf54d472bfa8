package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
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

// CheckPublicURL checks a server's public URL (Config.PublicURL): an
// absolute http or https URL with a host, and neither a query, a fragment,
// user information nor a trailing slash. It returns the URL as it will be
// named.
func CheckPublicURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("public URL %q does not parse", raw)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", fmt.Errorf("public URL %q: want http:// or https:// and a host", raw)
	case u.User != nil, u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return "", fmt.Errorf("public URL %q: want no user, query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// documentFor returns the document with servers set to origin, the
// configured public URL (as it is embedded, with its {scheme}://{host}
// template, when origin is ""). A request's Host is never named: a
// client could make the document point anywhere.
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/engine"
)

// backend is what the memory commands run against: memgate.Memories, over
// the embedded engine (localBackend) or a memgate server (remoteBackend,
// the Go client's, with --server). The commands are written once against
// it; both sides return the root package's types, so text and --json
// output are the same for the same data.
type backend interface {
	memgate.Memories
	Sweep(ctx context.Context, grace time.Duration) (int, error)
}

// localBackend is the embedded engine.
type localBackend struct{ *engine.Engine }

// remoteBackend is a memgate server reached through the Go client. The
// tenant is the key's: scopes' tenants are not sent by the client (see
// tenantTransport for how a --tenant is still checked).
type remoteBackend struct {
	memgate.Memories
	c *client.Client
}

// apiKeyEnv holds the API key for --server; there is deliberately no flag,
// so the key never lands in shell history or in the process list.
const apiKeyEnv = "MEMGATE_API_KEY"

func newRemote(server, tenant string) (*remoteBackend, error) {
	return newRemoteTimeout(server, tenant, 60*time.Second)
}

// newRemoteTimeout is newRemote with the time limit of one request (a chat
// turn waits on a model, longer than any other call).
func newRemoteTimeout(server, tenant string, timeout time.Duration) (*remoteBackend, error) {
	key := os.Getenv(apiKeyEnv)
	if key == "" {
		return nil, &memgate.Error{Code: memgate.EUNAUTHORIZED, Field: apiKeyEnv,
			Message: "is not set: --server needs an API key in the environment"}
	}
	var tr http.RoundTripper = http.DefaultTransport
	if tenant != "" {
		tr = tenantTransport{base: tr, tenant: tenant}
	}
	c, err := client.New(server, key, client.WithUserAgent("memgate-cli"),
		client.WithHTTPClient(&http.Client{Timeout: timeout, Transport: tr}))
	if err != nil {
		return nil, err
	}
	return &remoteBackend{Memories: c.Memories(), c: c}, nil
}

func (r *remoteBackend) Sweep(context.Context, time.Duration) (int, error) {
	return 0, usageError{"sweep runs on the server's own schedule (memgate serve --sweep-every); it has no --server form"}
}

// tenantTransport names --tenant in every request, so that the server,
// which takes the tenant from the key, refuses one that differs
// (forbidden: tenant: is fixed by the key) instead of the CLI silently
// acting in the key's tenant. The client does not send a tenant, so it is
// added here: in the JSON body of the four endpoints that read it there,
// and as the "tenant" query parameter everywhere else.
type tenantTransport struct {
	base   http.RoundTripper
	tenant string
}

func (t tenantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	bodyTenant := req.Method == http.MethodPost &&
		(req.URL.Path == "/v1/memories" || req.URL.Path == "/v1/recall" || req.URL.Path == "/v1/forget" || req.URL.Path == "/v1/chat")
	if bodyTenant && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, err
		}
		obj["tenant"], _ = json.Marshal(t.tenant)
		if b, err = json.Marshal(obj); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	} else if !bodyTenant {
		q := req.URL.Query()
		q.Set("tenant", t.tenant)
		req.URL.RawQuery = q.Encode()
	}
	return t.base.RoundTrip(req)
}

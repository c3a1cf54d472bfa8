package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestRunServesMCP: memgate serve mounts the MCP endpoint at /mcp, behind
// the same keys as the API: without one it is 401; with the first admin
// key and a principal, an SDK client remembers and recalls.
func TestRunServesMCP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout, stderr lockedBuffer
	cfg := server.Config{
		Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "m.db"), BootstrapTenant: "acme",
		Ready: func(addr string) { ready <- addr },
	}
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, &stdout, &stderr) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Run returned before serving: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not become ready")
	}
	key := regexp.MustCompile(`mgk_[A-Za-z0-9_-]{43}`).FindString(stdout.String())
	if key == "" {
		t.Fatalf("no bootstrap key:\n%s", stdout.String())
	}

	resp, err := http.Post("http://"+addr+"/mcp?principal=alice", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("POST /mcp without a key: %d", resp.StatusCode)
	}

	tr := &mcp.StreamableClientTransport{
		Endpoint:   "http://" + addr + "/mcp?principal=alice&source=user",
		HTTPClient: &http.Client{Transport: bearerTransport(key)},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Version; got != buildinfo.Get().Version {
		t.Fatalf("MCP server reports version %q, the build is %q", got, buildinfo.Get().Version)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"content": "Alice drinks green tea.", "kind": "preference"}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "What does Alice drink?"}})
	if err != nil || res.IsError {
		t.Fatalf("recall: %v %v", err, res)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "green tea") {
		t.Fatalf("recall: %s", txt)
	}
	if strings.Contains(stderr.String(), key) || strings.Contains(stderr.String(), "green tea") {
		t.Fatal("the log holds the key or memory content")
	}
}

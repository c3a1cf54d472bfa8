package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession runs "memgate mcp ARGS" in-process on pipes and connects an
// SDK client to it. The returned stop closes the client (standard input
// reaches EOF) and returns the exit status and standard error.
func mcpSession(t *testing.T, args ...string) (*mcp.ClientSession, func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), append([]string{"mcp"}, args...), inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		t.Fatalf("connect to memgate mcp %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	stopped := false
	var code int
	stop := func() (int, string) {
		if !stopped {
			stopped = true
			cs.Close()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("memgate mcp did not exit after its input closed; stderr:\n%s", stderr.String())
			}
		}
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	return cs, stop
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	var out map[string]any
	if res.StructuredContent != nil {
		j, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(j, &out)
	}
	return b.String(), out, res.IsError
}

func mcpTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// TestMCPStdioSubprocess spawns the built binary as "memgate mcp" and
// talks to it over its standard input and output with the SDK's
// CommandTransport: remember, then recall the fact.
func TestMCPStdioSubprocess(t *testing.T) {
	t.Parallel()
	bin := buildMemgate(t, unstamped...)
	db := existingDB(t)
	cmd := exec.Command(bin, "mcp", "--db", db, "--tenant", "acme", "--principal", "alice", "--source", "user")
	cmd.Env = append(os.Environ(), "MEMGATE_SERVER=")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	if got := mcpTools(t, cs); !slices.Equal(got, []string{"list_memories", "recall", "remember", "revoke_memory"}) {
		t.Fatalf("tools: %v", got)
	}
	txt, out, isErr := mcpCall(t, cs, "remember", map[string]any{"content": "Alice is allergic to peanuts zqxjvarnish.", "kind": "fact", "reason": "she said so"})
	id, _ := out["id"].(string)
	if isErr || id == "" || out["status"] != "active" {
		t.Fatalf("remember: %s", txt)
	}
	txt, out, isErr = mcpCall(t, cs, "recall", map[string]any{"query": "Is Alice allergic to anything?"})
	if isErr || !strings.Contains(txt, `id="`+id+`"`) || !strings.Contains(txt, "allergic to peanuts") {
		t.Fatalf("recall: %s", txt)
	}
	if res, _ := out["results"].([]any); len(res) != 1 {
		t.Fatalf("recall: %v", out)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	// Standard error holds the log; never the content.
	if logs := stderr.String(); !strings.Contains(logs, `"tool":"recall"`) || strings.Contains(logs, "zqxjvarnish") {
		t.Fatalf("stderr:\n%s", logs)
	}
	// The memory is in the database, owned by the flags' principal.
	if got := mustCLI(t, db, "list", "--tenant", "acme", "--principal", "alice"); !strings.Contains(got, id) {
		t.Fatalf("list after mcp: %s", got)
	}
}

// TestMCPLocal: the flags fix the identity; forget_me only with
// --allow-forget; the default source is the assistant, so the write gate
// holds its facts; standard output carries the protocol only.
func TestMCPLocal(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	bob := strings.TrimSpace(mustCLI(t, db, "remember", "--tenant", "acme", "--principal", "bob", "Bob lives in Lyon."))

	cs, stop := mcpSession(t, "--db", db, "--tenant", "acme", "--principal", "alice")
	if got := mcpTools(t, cs); slices.Contains(got, "forget_me") {
		t.Fatalf("forget_me offered without --allow-forget: %v", got)
	}
	_, out, _ := mcpCall(t, cs, "remember", map[string]any{"content": "Alice lives in Porto.", "kind": "fact"})
	if out["status"] != "pending" || out["source"] != "assistant" {
		t.Fatalf("remember with the default source: %v", out)
	}
	_, out, _ = mcpCall(t, cs, "remember", map[string]any{"content": "Book Alice's train to Lisbon.", "kind": "task"})
	if out["status"] != "active" {
		t.Fatalf("remember a task: %v", out)
	}
	txt, _, isErr := mcpCall(t, cs, "revoke_memory", map[string]any{"id": bob})
	if !isErr || !strings.Contains(txt, `"not_found"`) {
		t.Fatalf("revoke bob's memory as alice: %s", txt)
	}
	if code, stderr := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := mustCLI(t, db, "get", "--tenant", "acme", "--principal", "bob", bob); !strings.Contains(got, "active") {
		t.Fatalf("bob's memory changed: %s", got)
	}

	cs, stop = mcpSession(t, "--db", db, "--tenant", "acme", "--principal", "alice", "--allow-forget")
	if got := mcpTools(t, cs); !slices.Contains(got, "forget_me") {
		t.Fatalf("forget_me not offered with --allow-forget: %v", got)
	}
	_, out, _ = mcpCall(t, cs, "forget_me", map[string]any{"confirm": true})
	if out["forgotten"] != float64(2) {
		t.Fatalf("forget_me: %v", out)
	}
	stop()
	if got := mustCLI(t, db, "counts", "--tenant", "acme", "--json"); !strings.Contains(got, `"principal": "bob"`) || strings.Contains(got, `"principal": "alice"`) {
		t.Fatalf("counts after forget_me: %s", got)
	}
}

// TestMCPStdoutIsTheProtocol: every line memgate mcp writes to standard
// output is a JSON-RPC message, tool calls included.
func TestMCPStdoutIsTheProtocol(t *testing.T) {
	t.Parallel()
	db := existingDB(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"mcp", "--db", db, "--tenant", "acme", "--principal", "alice"}, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	go func() {
		for _, l := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"content":"Alice likes jazz.","kind":"task"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recall","arguments":{"query":"jazz"}}}`,
		} {
			io.WriteString(inW, l+"\n")
		}
	}()
	dec := json.NewDecoder(outR)
	answered := map[float64]bool{}
	var lines int
	for len(answered) < 3 {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      float64         `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("stdout holds something that is not JSON-RPC after %d messages: %v; stderr:\n%s", lines, err, stderr.String())
		}
		lines++
		if msg.JSONRPC != "2.0" {
			t.Fatalf("stdout message %d is not JSON-RPC 2.0", lines)
		}
		if msg.Result != nil {
			answered[msg.ID] = true
		}
	}
	inW.Close()
	if rest, _ := io.ReadAll(io.MultiReader(dec.Buffered(), outR)); len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("stdout after the last answer: %q", rest)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

func TestMCPFlags(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, tc := range []exitCase{
		{[]string{"--db", db, "--principal", "alice"}, 1, "tenant: is required"},
		{[]string{"--db", db, "--tenant", "acme"}, 1, "principal: is required"},
		{[]string{"--db", db, "--tenant", "acme", "--principal", "a b"}, 1, "principal: must match"},
		{[]string{"--db", db, "--tenant", "acme", "--principal", "alice", "--source", "oracle"}, 1, "source: unknown source"},
		{[]string{"--db", db, "--tenant", "acme", "--principal", "alice", "extra"}, 2, "takes no arguments"},
		{[]string{"--db", db, "--server", "http://127.0.0.1:1", "--principal", "alice"}, 2, "--db applies to the local database"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"mcp"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("mcp %v: exit %d, stderr %q, stdout %q; want %d %q", tc.args, code, stderr.String(), stdout.String(), tc.code, tc.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a refused mcp created the database")
	}
}

// TestMCPRemote: with --server, the server's key decides; the tools reach
// the server's database. Not parallel: it sets MEMGATE_API_KEY.
func TestMCPRemote(t *testing.T) {
	s, db, _ := serverKey(t)
	cs, stop := mcpSession(t, "--server", s.url, "--principal", "alice", "--source", "user")
	_, out, isErr := mcpCall(t, cs, "remember", map[string]any{"content": "Alice drinks green tea.", "kind": "preference"})
	id, _ := out["id"].(string)
	if isErr || id == "" || out["status"] != "active" {
		t.Fatalf("remember: %v", out)
	}
	txt, out, _ := mcpCall(t, cs, "recall", map[string]any{"query": "What does Alice drink?"})
	if !strings.Contains(txt, `id="`+id+`"`) {
		t.Fatalf("recall: %s %v", txt, out)
	}
	txt, _, isErr = mcpCall(t, cs, "revoke_memory", map[string]any{"id": "m_01aaaaaaaaaaaaaaaaaaaaaaaa"})
	if !isErr || txt != `{"error":{"code":"not_found","message":"memory not found"}}` {
		t.Fatalf("revoke a missing id: %s", txt)
	}
	stop()
	if got := mustCLI(t, db, "list", "--tenant", "default", "--principal", "alice"); !strings.Contains(got, id) {
		t.Fatalf("the server's database: %s", got)
	}

	// A --tenant that is not the key's is refused by the server.
	cs, _ = mcpSession(t, "--server", s.url, "--tenant", "other", "--principal", "alice")
	txt, _, isErr = mcpCall(t, cs, "list_memories", nil)
	if !isErr || !strings.Contains(txt, `"field":"tenant"`) || !strings.Contains(txt, `"forbidden"`) {
		t.Fatalf("--tenant other: %s", txt)
	}
}

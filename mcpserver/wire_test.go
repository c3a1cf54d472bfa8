package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/memgate/memgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callRaw calls a tool with arguments exactly as given (the SDK client
// sends a json.RawMessage as it is) and returns the error the tool result
// carries, or a zero apiError when the call succeeded.
func callRaw(t *testing.T, cs *mcp.ClientSession, tool, args string) (apiError, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: protocol error: %v", tool, args, err)
	}
	var e apiError
	if res.IsError {
		if err := json.Unmarshal([]byte(text(res)), &e); err != nil || e.Error.Code == "" {
			t.Fatalf("%s: error text is not the API's error shape: %q", tool, text(res))
		}
	}
	return e, res
}

// restError posts body to the REST API as it is and returns the status
// and the error it answers (zero when it answered none).
func (e *env) restError(path, key, body string) (int, apiError) {
	e.t.Helper()
	status, b := e.rest("POST", path, key, json.RawMessage(body))
	var ae apiError
	if status >= 400 {
		if err := json.Unmarshal(b, &ae); err != nil {
			e.t.Fatalf("POST %s: %d %s: not the API's error shape", path, status, b)
		}
	}
	return status, ae
}

// TestDuplicateArgumentsRefused: tool arguments that name a member twice
// (a reader that keeps the first sees another call than one that keeps
// the last) are refused naming the member, as the REST API refuses such a
// body, and store nothing. The controls, the same arguments with each
// member once, are accepted.
func TestDuplicateArgumentsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs, _ := e.remote(e.key("acme", memgate.RoleAdmin, "", ""), "principal=alice")
	for _, tc := range []struct {
		name, tool, args, control, field string
	}{
		{"remember content", "remember",
			`{"content":"Alice keeps bees.","kind":"fact","content":"Alice keeps wasps."}`,
			`{"content":"Alice keeps bees.","kind":"fact"}`, "content"},
		{"remember kind in another case", "remember",
			`{"content":"Alice keeps hens.","kind":"fact","Kind":"task"}`,
			`{"content":"Alice keeps hens.","Kind":"task"}`, "Kind"},
		{"remember key spelled as an escape", "remember",
			`{"content":"Alice keeps goats.","\u006bind":"fact","kind":"task"}`,
			`{"content":"Alice keeps goats.","\u006bind":"fact"}`, "kind"},
		{"recall k", "recall", `{"query":"bees","k":1,"k":50}`, `{"query":"bees","k":1}`, "k"},
		{"list limit", "list_memories", `{"limit":1,"limit":50}`, `{"limit":1}`, "limit"},
	} {
		before := e.count("acme", "alice")
		er, _ := callRaw(t, cs, tc.tool, tc.args)
		if er.Error.Code != memgate.EINVALID || er.Error.Field != tc.field || er.Error.Message != tc.field+": is given more than once" {
			t.Errorf("%s: %+v, want invalid_argument naming %s", tc.name, er.Error, tc.field)
		}
		if after := e.count("acme", "alice"); after != before {
			t.Fatalf("%s: %d memories before, %d after", tc.name, before, after)
		}
		if er, res := callRaw(t, cs, tc.tool, tc.control); res.IsError {
			t.Errorf("%s: the control failed: %+v", tc.name, er.Error)
		}
	}
	if n := e.count("acme", "alice"); n != 3 {
		t.Fatalf("the controls remembered %d memories, want 3", n)
	}
}

// TestBadInputAsREST: the same bad remember input, sent as the arguments
// of the remember tool and as a body of POST /v1/memories (where it also
// names the principal and the source the connection gives MCP), is refused
// with the same code and field, and a mistake in a field with the same
// message. Nothing is stored; the control, the input made good, is stored
// by both.
func TestBadInputAsREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.key("acme", memgate.RoleAdmin, "", "")
	cs, _ := e.remote(key, "principal=alice")
	for _, tc := range []struct {
		name    string
		members string // of the input, without its braces
		field   string
	}{
		{"duplicate key", `"content":"Alice keeps bees.","kind":"fact","kind":"task"`, "kind"},
		{"duplicate key in another case", `"content":"Alice keeps bees.","kind":"fact","KIND":"task"`, "KIND"},
		{"invalid UTF-8", "\"content\":\"Alice keeps \xff bees.\",\"kind\":\"fact\"", ""},
		{"invalid UTF-8 in a key", "\"content\":\"Alice keeps bees.\",\"kind\":\"fact\",\"\xc3\":1", ""},
		{"lone surrogate", `"content":"Alice keeps \ud800 bees.","kind":"fact"`, ""},
		{"unknown field", `"content":"Alice keeps bees.","kind":"fact","colour":"red"`, "colour"},
		{"content a number", `"content":42,"kind":"fact"`, "content"},
		{"kind an object", `"content":"Alice keeps bees.","kind":{"name":"fact"}`, "kind"},
		{"ttl an array", `"content":"Alice keeps bees.","kind":"fact","ttl":["30d"]`, "ttl"},
		{"NUL escape in content", `"content":"Alice \u0000 bees.","kind":"fact"`, "content"},
		{"unknown kind", `"content":"Alice keeps bees.","kind":"rumour"`, "kind"},
	} {
		mcpErr, _ := callRaw(t, cs, "remember", "{"+tc.members+"}")
		status, restErr := e.restError("/v1/memories", key, `{"principal":"alice","source":"assistant",`+tc.members+"}")
		if status != http.StatusBadRequest || restErr.Error.Code != memgate.EINVALID || restErr.Error.Field != tc.field {
			t.Errorf("%s: REST %d %+v, want 400 invalid_argument naming %q", tc.name, status, restErr.Error, tc.field)
		}
		if mcpErr.Error.Code != restErr.Error.Code || mcpErr.Error.Field != restErr.Error.Field {
			t.Errorf("%s: MCP %+v, REST %+v", tc.name, mcpErr.Error, restErr.Error)
		}
		if tc.field != "" && mcpErr.Error.Message != restErr.Error.Message {
			t.Errorf("%s: MCP says %q, REST %q", tc.name, mcpErr.Error.Message, restErr.Error.Message)
		}
	}
	if n := e.count("acme", "alice"); n != 0 {
		t.Fatalf("bad input stored %d memories", n)
	}
	good := `"content":"Alice keeps bees.","kind":"fact"`
	if er, res := callRaw(t, cs, "remember", "{"+good+"}"); res.IsError {
		t.Fatalf("the control failed over MCP: %+v", er.Error)
	}
	if status, er := e.restError("/v1/memories", key, `{"principal":"alice","source":"user","content":"Alice keeps hives.","kind":"fact"}`); status != http.StatusCreated {
		t.Fatalf("the control failed over REST: %d %+v", status, er.Error)
	}
	if n := e.count("acme", "alice"); n != 2 {
		t.Fatalf("the controls stored %d memories, want 2", n)
	}
}

package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/memgate/memgate/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errorJSON is the JSON text of an error body.
func errorJSON(d wire.ErrorDetail) string {
	b, err := json.Marshal(wire.ErrorBody{Error: d})
	if err != nil {
		return `{"error":{"code":"internal","message":"internal error"}}`
	}
	return string(b)
}

// metaCallID is the _meta key of the id under which an internal error of
// a tool call is logged.
const metaCallID = "memgate/call_id"

// toolError is the tool result for an error: IsError, and as text the
// error body the REST API would send for the same error (wire.Describe).
func toolError(d wire.ErrorDetail) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: errorJSON(d)}}}
}

// handler runs one tool: the caller's scope for its operation first (a
// call the caller may not make is refused before its arguments are read),
// then the tool, with the caller as the audit actor. Every error becomes a
// tool error; the log line names the tool, the actor, the code and the
// time, never the arguments.
func (t *tools) handler(d definition) mcp.ToolHandler {
	name := d.tool.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		actor := t.caller.Actor()
		var args json.RawMessage
		if req != nil && req.Params != nil {
			args = req.Params.Arguments
		}
		res, err := t.call(ctx, d, args)
		attrs := []slog.Attr{slog.String("tool", name), slog.Duration("took", time.Since(start))}
		if actor != "" {
			attrs = append(attrs, slog.String("actor", actor))
		}
		level := slog.LevelInfo
		if err != nil {
			det, _, internal := wire.Describe(err)
			res = toolError(det)
			attrs = append(attrs, slog.String("code", det.Code))
			if internal {
				id := newCallID()
				res.Meta = mcp.Meta{metaCallID: id}
				level = slog.LevelError
				attrs = append(attrs, slog.String("call_id", id), slog.String("error", err.Error()))
			}
		}
		t.log.LogAttrs(ctx, level, "mcp tool call", attrs...)
		return res, nil
	}
}

func (t *tools) call(ctx context.Context, d definition, args json.RawMessage) (*mcp.CallToolResult, error) {
	s, err := t.caller.Scope(d.op)
	if err != nil {
		return nil, err
	}
	return d.run(t, ctx, s, args)
}

// newCallID returns a random id for a failed call's log line.
func newCallID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("mcpserver: crypto/rand failed: " + err.Error())
	}
	return "call_" + hex.EncodeToString(b[:])
}

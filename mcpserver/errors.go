package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/httpapi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errorBody is the REST API's error shape, which a failed tool call
// carries as its text: {"error":{"code","message","field"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// describe returns what the REST API answers for err: its code, message
// (with the field) and field, and the HTTP status. An error without a
// known code, or with code internal, is "internal error" and internal is
// set: its detail is for the log, never for the caller.
func describe(err error) (d errorDetail, status int, internal bool) {
	code := memgate.ErrorCode(err)
	status, known := httpapi.Status(code) // the REST API's table
	d = errorDetail{Code: code, Message: memgate.ErrorMessage(err), Field: memgate.ErrorField(err)}
	if !known || code == memgate.EINTERNAL {
		return errorDetail{Code: memgate.EINTERNAL, Message: "internal error"}, http.StatusInternalServerError, true
	}
	if d.Message == "" {
		d.Message = http.StatusText(status)
	}
	return d, status, false
}

// errorJSON is the JSON text of an error body.
func errorJSON(d errorDetail) string {
	b, err := json.Marshal(errorBody{Error: d})
	if err != nil {
		return `{"error":{"code":"internal","message":"internal error"}}`
	}
	return string(b)
}

// metaCallID is the _meta key of the id under which an internal error of
// a tool call is logged.
const metaCallID = "memgate/call_id"

// toolError is the tool result for err: IsError, and as text the error
// body the REST API would send for the same error.
func toolError(d errorDetail) *mcp.CallToolResult {
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
			det, _, internal := describe(err)
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

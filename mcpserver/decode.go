package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/memgate/memgate/internal/wire"
)

// identityFields are names a model might try to pass: identity comes only
// from the connection, and the error says so.
var identityFields = map[string]bool{
	"tenant": true, "principal": true, "agent": true, "conversation": true, "source": true,
	"tenant_id": true, "principal_id": true, "user": true, "user_id": true,
}

// arguments decodes tool arguments as the REST API decodes its bodies
// (package wire): strictly, in one pass, with the same field-path errors.
// A name of identity is refused for what it is.
var arguments = wire.Decoder{Input: "arguments", Unknown: func(path string) string {
	if identityFields[path] {
		return "is not a tool argument: whose memories these are, and who asserts them, is fixed by the connection"
	}
	return ""
}}

// decodeArgs decodes a tool's arguments, a JSON object, into v (absent or
// null: no arguments). Errors are invalid_argument naming the field,
// without echoing the input.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return arguments.Decode(raw, v)
}

package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// identityFields are names a model might try to pass: identity comes only
// from the connection, and the error says so.
var identityFields = map[string]bool{
	"tenant": true, "principal": true, "agent": true, "conversation": true, "source": true,
	"tenant_id": true, "principal_id": true, "user": true, "user_id": true,
}

// decodeArgs decodes a tool's arguments into v, strictly: a JSON object
// (absent or null means no arguments), no unknown field, values of the
// right type, valid UTF-8 without escapes of lone UTF-16 surrogates (which
// would otherwise turn silently into U+FFFD). Errors are invalid_argument
// naming the field, without echoing the input.
func decodeArgs(raw json.RawMessage, v any) error {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		b = []byte("{}")
	}
	if b[0] != '{' {
		return memgate.FieldError("", "arguments must be a JSON object")
	}
	if !utf8.Valid(b) {
		return memgate.FieldError("", "arguments must be valid UTF-8")
	}
	if loneSurrogate(b) {
		return memgate.FieldError("", "arguments hold an invalid \\u escape (a lone UTF-16 surrogate)")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return memgate.FieldError("", "arguments must be a single JSON object")
	}
	return nil
}

// argError turns a decoding error into an invalid_argument naming the
// field, without quoting the input.
func argError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return memgate.FieldError("", "malformed JSON arguments at byte %d", syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return memgate.FieldError("", "malformed JSON arguments: unexpected end of input")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return memgate.FieldError("", "arguments must be a JSON object")
		}
		return memgate.FieldError(typ.Field, "must be %s", typeName(typ))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		if identityFields[name] {
			return memgate.FieldError(name, "is not a tool argument: whose memories these are, and who asserts them, is fixed by the connection")
		}
		return memgate.FieldError(clip(name), "is not a known field")
	}
	return memgate.FieldError("", "malformed arguments")
}

func typeName(e *json.UnmarshalTypeError) string {
	switch e.Type.Kind().String() {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64", "ptr":
		return "a number"
	}
	return "a value of another type"
}

// clip shortens a caller-supplied name for an error message.
func clip(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// loneSurrogate reports whether a JSON text holds, inside a string, a \u
// escape of a UTF-16 surrogate that is not one half of a pair. It tracks
// strings and escapes only; the decoder judges the rest of the syntax.
func loneSurrogate(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !in {
			in = c == '"'
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 >= len(b) {
				return false
			}
			if b[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return false // malformed: the decoder will say so
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := 0, i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u'
				if ok {
					lo, ok = hex4(b, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return true
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return true
			default:
				i += 5
			}
		}
	}
	return false
}

func hex4(b []byte, at int) (int, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

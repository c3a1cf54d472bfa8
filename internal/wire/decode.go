// Package wire is the JSON edge the REST API (httpapi) and the MCP server
// (mcpserver) share: the strict decoder of request bodies and tool
// arguments, the field paths its errors name, and the error body with the
// one table from error codes to HTTP statuses. A mistake in what a client
// sends is answered alike on both surfaces: the same code, the same field.
//
// Input is decoded once, in one pass (github.com/go-json-experiment/json,
// the encoding/json/v2 to come), which refuses what a lenient reader
// would let through: a member named twice at any depth (another reader of
// the same bytes, a proxy or an audit tap, may keep the other one), invalid
// UTF-8 and \u escapes of lone UTF-16 surrogates (which encoding/json
// turns silently into U+FFFD), members the target does not know, values of
// the wrong type, and anything after the value. Metadata numbers stay
// exact (json.Number, as memgate.DecodeMetadata keeps them).
//
// It must never echo input in an error: an error names a field path (its
// names clipped) or a byte offset, never a value.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/memgate/memgate"
)

// A Decoder decodes one surface's input strictly. The zero value is not
// useful: Input must be set. A Decoder is safe for concurrent use.
type Decoder struct {
	// Input names the whole input in the errors about it, such as
	// "request body" or "arguments".
	Input string
	// Unknown, when set, says why a member the target does not know is
	// refused, given its path; "" keeps "is not a known field".
	Unknown func(path string) string
}

// options are those of every decode. Member names match struct fields as
// encoding/json matches them (case-insensitively, underscores and dashes
// significant), so a body it accepted is still accepted; "kind" and
// "Kind" are then one member, and naming both is a duplicate. Metadata
// keys (map keys) are compared exactly.
var options = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
)

// exactNumbers decodes a number inside an interface value (metadata) as
// the json.Number of its text, not a float64 that would round it.
var exactNumbers = jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return jsonv2.SkipFunc
	}
	num, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = json.Number(num)
	return nil
})

// Decode decodes exactly one JSON value from b into v. Every refusal is an
// invalid_argument *memgate.Error naming the field path (memories[1].kind,
// metadata.a), or none when the whole input is at fault.
func (d Decoder) Decode(b []byte, v any) error {
	_, err := d.decode(b, v, false)
	return err
}

// DecodeObject is Decode that also returns the names of the members of
// the top-level object, in order and as spelled, for a target whose shape
// depends on which members are present.
func (d Decoder) DecodeObject(b []byte, v any) ([]string, error) {
	return d.decode(b, v, true)
}

func (d Decoder) decode(b []byte, v any, names bool) ([]string, error) {
	var members []string
	fns := exactNumbers
	if names {
		// Called at the start of every value, it sees each top-level
		// member (a value at depth 1) once or, through a type of its own
		// decoding, twice in a row.
		seen := jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ any) error {
			if dec.StackDepth() == 1 {
				if name := dec.StackPointer().LastToken(); len(members) == 0 || members[len(members)-1] != name {
					members = append(members, name)
				}
			}
			return jsonv2.SkipFunc
		})
		fns = jsonv2.JoinUnmarshalers(exactNumbers, seen)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if err := jsonv2.UnmarshalDecode(dec, v, options, jsonv2.WithUnmarshalers(fns)); err != nil {
		return nil, d.refusal(b, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err := d.CheckText(b); err != nil {
			return nil, err
		}
		return nil, memgate.FieldError("", "%s must hold a single JSON value", d.Input)
	}
	return members, nil
}

// UnknownField is the error for a member the target does not know, at
// path.
func (d Decoder) UnknownField(path string) error {
	if d.Unknown != nil {
		if msg := d.Unknown(path); msg != "" {
			return memgate.FieldError(path, "%s", msg)
		}
	}
	return memgate.FieldError(path, "is not a known field")
}

// CheckText refuses a JSON text no reader should be handed: invalid UTF-8,
// or a \u escape of a lone UTF-16 surrogate. Decode checks both itself;
// this is for a text another decoder reads (a JSONL import).
func (d Decoder) CheckText(b []byte) error {
	if !utf8.Valid(b) {
		return memgate.FieldError("", "%s must be valid UTF-8", d.Input)
	}
	if loneSurrogate(b) {
		return memgate.FieldError("", "%s must not hold an invalid \\u escape (a lone UTF-16 surrogate)", d.Input)
	}
	return nil
}

// refusal turns a decoding error of b into the invalid_argument the
// caller sees. Invalid text comes first, wherever it stands, as when it
// was checked before decoding; so the byte scans run only for a body
// already refused.
func (d Decoder) refusal(b []byte, err error) error {
	if err := d.CheckText(b); err != nil {
		return err
	}
	var me *memgate.Error
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &me):
		return me // a type's own decoding named its field
	case errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &syn):
		return memgate.FieldError(fieldPath(b, syn.JSONPointer), "is given more than once")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return memgate.FieldError("", "malformed JSON: unexpected end of input")
	case errors.As(err, &syn):
		return memgate.FieldError("", "malformed JSON at byte %d", syn.ByteOffset)
	case errors.As(err, &sem) && errors.Is(sem.Err, jsonv2.ErrUnknownName):
		return d.UnknownField(fieldPath(b, sem.JSONPointer))
	case errors.As(err, &sem) && sem.GoType != nil:
		path := fieldPath(b, sem.JSONPointer)
		if path == "" {
			return memgate.FieldError("", "%s must be a JSON %s", d.Input, typeName(sem))
		}
		return memgate.FieldError(path, "must be %s", article(typeName(sem)))
	}
	return memgate.FieldError("", "malformed %s", d.Input)
}

// typeName names the JSON type a value must have.
func typeName(e *jsonv2.SemanticError) string {
	t := e.GoType
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	number := e.JSONKind == '0' // a number out of range, or not an integer
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if number {
			return "integer in range"
		}
		return "integer"
	case reflect.Float32, reflect.Float64:
		if number {
			return "number in range"
		}
		return "number"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "value of another type"
}

func article(s string) string {
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + s
	}
	return "a " + s
}

// fieldPath renders a JSON Pointer into b as the field path errors name:
// memories[1].kind, metadata.a[0].b, each name clipped. A pointer does not
// say which of its tokens are array indices (a metadata key may be "0"),
// so fieldPath reads b down to the value it points at. It runs only for an
// error; past what it can read, tokens are named as members.
func fieldPath(b []byte, ptr jsontext.Pointer) string {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var p strings.Builder
	for tok := range ptr.Tokens() {
		kind := jsontext.Kind(0)
		if dec != nil {
			kind = dec.PeekKind()
		}
		if kind == '[' {
			p.WriteString("[" + Clip(tok) + "]")
		} else {
			if p.Len() > 0 {
				p.WriteByte('.')
			}
			p.WriteString(Clip(tok))
		}
		if dec != nil && !enter(dec, kind, tok) {
			dec = nil
		}
	}
	return p.String()
}

// enter moves dec from the start of a container of kind to the start of
// its member or element tok, and reports whether it could.
func enter(dec *jsontext.Decoder, kind jsontext.Kind, tok string) bool {
	if kind != '[' && kind != '{' {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	if kind == '[' {
		n, err := strconv.Atoi(tok)
		if err != nil {
			return false
		}
		for range n {
			if dec.SkipValue() != nil {
				return false
			}
		}
		return true
	}
	for {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return false
		}
		if name.String() == tok {
			return true
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
}

// Clip shortens a caller-supplied name for an error message.
func Clip(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// loneSurrogate reports whether a JSON text holds, inside a string, a \u
// escape of a UTF-16 surrogate that is not one half of a pair. It tracks
// strings and escapes only, assuming nothing about the rest of the syntax.
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
				return false // malformed: the decoder says so
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				// A high surrogate must be followed at once by an
				// escaped low one.
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

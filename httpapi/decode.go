package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// readBody reads the request body, at most limit bytes: a larger body is
// too_large, read no further. The body must be valid UTF-8.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	b, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &memgate.Error{Code: memgate.ETOOLARGE, Message: fmt.Sprintf("request body is larger than %d bytes", limit)}
		}
		return nil, memgate.FieldError("", "request body could not be read")
	}
	if !utf8.Valid(b) {
		return nil, memgate.FieldError("", "request body must be valid UTF-8")
	}
	return b, nil
}

// decodeBody reads the JSON request body into v, strictly (see
// decodeStrict). An empty body is an error unless optional is set, in
// which case v is left as it is.
func (c *call) decodeBody(v any, optional bool) error {
	b, err := readBody(c.w, c.r, c.s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return memgate.FieldError("", "request body is required (a JSON object)")
	}
	return decodeStrict(b, v)
}

// decodeStrict decodes exactly one JSON value from b into v: unknown
// fields are refused, numbers inside interface values (metadata) stay
// exact, escapes that decode to no valid character (lone UTF-16
// surrogates, which encoding/json would silently turn into U+FFFD) are
// refused, and errors name the field without echoing the input.
func decodeStrict(b []byte, v any) error {
	if !utf8.Valid(b) {
		return memgate.FieldError("", "request body must be valid UTF-8")
	}
	if err := checkEscapes(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return memgate.FieldError("", "request body must hold a single JSON value")
	}
	return checkDuplicateKeys(b)
}

// checkDuplicateKeys refuses an object that names a member twice, at any
// depth. encoding/json keeps the last one silently, and another reader of
// the same bytes (a proxy, a WAF, an audit tap) may keep the first: a body
// whose "principal" is "alice" to one and "bob" to the other must not be
// stored. Outside metadata the objects are request structs, whose field
// names encoding/json matches without regard to case, so there "kind" and
// "Kind" are the same member too; metadata keys are compared exactly. It
// runs on a body the decoder has accepted, so its syntax and depth are
// already judged; the error names the member's path (metadata.a,
// memories[1].kind) without echoing any value.
func checkDuplicateKeys(b []byte) error {
	type frame struct {
		obj     bool
		path    string
		keys    map[string]bool
		fold    bool // a request struct, not metadata
		wantKey bool
		n       int // next array index
	}
	var stack []*frame
	// child is the path of the value about to start in top.
	child := func(top *frame, key string) string {
		switch {
		case top == nil:
			return ""
		case top.obj && top.path == "":
			return clip(key)
		case top.obj:
			return top.path + "." + clip(key)
		}
		p := top.path + "[" + strconv.Itoa(top.n) + "]"
		top.n++
		return p
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var key string
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or a syntax error decodeStrict has seen
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.obj && top.wantKey {
			k := s
			if top.fold {
				k = strings.ToLower(strings.ToUpper(s))
			}
			if top.keys[k] {
				return memgate.FieldError(child(top, s), "is given more than once")
			}
			top.keys[k] = true
			top.wantKey, key = false, s
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			fold := top == nil || top.fold && !(top.obj && strings.EqualFold(key, "metadata"))
			stack = append(stack, &frame{obj: d == '{', path: child(top, key), keys: map[string]bool{}, fold: fold, wantKey: d == '{'})
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
		} else if top != nil && !top.obj {
			top.n++ // a scalar element of an array
		}
		// A value has ended: an enclosing object wants its next key.
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].wantKey = true
		}
	}
}

// jsonError turns a decoding error into an invalid_argument naming the
// field, without quoting the input.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return memgate.FieldError("", "malformed JSON at byte %d", syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return memgate.FieldError("", "malformed JSON: unexpected end of input")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return memgate.FieldError("", "request body must be a JSON %s", typeName(typ))
		}
		return memgate.FieldError(field, "must be %s", article(typeName(typ)))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		return memgate.FieldError(clip(name), "is not a known field")
	}
	return memgate.FieldError("", "malformed request body")
}

func typeName(e *json.UnmarshalTypeError) string {
	switch e.Type.Kind().String() {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if strings.HasPrefix(e.Value, "number") {
			return "integer in range"
		}
		return "integer"
	case "float32", "float64":
		if strings.HasPrefix(e.Value, "number") {
			return "number in range"
		}
		return "number"
	case "map", "struct":
		return "object"
	case "slice", "array":
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

// clip shortens a caller-supplied name for an error message.
func clip(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// checkEscapes refuses \u escapes of lone UTF-16 surrogates inside JSON
// strings. It assumes nothing about the rest of the syntax (the decoder
// judges that); it only tracks strings and escapes.
func checkEscapes(b []byte) error {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !in {
			if c == '"' {
				in = true
			}
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 >= len(b) {
				return nil
			}
			if b[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return nil // malformed: the decoder will say so
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
					return memgate.FieldError("", "request body holds an invalid \\u escape (a lone UTF-16 surrogate)")
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return memgate.FieldError("", "request body holds an invalid \\u escape (a lone UTF-16 surrogate)")
			default:
				i += 5
			}
		}
	}
	return nil
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

// query reads the query string of a request against the parameters a
// route accepts: an unknown parameter, a single-valued one given twice,
// or invalid UTF-8 is invalid_argument.
type query struct {
	v     url.Values
	multi map[string]bool
}

func parseQuery(r *http.Request, single []string, multi []string) (*query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, memgate.FieldError("", "malformed query string")
	}
	known := map[string]bool{}
	for _, k := range single {
		known[k] = false
	}
	for _, k := range multi {
		known[k] = true
	}
	for k, vals := range v {
		isMulti, ok := known[k]
		if !ok {
			return nil, memgate.FieldError(clip(k), "is not a known query parameter")
		}
		if !isMulti && len(vals) > 1 {
			return nil, memgate.FieldError(k, "must be given once")
		}
		for _, s := range vals {
			if !utf8.ValidString(s) {
				return nil, memgate.FieldError(k, "must be valid UTF-8")
			}
		}
	}
	return &query{v: v, multi: known}, nil
}

func (q *query) get(k string) string { return q.v.Get(k) }

// list returns every value of a repeatable parameter, each also split on
// commas, without empty items.
func (q *query) list(k string) []string {
	var out []string
	for _, s := range q.v[k] {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// int returns an integer parameter (0 when absent).
func (q *query) int(k string) (int, error) {
	s := q.v.Get(k)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, memgate.FieldError(k, "must be an integer")
	}
	return n, nil
}

// time returns an RFC 3339 time parameter (zero when absent).
func (q *query) time(k string) (time.Time, error) {
	return parseTime(k, q.v.Get(k))
}

// parseTime parses an RFC 3339 time; "" is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, memgate.FieldError(field, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	return t, nil
}

// optTime parses an optional RFC 3339 time; "" is nil.
func optTime(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := parseTime(field, s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// parseTTL parses a ttl ("30d", "12h"); "" is 0.
func parseTTL(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return memgate.ParseTTL(s)
}

package httpapi

import (
	"bytes"
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
	"github.com/memgate/memgate/internal/wire"
)

// bodyDecoder decodes the API's JSON request bodies: strictly and in one
// pass, with the MCP server's field-path errors (package wire).
var bodyDecoder = wire.Decoder{Input: "request body"}

// readBody reads the request body, at most limit bytes: a larger body is
// too_large, read no further. Whether it is valid UTF-8 is the decoder's
// to say (or wire.Decoder.CheckText's, for a body another decoder reads).
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
	return b, nil
}

// decodeBody reads the JSON request body into v, strictly (see
// bodyDecoder). An empty body is an error unless optional is set, in
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
	return bodyDecoder.Decode(b, v)
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
			return nil, memgate.FieldError(wire.Clip(k), "is not a known query parameter")
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

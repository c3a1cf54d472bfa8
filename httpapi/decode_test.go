package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/internal/wire"
)

func TestIfMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vals []string
		want int64
	}{
		{[]string{"3"}, 3}, {[]string{`"3"`}, 3}, {[]string{`W/"3"`}, 3}, {[]string{" 12 "}, 12},
		{nil, 0}, {[]string{"*"}, 0}, {[]string{"0"}, 0}, {[]string{"-1"}, 0}, {[]string{"1", "2"}, 0}, {[]string{`"abc"`}, 0},
	} {
		r := httptest.NewRequest("PATCH", "/", nil)
		for _, v := range tc.vals {
			r.Header.Add("If-Match", v)
		}
		got, err := ifMatch(r)
		if got != tc.want || (err == nil) != (tc.want > 0) {
			t.Errorf("If-Match %q = %d, %v", tc.vals, got, err)
		}
		if err != nil && memgate.ErrorField(err) != "If-Match" {
			t.Errorf("If-Match %q: error names %q", tc.vals, memgate.ErrorField(err))
		}
	}
}

// TestErrorTable: every code is answered with its status (the table is
// package wire's, TestStatusTable); an internal error (or an unknown code)
// says "internal error" and nothing else, and its detail goes to the log
// line with the request id.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	s := testServer()
	for _, code := range []string{memgate.EINVALID, memgate.EUNAUTHORIZED, memgate.EFORBIDDEN, memgate.ENOTFOUND,
		wire.CodeMethodNotAllowed, memgate.ECONFLICT, memgate.ETOOLARGE, memgate.EPOLICY, memgate.ERATELIMITED,
		memgate.EUNAVAILABLE, memgate.EINTERNAL} {
		status, ok := wire.Status(code)
		if !ok {
			t.Fatalf("%s is not in the table", code)
		}
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), memgate.Errorf(code, "detail of %s", code))
		if rec.Code != status {
			t.Errorf("%s answered %d", code, rec.Code)
		}
	}

	var logs bytes.Buffer
	s.log = slog.New(slog.NewJSONHandler(&logs, nil))
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, fmt.Errorf("sqlite: disk I/O error at page 7: %w", errors.New("hidden-detail")))
	})
	s.mux.HandleFunc("GET /odd", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &memgate.Error{Code: "made_up", Message: "odd-detail"})
	})
	s.mux.HandleFunc("GET /panic", func(w http.ResponseWriter, r *http.Request) { panic("panic-detail") })
	for _, path := range []string{"/boom", "/odd", "/panic"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 500 || strings.TrimSpace(rec.Body.String()) != `{"error":{"code":"internal","message":"internal error"}}` {
			t.Errorf("%s answered %d %s", path, rec.Code, rec.Body)
		}
		id := rec.Header().Get("X-Request-Id")
		var line map[string]any
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if strings.Contains(l, id) {
				json.Unmarshal([]byte(l), &line)
			}
		}
		if line == nil || !strings.Contains(fmt.Sprint(line["error"]), "detail") || line["level"] != "ERROR" {
			t.Errorf("%s: the log line with request id %s is %v", path, id, line)
		}
	}
}

// FuzzDecode: the strict decoder never panics, and what it accepts holds
// only valid UTF-8 (no input byte sequence slips through as U+FFFD).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"principal":"alice","kind":"fact","source":"user","content":"Alice keeps bees."}`,
		`{"content":"\ud83d\ude00","metadata":{"n":1e3,"s":"x","a":[1,{"b":null}]}}`,
		`{"content":"\ud800"}`, `{"content":"\\ud800"}`, "{\"content\":\"\xff\"}", `{"k":1}{}`,
		`{"contnet":1}`, `[]`, `"`, `{"metadata":{"\u0000":1}}`, `{"ttl":"30d","expires_at":"2026-01-01T00:00:00Z"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in memoryInput
		err := bodyDecoder.Decode(b, &in)
		if err != nil {
			if memgate.ErrorCode(err) != memgate.EINVALID {
				t.Fatalf("decode error with code %q: %v", memgate.ErrorCode(err), err)
			}
			return
		}
		if !utf8.Valid(b) {
			t.Fatal("invalid UTF-8 accepted")
		}
		for _, s := range []string{in.Tenant, in.Principal, in.Agent, in.Conversation, in.Kind, in.Source, in.Content, in.Reason, in.TTL} {
			if !utf8.ValidString(s) {
				t.Fatalf("decoded invalid UTF-8 %q", s)
			}
			if strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(b, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
				t.Fatalf("a replacement character appeared from nowhere in %q", b)
			}
		}
	})
}

package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, field string
		ok              bool
	}{
		{"absent", ``, "", true},
		{"null", `null`, "", true},
		{"empty", `{}`, "", true},
		{"fields", `{"content":"tea \u00e9 \ud83c\udf75","kind":"fact"}`, "", true},
		{"array", `[]`, "", false},
		{"string", `"x"`, "", false},
		{"unknown", `{"colour":"red"}`, "colour", false},
		{"identity", `{"principal":"bob"}`, "principal", false},
		{"wrong type", `{"content":12}`, "content", false},
		{"lone high surrogate", `{"content":"a\ud800b"}`, "", false},
		{"lone low surrogate", `{"content":"a\udc00"}`, "", false},
		{"high then non-low", `{"content":"\ud800\u0041"}`, "", false},
		{"escaped backslash then u", `{"content":"\\ud800"}`, "", true},
		{"two values", `{} {}`, "", false},
		{"truncated", `{"content":`, "", false},
		{"invalid UTF-8", "{\"content\":\"\xff\"}", "", false},
		{"duplicate key", `{"content":"a","kind":"fact","content":"b"}`, "content", false},
		{"duplicate key in another case", `{"kind":"fact","Kind":"task"}`, "Kind", false},
		{"duplicate key spelled as an escape", `{"kind":"fact","\u006bind":"task"}`, "kind", false},
		{"each key once", `{"kind":"fact","content":"b"}`, "", true},
	} {
		var in rememberInput
		err := decodeArgs(json.RawMessage(tc.in), &in)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if err != nil && (memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != tc.field) {
			t.Errorf("%s: %v (field %q), want field %q", tc.name, err, memgate.ErrorField(err), tc.field)
		}
	}
}

// FuzzDecodeArgs: any input either decodes or is an invalid_argument, and
// what decodes is valid UTF-8 without a replacement character the input
// did not hold.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"content":"x","kind":"fact"}`, `{"content":"\ud800"}`, `{"content":"\ud83c\udf75"}`,
		`{"k":1e400}`, `{"principal":"x"}`, `{"content":"a","content":"b"}`, `{"kind":"fact","KIND":"task"}`,
		`{"content":"\\"}`, `{"content":"\u0000"}`, "{\"content\":\"\xed\xa0\x80\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in rememberInput
		err := decodeArgs(json.RawMessage(s), &in)
		if err != nil {
			if memgate.ErrorCode(err) != memgate.EINVALID {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		for _, v := range []string{in.Content, in.Kind, in.Reason, in.TTL, in.Supersedes} {
			if !utf8.ValidString(v) {
				t.Fatalf("%q: decoded invalid UTF-8", s)
			}
			if strings.ContainsRune(v, utf8.RuneError) && !strings.Contains(s, "\ufffd") && !strings.Contains(strings.ToLower(s), `\ufffd`) {
				t.Fatalf("%q: decoded a replacement character the input did not hold", s)
			}
		}
	})
}

package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// item and body are a target shaped like the API's: a struct with an
// embedded one, a list of structs, metadata (any JSON) and typed maps.
type item struct {
	Kind     string         `json:"kind"`
	Source   string         `json:"source"`
	Metadata map[string]any `json:"metadata"`
}

type owner struct {
	Tenant string `json:"tenant"`
}

type body struct {
	owner
	Content  string            `json:"content"`
	K        int               `json:"k"`
	Score    *float64          `json:"min_score"`
	Memories []item            `json:"memories"`
	Labels   map[string]string `json:"labels"`
	Metadata map[string]any    `json:"metadata"`
}

var test = Decoder{Input: "request body"}

// TestDecodeRefuses: every refusal is invalid_argument naming the exact
// field path (or none, when the whole input is at fault), and says no
// value of the input. Each case has a control beside it, the same input
// made good, which decodes.
func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, control, field string
	}{
		{"duplicate member", `{"content":"a","content":"planted"}`, `{"content":"a"}`, "content"},
		{"duplicate member in another case", `{"content":"a","Content":"planted"}`, `{"Content":"a"}`, "Content"},
		{"duplicate member spelled as an escape", `{"content":"a","\u0063ontent":"planted"}`, `{"\u0063ontent":"a"}`, "content"},
		{"duplicate member of an embedded struct", `{"tenant":"a","TENANT":"planted"}`, `{"TENANT":"a"}`, "TENANT"},
		{"duplicate member of a list item", `{"memories":[{},{"kind":"a","kind":"planted"}]}`, `{"memories":[{},{"kind":"a"}]}`, "memories[1].kind"},
		{"duplicate metadata key", `{"metadata":{"x":1,"x":2}}`, `{"metadata":{"x":1,"X":2}}`, "metadata.x"},
		{"duplicate metadata key deep", `{"metadata":{"a":[{"b":1,"b":2}]}}`, `{"metadata":{"a":[{"b":1},{"b":2}]}}`, "metadata.a[0].b"},
		{"duplicate metadata key named by a number", `{"metadata":{"0":{"1":1,"1":2}}}`, `{"metadata":{"0":{"1":1,"2":2}}}`, "metadata.0.1"},
		{"duplicate in an item's metadata", `{"memories":[{"metadata":{"0":[0,{"k":1,"k":2}]}}]}`, `{"memories":[{"metadata":{"0":[0,{"k":1}]}}]}`, "memories[0].metadata.0[1].k"},
		{"duplicate label", `{"labels":{"x":"a","x":"planted"}}`, `{"labels":{"x":"a"}}`, "labels.x"},
		{"unknown member", `{"content":"a","colour":"planted"}`, `{"content":"a"}`, "colour"},
		{"unknown member, delimiters significant", `{"min-score":0.5}`, `{"MIN_SCORE":0.5}`, "min-score"},
		{"unknown member of a list item", `{"memories":[{},{"colour":"planted"}]}`, `{"memories":[{},{"kind":"planted"}]}`, "memories[1].colour"},
		{"long unknown member, clipped", `{"` + strings.Repeat("z", 40) + `":1}`, `{}`, strings.Repeat("z", 32) + "…"},
		{"wrong type", `{"content":42}`, `{"content":"42"}`, "content"},
		{"wrong type in a list item", `{"memories":[{},{},{"kind":1}]}`, `{"memories":[{},{},{"kind":"1"}]}`, "memories[2].kind"},
		{"wrong type in a map", `{"labels":{"x":1}}`, `{"labels":{"x":"1"}}`, "labels.x"},
		{"list an object", `{"memories":{}}`, `{"memories":[]}`, "memories"},
		{"metadata a string", `{"metadata":"planted"}`, `{"metadata":{}}`, "metadata"},
		{"integer fractional", `{"k":2.5}`, `{"k":2}`, "k"},
		{"integer beyond int64", `{"k":9223372036854775808}`, `{"k":9223372036854775807}`, "k"},
		{"number beyond float64", `{"min_score":1e999}`, `{"min_score":1e308}`, "min_score"},
		{"number a string", `{"min_score":"0.5"}`, `{"min_score":0.5}`, "min_score"},
		{"invalid UTF-8", "{\"content\":\"a\xffb\"}", `{"content":"ab"}`, ""},
		{"invalid UTF-8 in a key", "{\"metadata\":{\"\xc3\":1}}", `{"metadata":{"\u00c3":1}}`, ""},
		{"lone high surrogate", `{"content":"a\ud800b"}`, `{"content":"a\ud800\udc00b"}`, ""},
		{"lone low surrogate", `{"content":"\udc00"}`, `{"content":"\\udc00"}`, ""},
		{"high surrogate then another escape", `{"content":"\ud800\u0041"}`, `{"content":"\u0041"}`, ""},
		{"raw control character", "{\"content\":\"a\x00b\"}", `{"content":"a\u0000b"}`, ""},
		{"NaN", `{"min_score":NaN}`, `{"min_score":0}`, ""},
		{"two values", `{"content":"a"} {}`, `{"content":"a"} `, ""},
		{"text after the value", `{"content":"a"} x`, "\n{\"content\":\"a\"}\n", ""},
		{"truncated", `{"content":`, `{"content":""}`, ""},
		{"not an object", `["planted"]`, `null`, ""},
		{"too deep", `{"metadata":{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`,
			`{"metadata":{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`, ""},
	} {
		var v body
		err := test.Decode([]byte(tc.in), &v)
		if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != tc.field {
			t.Errorf("%s: %v (field %q), want invalid_argument naming %q", tc.name, err, memgate.ErrorField(err), tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "planted") {
			t.Errorf("%s: the error echoes the input: %v", tc.name, err)
		}
		var c body
		if err := test.Decode([]byte(tc.control), &c); err != nil {
			t.Errorf("%s: the control %s: %v", tc.name, tc.control, err)
		}
	}
}

// TestDecodeMessages: an error about the whole input names it as its
// Decoder says; one about a field says what the field must be.
func TestDecodeMessages(t *testing.T) {
	t.Parallel()
	args := Decoder{Input: "arguments"}
	for _, tc := range []struct {
		in, want string
	}{
		{"{\"content\":\"\xff\"}", "arguments must be valid UTF-8"},
		{`{"content":"\ud800"}`, `arguments must not hold an invalid \u escape (a lone UTF-16 surrogate)`},
		{`[]`, "arguments must be a JSON object"},
		{`{} {}`, "arguments must hold a single JSON value"},
		{`{"content":`, "malformed JSON: unexpected end of input"},
		{`{"content":x}`, "malformed JSON at byte 11"},
		{`{"content":1}`, "content: must be a string"},
		{`{"k":"5"}`, "k: must be an integer"},
		{`{"k":1e30}`, "k: must be an integer in range"},
		{`{"min_score":true}`, "min_score: must be a number"},
		{`{"memories":1}`, "memories: must be an array"},
		{`{"labels":[]}`, "labels: must be an object"},
		{`{"k":1,"k":2}`, "k: is given more than once"},
		{`{"kk":1}`, "kk: is not a known field"},
	} {
		var v body
		if err := args.Decode([]byte(tc.in), &v); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	hinted := Decoder{Input: "arguments", Unknown: func(path string) string {
		if path == "principal" {
			return "is fixed by the connection"
		}
		return ""
	}}
	var v body
	if err := hinted.Decode([]byte(`{"principal":"x"}`), &v); err == nil || err.Error() != "principal: is fixed by the connection" {
		t.Errorf("a hinted unknown member: %v", err)
	}
	if err := hinted.Decode([]byte(`{"agent":"x"}`), &v); err == nil || err.Error() != "agent: is not a known field" {
		t.Errorf("another unknown member: %v", err)
	}
}

// TestDecodeKeepsWhatWasAccepted: what the edge accepted before it was
// one decoder (encoding/json, with numbers as json.Number) it accepts
// now, to the same value: field names in any case, null for any field,
// metadata numbers exact, its keys compared exactly.
func TestDecodeKeepsWhatWasAccepted(t *testing.T) {
	t.Parallel()
	in := `{"TENANT":"acme","Content":"a \u00e9 \ud83d\ude00","k":null,"min_score":0.5,
		"memories":[{"kind":"fact","metadata":{"n":12345678901234567890,"f":1.50,"e":-1E-7}},null,{}],
		"labels":{"a":"x","A":"y"},"metadata":{"a":[1,{"b":null,"c":true}],"A":"s","0":0}}`
	var got, want body
	if err := test.Decode([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%#v\nencoding/json decodes\n%#v", got, want)
	}
	if n := got.Memories[0].Metadata["n"]; n != json.Number("12345678901234567890") {
		t.Fatalf("a metadata number is %#v, want it exact", n)
	}
}

// TestDecodeObject: the members of the top-level object, in order, each
// once, as spelled; none for null.
func TestDecodeObject(t *testing.T) {
	t.Parallel()
	var v body
	got, err := test.DecodeObject([]byte(`{"Content":"a","memories":[{"kind":"x"}],"metadata":{"m":1},"tenant":null}`), &v)
	if want := []string{"Content", "memories", "metadata", "tenant"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("members %q, %v; want %q", got, err, want)
	}
	if got, err := test.DecodeObject([]byte(`null`), &v); err != nil || got != nil {
		t.Fatalf("null: members %q, %v", got, err)
	}
	if _, err := test.DecodeObject([]byte(`{"k":1,"k":1}`), &v); memgate.ErrorField(err) != "k" {
		t.Fatalf("a duplicate: %v", err)
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":"plain"}`, true},
		{`{"a":"\u00e9\n\"\\"}`, true},
		{`{"a":"\ud83d\ude00"}`, true}, // a valid pair
		{`{"a":"\\ud800"}`, true},      // an escaped backslash, then text
		{`{"a":"\ud800"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"a":"\ud800x"}`, false},
		{`{"\ud800":1}`, false},
		{`{"a":"\ud83d\ude00\udc00"}`, false},
		{"{\"a\":\"\xed\xa0\x80\"}", false}, // a surrogate encoded in UTF-8
		{"{\"a\":\"\xff\"}", false},
	} {
		err := test.CheckText([]byte(tc.in))
		if (err == nil) != tc.ok || err != nil && memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("CheckText(%s) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

// FuzzDecode: the decoder never panics; what it refuses is an
// invalid_argument, and what it accepts is a text CheckText accepts (so
// no input byte sequence turns into U+FFFD), which encoding/json decodes
// to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"tenant":"acme","content":"Alice keeps bees.","memories":[{"kind":"fact","source":"user"}]}`,
		`{"content":"\ud83d\ude00","metadata":{"n":1e3,"s":"x","a":[1,{"b":null}]}}`,
		`{"content":"\ud800"}`, `{"content":"\\ud800"}`, "{\"content\":\"\xff\"}", `{"k":1}{}`,
		`{"contnet":1}`, `[]`, `"`, `{"metadata":{"\u0000":1}}`, `{"k":1,"K":2}`, `{"labels":{"a":"x","a":"y"}}`,
		`{"memories":[{},{"kind":1}]}`, `{"metadata":{"0":[{"1":1,"1":2}]}}`, `{"min_score":-0.0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got body
		if err := test.Decode(b, &got); err != nil {
			if code := memgate.ErrorCode(err); code != memgate.EINVALID {
				t.Fatalf("refused with code %q: %v", code, err)
			}
			return
		}
		if err := test.CheckText(b); err != nil {
			t.Fatalf("accepted %q, a text CheckText refuses: %v", b, err)
		}
		var want body
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q decodes to\n%#v\nencoding/json decodes it to\n%#v", b, got, want)
		}
	})
}

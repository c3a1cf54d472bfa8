package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// jsonStrings are the strings the generator draws from: plain, empty, and
// every kind json.Marshal escapes (HTML characters, quotes, backslashes,
// every control character, DEL, invalid UTF-8, U+2028 and U+2029) beside
// runes of two, three and four bytes.
var jsonStrings = func() []string {
	out := []string{"", "", "alice", "Alice drinks green tea, no sugar.", "m_01m99j62c9t5nnrvrqpty609e9",
		"<memories>&amp;</memories>", `say "hi" \ bye`, "tab\there\nnew line\r\f\b", "\x7f", "caf\u00e9 \u4e2d \U0001F375",
		"line\u2028sep\u2029par", "bad \xff\xfe utf8 \xc3", "\xe2\x80", "ends with <"}
	for c := range 0x20 {
		out = append(out, "ctl"+string(rune(c))+"x")
	}
	return out
}()

// randomString joins up to three of jsonStrings.
func randomString(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(4) {
		sb.WriteString(jsonStrings[r.IntN(len(jsonStrings))])
	}
	return sb.String()
}

// randomFloat draws floats of both of encoding/json's forms (plain and
// exponent) and around their cut-offs.
func randomFloat(r *rand.Rand) float64 {
	fs := []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2e22, -3.4e-8, 123.456, math.SmallestNonzeroFloat64, math.MaxFloat64}
	if r.IntN(2) == 0 {
		return fs[r.IntN(len(fs))]
	}
	return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
}

func randomTime(r *rand.Rand) time.Time {
	if r.IntN(8) == 0 {
		return time.Time{}.UTC() // year 1
	}
	t := time.Unix(r.Int64N(5e9), r.Int64N(1e9)).UTC()
	if r.IntN(2) == 0 {
		t = t.Truncate(time.Microsecond) // what the stores keep
	}
	return t
}

func randomMetadata(r *rand.Rand) map[string]any {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	}
	m := map[string]any{}
	for range 1 + r.IntN(4) {
		var v any
		switch r.IntN(5) {
		case 0:
			v = randomString(r)
		case 1:
			v = randomFloat(r)
		case 2:
			v = r.IntN(2) == 0
		case 3:
			v = []any{randomString(r), randomFloat(r)}
		default:
			v = map[string]any{randomString(r): randomString(r)}
		}
		m[randomString(r)] = v
	}
	return m
}

// fill sets every field of the struct v points to at random, by its type,
// and fails t on a type it does not know: a field added to memgate.Memory
// is drawn like the others, so appendMemoryFields must write it for the
// bytes to match.
func fill(t *testing.T, r *rand.Rand, v reflect.Value) {
	t.Helper()
	v = v.Elem()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch x := f.Addr().Interface().(type) {
		case *string:
			*x = randomString(r)
		case *memgate.Kind:
			*x = memgate.Kind(randomString(r))
		case *memgate.Source:
			*x = memgate.Source(randomString(r))
		case *memgate.Sensitivity:
			*x = memgate.Sensitivity(randomString(r))
		case *memgate.Status:
			*x = memgate.Status(randomString(r))
		case *int64:
			*x = []int64{0, 1, -1, r.Int64(), -r.Int64()}[r.IntN(5)]
		case *int:
			*x = []int{0, 7, -3, r.Int()}[r.IntN(4)]
		case *bool:
			*x = r.IntN(2) == 0
		case *time.Time:
			*x = randomTime(r)
		case **time.Time:
			if r.IntN(2) == 0 {
				tm := randomTime(r)
				*x = &tm
			}
		case *map[string]any:
			*x = randomMetadata(r)
		case *[]string:
			switch r.IntN(3) {
			case 0:
			case 1:
				*x = []string{}
			default:
				*x = []string{randomString(r), randomString(r)}
			}
		case *[]float32:
			*x = []float32{r.Float32()}
		case **memgate.Embedding:
			if r.IntN(3) > 0 {
				e := new(memgate.Embedding)
				fill(t, r, reflect.ValueOf(e))
				*x = e
			}
		case *memgate.Feedback:
			x.Count, x.Sum = r.Int64N(1000), randomFloat(r)
		default:
			t.Fatalf("field %s of type %s: the test does not draw it, and appendMemoryFields may not write it", sf.Name, sf.Type)
		}
	}
}

func randomMemory(t *testing.T, r *rand.Rand) *memgate.Memory {
	m := new(memgate.Memory)
	fill(t, r, reflect.ValueOf(m))
	return m
}

// sameAsMarshal fails t unless a's appendJSON writes what json.Marshal
// writes for a.
func sameAsMarshal(t *testing.T, a jsonAppender) {
	t.Helper()
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := a.appendJSON(nil)
	if !ok {
		t.Fatalf("not appended; json.Marshal wrote %s", want)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("appended JSON differs from json.Marshal's at byte %d:\n got  %q\n want %q", i, got[max(0, i-40):min(len(got), i+40)], want[max(0, i-40):min(len(want), i+40)])
	}
}

// TestMemoryJSONIsMarshal: the recall, list and remember responses write
// byte for byte what json.Marshal writes for them, over memories whose
// every field is drawn at random (strings of every kind json.Marshal
// escapes, times, floats of both forms, empty and absent optional
// fields). The control: the draws hold strings that need escaping, absent
// and present optional fields, and floats of the exponent form, so a
// writer that skipped any of them would differ.
func TestMemoryJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 8))
	var escaped, exponent, absent, present int
	for range 3000 {
		m := randomMemory(t, r)
		b, _ := json.Marshal(m)
		if bytes.Contains(b, []byte(`\u003c`)) || bytes.Contains(b, []byte(`\ufffd`)) || bytes.Contains(b, []byte(`\u2028`)) {
			escaped++
		}
		if bytes.Contains(b, []byte(`e-`)) || bytes.Contains(b, []byte(`e+`)) {
			exponent++
		}
		if m.ExpiresAt == nil && m.Agent == "" {
			absent++
		}
		if m.ExpiresAt != nil && m.Embedding != nil && len(m.Flags) > 0 && len(m.Metadata) > 0 {
			present++
		}
		sameAsMarshal(t, memoryList{Memories: []*memgate.Memory{m, randomMemory(t, r)}, NextCursor: randomString(r), Limit: r.IntN(100), Clamped: r.IntN(2) == 0})

		rem := []*memgate.Remembered{{Memory: m, Deduplicated: r.IntN(2) == 0, Replayed: r.IntN(2) == 0}, {Memory: randomMemory(t, r)}, {Deduplicated: true}}
		sameAsMarshal(t, rememberedList{Memories: rem})

		res := &memgate.RecallResult{RecallID: randomString(r), BelowFloor: r.IntN(5), MinScore: randomFloat(r), Context: randomString(r)}
		for range r.IntN(4) {
			res.Results = append(res.Results, memgate.RecallHit{Memory: randomMemory(t, r), Score: randomFloat(r)})
		}
		if r.IntN(4) == 0 {
			res.Results = []memgate.RecallHit{} // "results": [], not null
		}
		out := recallResponse{RecallResult: res}
		if r.IntN(2) == 0 {
			c := randomString(r)
			out.Context = &c
		}
		sameAsMarshal(t, out)
	}
	sameAsMarshal(t, memoryList{})
	sameAsMarshal(t, rememberedList{})
	sameAsMarshal(t, recallResponse{RecallResult: &memgate.RecallResult{}})
	if escaped == 0 || exponent == 0 || absent == 0 || present == 0 {
		t.Fatalf("draws: %d with escapes, %d with exponents, %d with optional fields absent, %d present: the test needs each", escaped, exponent, absent, present)
	}
}

// TestMemoryJSONFallsBack: what appendJSON does not write, json.Marshal
// does, and writeJSON answers as it did before: an explained recall or a
// preview's candidates (not covered), a time outside UTC (which
// MarshalJSON checks), and a score that is not finite (json.Marshal's
// error: an internal error). And appendJSON knows every field of the
// types it writes: a new one fails here until it is written.
func TestMemoryJSONFallsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 9))
	hit := memgate.RecallHit{Memory: randomMemory(t, r), Score: 0.5}
	local := time.Date(2026, 12, 8, 1, 2, 3, 0, time.FixedZone("X", 3600))
	other := randomMemory(t, r)
	other.ValidFrom = &local
	explained := hit
	explained.Explain = &memgate.HitExplain{VectorZ: 1}
	for name, a := range map[string]jsonAppender{
		"explain":         recallResponse{RecallResult: &memgate.RecallResult{Results: []memgate.RecallHit{hit}, Explain: &memgate.RecallStats{}}},
		"hit explain":     recallResponse{RecallResult: &memgate.RecallResult{Results: []memgate.RecallHit{hit, explained}}},
		"below floor":     recallResponse{RecallResult: &memgate.RecallResult{Results: []memgate.RecallHit{hit}, BelowFloorResults: []memgate.RecallHit{hit}}},
		"zone":            memoryList{Memories: []*memgate.Memory{other}},
		"NaN score":       recallResponse{RecallResult: &memgate.RecallResult{Results: []memgate.RecallHit{{Memory: hit.Memory, Score: math.NaN()}}}},
		"infinite sum":    rememberedList{Memories: []*memgate.Remembered{{Memory: &memgate.Memory{Feedback: memgate.Feedback{Count: 1, Sum: math.Inf(1)}}}}},
		"NaN floor score": recallResponse{RecallResult: &memgate.RecallResult{MinScore: math.NaN()}},
	} {
		if _, ok := a.appendJSON(nil); ok {
			t.Errorf("%s: appended, want json.Marshal to write it", name)
		}
		want := httptest.NewRecorder()
		if b, err := json.Marshal(a); err == nil {
			want.Write(append(b, '\n'))
		} else {
			want.Write([]byte("{\"error\":{\"code\":\"internal\",\"message\":\"internal error\"}}\n"))
		}
		got := httptest.NewRecorder()
		writeJSON(got, 200, a)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("%s: writeJSON wrote %q, want %q", name, got.Body.Bytes(), want.Body.Bytes())
		}
	}
	// The control: the same responses without what they fall back on
	// are appended.
	if _, ok := (recallResponse{RecallResult: &memgate.RecallResult{Results: []memgate.RecallHit{hit}}}).appendJSON(nil); !ok {
		t.Error("a recall without explanation was not appended")
	}

	known := map[reflect.Type][]string{
		reflect.TypeFor[memgate.RecallResult](): {"RecallID", "Results", "BelowFloor", "MinScore", "Context", "Explain", "BelowFloorResults"},
		reflect.TypeFor[memgate.RecallHit]():    {"Memory", "Score", "Explain"},
		reflect.TypeFor[memgate.Remembered]():   {"Memory", "Deduplicated", "Replayed"},
		reflect.TypeFor[memgate.Embedding]():    {"Provider", "Model", "Dim", "Vector"},
		reflect.TypeFor[memgate.Feedback]():     {"Count", "Sum"},
		reflect.TypeFor[recallResponse]():       {"RecallResult", "Context"},
		reflect.TypeFor[memoryList]():           {"Memories", "NextCursor", "Limit", "Clamped"},
		reflect.TypeFor[rememberedList]():       {"Memories"},
	}
	for typ, names := range known {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		if !reflect.DeepEqual(got, names) {
			t.Errorf("%s has fields %v; appendJSON (memjson.go) writes %v: teach it the new ones", typ, got, names)
		}
	}
}

// BenchmarkRecallJSON is a recall response of five memories, through
// appendJSON and through json.Marshal.
func BenchmarkRecallJSON(b *testing.B) {
	ctx := "<memories>…</memories>"
	res := &memgate.RecallResult{RecallID: "r_01m99j62db9e8r9tnp72m127ra", MinScore: 0.33}
	for i := range 5 {
		now := time.Date(2026, 12, 8, 0, 52, 14, 857910000, time.UTC)
		res.Results = append(res.Results, memgate.RecallHit{Score: 0.7 - float64(i)/10, Memory: &memgate.Memory{
			ID: "m_01m99j62c9t5nnrvrqpty609e9", Tenant: "default", Principal: "alice", Kind: memgate.KindPreference,
			Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard, Status: memgate.StatusActive,
			Content: "Alice drinks green tea, no sugar, every morning before work.", Reason: "said in chat",
			CreatedAt: now, UpdatedAt: now, Version: 1, ContentSHA256: "bd594ed3cfc352614c897ae3af247d362a78a87e10c56565341a34826bd8350e",
			Embedding: &memgate.Embedding{Provider: "builtin", Model: "builtin/hybrid-v2", Dim: 484}, SeenCount: 1,
			CreatedBy: "key_4023733c13e6adef", UpdatedBy: "key_4023733c13e6adef",
		}})
	}
	out := recallResponse{RecallResult: res, Context: &ctx}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out.appendJSON(make([]byte, 0, 4096))
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(out)
		}
	})
}

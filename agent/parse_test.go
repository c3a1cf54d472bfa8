package agent

import (
	"strings"
	"testing"
)

func TestParseCandidates(t *testing.T) {
	t.Parallel()
	shown := map[string]bool{"m_a": true, "m_b": true}
	long := strings.Repeat("x", MaxCandidateBytes+1)
	for _, tc := range []struct {
		name              string
		in                string
		ok                bool
		kept              []string // contents kept, in order
		proposed, dropped int
	}{
		{"empty list", `{"memories":[]}`, true, nil, 0, 0},
		{"one fact", `{"memories":[{"kind":"fact","content":" Lives in Oslo. ","reason":"said so"}]}`, true, []string{"Lives in Oslo."}, 1, 0},
		{"preference", `{"memories":[{"kind":"preference","content":"Likes tea."}]}`, true, []string{"Likes tea."}, 1, 0},
		{"null optionals", `{"memories":[{"kind":"fact","content":"A.","reason":null,"replaces":null}]}`, true, []string{"A."}, 1, 0},
		{"whitespace around", " \n{\"memories\":[]}\n ", true, nil, 0, 0},
		{"unknown item key", `{"memories":[{"kind":"fact","content":"A.","confidence":1}]}`, true, nil, 1, 1},
		{"kind task", `{"memories":[{"kind":"task","content":"A."}]}`, true, nil, 1, 1},
		{"kind missing", `{"memories":[{"content":"A."}]}`, true, nil, 1, 1},
		{"kind not a string", `{"memories":[{"kind":1,"content":"A."}]}`, true, nil, 1, 1},
		{"kind null", `{"memories":[{"kind":null,"content":"A."}]}`, true, nil, 1, 1},
		{"content blank", `{"memories":[{"kind":"fact","content":"  "}]}`, true, nil, 1, 1},
		{"content missing", `{"memories":[{"kind":"fact"}]}`, true, nil, 1, 1},
		{"content null", `{"memories":[{"kind":"fact","content":null}]}`, true, nil, 1, 1},
		{"content too long", `{"memories":[{"kind":"fact","content":"` + long + `"}]}`, true, nil, 1, 1},
		{"content NUL", `{"memories":[{"kind":"fact","content":"a\u0000b"}]}`, true, nil, 1, 1},
		{"reason too long", `{"memories":[{"kind":"fact","content":"A.","reason":"` + long + `"}]}`, true, nil, 1, 1},
		{"reason number", `{"memories":[{"kind":"fact","content":"A.","reason":3}]}`, true, nil, 1, 1},
		{"replaces shown", `{"memories":[{"kind":"fact","content":"A.","replaces":"m_a"}]}`, true, []string{"A."}, 1, 0},
		{"replaces not shown", `{"memories":[{"kind":"fact","content":"A.","replaces":"m_zzz"}]}`, true, nil, 1, 1},
		{"replaces twice", `{"memories":[{"kind":"fact","content":"A.","replaces":"m_a"},{"kind":"fact","content":"B.","replaces":"m_a"}]}`, true, []string{"A."}, 2, 1},
		{"item not an object", `{"memories":["Lives in Oslo."]}`, true, nil, 1, 1},
		{"more than five", `{"memories":[` + strings.Repeat(`{"kind":"fact","content":"A."},`, 6) + `{"kind":"fact","content":"A."}]}`, true, []string{"A.", "A.", "A.", "A.", "A."}, 7, 2},
		{"not json", `Alice lives in Oslo.`, false, nil, 0, 0},
		{"empty", ``, false, nil, 0, 0},
		{"null", `null`, false, nil, 0, 0},
		{"array", `[]`, false, nil, 0, 0},
		{"extra key", `{"memories":[],"x":1}`, false, nil, 0, 0},
		{"no memories key", `{}`, false, nil, 0, 0},
		{"memories null", `{"memories":null}`, false, nil, 0, 0},
		{"memories string", `{"memories":"none"}`, false, nil, 0, 0},
		{"trailing data", `{"memories":[]}x`, false, nil, 0, 0},
		{"two objects", `{"memories":[]}{"memories":[]}`, false, nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cands, proposed, dropped, ok := parseCandidates(tc.in, shown)
			if ok != tc.ok || proposed != tc.proposed || dropped != tc.dropped {
				t.Fatalf("ok %v proposed %d dropped %d, want %v %d %d", ok, proposed, dropped, tc.ok, tc.proposed, tc.dropped)
			}
			var kept []string
			for _, c := range cands {
				kept = append(kept, c.content)
			}
			if strings.Join(kept, "|") != strings.Join(tc.kept, "|") {
				t.Fatalf("kept %q, want %q", kept, tc.kept)
			}
		})
	}
}

// FuzzParseCandidates: whatever the model answers, what is kept is valid.
func FuzzParseCandidates(f *testing.F) {
	for _, s := range []string{
		`{"memories":[]}`,
		`{"memories":[{"kind":"fact","content":"Lives in Oslo.","replaces":"m_a"}]}`,
		`{"memories":[{"kind":"preference","content":"x","reason":null}]}`,
		`{"memories":[{"kind":"fact","content":"a","replaces":"m_a"},{"kind":"fact","content":"b","replaces":"m_a"}]}`,
		`[1,2]`, `null`, `{"memories":null}`, "\xff", `{"memories":[{"kind":"fact","content":"\u0000"}]}`,
	} {
		f.Add(s)
	}
	shown := map[string]bool{"m_a": true}
	f.Fuzz(func(t *testing.T, s string) {
		cands, proposed, dropped, ok := parseCandidates(s, shown)
		if !ok {
			if len(cands) != 0 || proposed != 0 || dropped != 0 {
				t.Fatalf("malformed answer kept %d candidates", len(cands))
			}
			return
		}
		if len(cands) > MaxCandidates || len(cands)+dropped != proposed {
			t.Fatalf("kept %d dropped %d proposed %d", len(cands), dropped, proposed)
		}
		used := map[string]bool{}
		for _, c := range cands {
			if c.kind != "fact" && c.kind != "preference" {
				t.Fatalf("kind %q", c.kind)
			}
			if strings.TrimSpace(c.content) == "" || len(c.content) > MaxCandidateBytes || strings.IndexByte(c.content, 0) >= 0 {
				t.Fatalf("content %q", c.content)
			}
			if len(c.reason) > MaxCandidateBytes {
				t.Fatalf("reason of %d bytes", len(c.reason))
			}
			if c.replaces != "" && (!shown[c.replaces] || used[c.replaces]) {
				t.Fatalf("replaces %q", c.replaces)
			}
			used[c.replaces] = true
		}
	})
}

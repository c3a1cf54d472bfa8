package engine

import (
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/index"
)

// The proposals candidates keeps line up with the rank candidates it
// returns, one for one, whether or not the store refused some: with none
// refused they are the proposals themselves (no copy), with some refused
// a copy without them, and the proposals are left as they were.
func TestCandidatesKeptLineUp(t *testing.T) {
	props := []index.Candidate{{ID: "a", DocLen: 1}, {ID: "b", DocLen: 2}, {ID: "c", DocLen: 3}, {ID: "d", DocLen: 4}}
	check := func(name string, v *verifier, want ...string) {
		t.Helper()
		cands, kept := v.candidates(props, model{}, nil)
		if len(cands) != len(want) || len(kept) != len(want) {
			t.Fatalf("%s: %d candidates and %d kept, want %d", name, len(cands), len(kept), len(want))
		}
		for i, id := range want {
			if cands[i].ID != id || kept[i].ID != id || cands[i].DocLen != kept[i].DocLen {
				t.Errorf("%s: #%d is candidate %s (len %d) beside proposal %s (len %d), want %s", name, i, cands[i].ID, cands[i].DocLen, kept[i].ID, kept[i].DocLen, id)
			}
		}
		for i, id := range []string{"a", "b", "c", "d"} {
			if props[i].ID != id {
				t.Fatalf("%s: proposals modified: #%d is %s", name, i, props[i].ID)
			}
		}
	}
	check("none refused", &verifier{fetched: map[string]*memgate.Memory{}, refused: map[string]bool{}}, "a", "b", "c", "d")
	check("first refused", &verifier{fetched: map[string]*memgate.Memory{}, refused: map[string]bool{"a": true}}, "b", "c", "d")
	check("middle refused", &verifier{fetched: map[string]*memgate.Memory{}, refused: map[string]bool{"b": true, "c": true}}, "a", "d")
	all := &verifier{all: true, fetched: map[string]*memgate.Memory{"a": {ID: "a"}, "c": {ID: "c"}}, refused: map[string]bool{}}
	check("all read, two admitted", all, "a", "c")
}

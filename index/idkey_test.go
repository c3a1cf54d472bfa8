package index

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// requireKeyOrder checks that cmpIDs orders every pair of p's live slots
// as their ids order as strings, and returns how many distinct pairs the
// keys alone decided.
func requireKeyOrder(t *testing.T, p *Partition) (byKey, pairs int) {
	t.Helper()
	var live []int32
	for s := range int32(p.nslots) {
		if p.sl(s).id != "" {
			live = append(live, s)
		}
	}
	for _, a := range live {
		for _, b := range live {
			ia, ib := p.sl(a).id, p.sl(b).id
			if got, want := p.cmpIDs(a, b), strings.Compare(ia, ib); got != want {
				t.Fatalf("cmpIDs(%q, %q) = %d, strings.Compare %d (base %q)", ia, ib, got, want, p.idBase)
			}
			if a < b {
				pairs++
				if p.idKey[a] != p.idKey[b] {
					byKey++
				}
			}
		}
	}
	return byKey, pairs
}

func keyEntry(id string) Entry {
	return Entry{ID: id, Terms: []string{"tie"}, Kind: memgate.KindFact, Source: memgate.SourceUser, Status: memgate.StatusActive, CreatedAt: micros(now)}
}

// TestIDKeysOrderLikeIDs checks the keys of ties (idkey.go) against the
// ids' own order while the base shortens, for memgate's ids and for ids a
// caller chose: prefixes of each other, and ids whose keys are equal (the
// strings decide those).
func TestIDKeysOrderLikeIDs(t *testing.T) {
	t.Parallel()
	p := NewPartition(Config{})
	upsert := func(id string) {
		t.Helper()
		if err := p.Upsert(keyEntry(id)); err != nil {
			t.Fatal(err)
		}
	}
	// memgate's ids, a few milliseconds apart, some in the same one.
	at := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	var native []string
	for i := range 200 {
		id := memgate.NewID(at.Add(time.Duration(i/4) * time.Millisecond))
		native = append(native, id)
		upsert(id)
	}
	base := len(p.idBase)
	if base < len("m_")+6 {
		t.Fatalf("memgate ids of one second share a base of %d bytes (%q)", base, p.idBase)
	}
	byKey, pairs := requireKeyOrder(t, p)
	if byKey != pairs {
		t.Fatalf("the keys decided %d of %d pairs of memgate ids of one second, want all", byKey, pairs)
	}
	// A later id shortens the base: every key is made again.
	upsert(memgate.NewID(at.Add(400 * 24 * time.Hour)))
	if len(p.idBase) >= base {
		t.Fatalf("base %q after an id of a year later, was %d bytes", p.idBase, base)
	}
	requireKeyOrder(t, p)
	// Ids a caller chose: the base shortens to nothing; prefixes of each
	// other; and pairs equal in their first 8 bytes after the base.
	for _, id := range []string{"x", "xy", "xyz", "a1qqqqqqqqqqA", "a1qqqqqqqqqqB", "a1qqqqqqqq", "a2", "m_"} {
		upsert(id)
	}
	if p.idBase != "" {
		t.Fatalf("base %q over ids with no common prefix", p.idBase)
	}
	byKey, pairs = requireKeyOrder(t, p)
	if byKey == pairs {
		t.Fatal("no pair was left to the strings: the fallback went untested")
	}
	// Removals leave the base; emptied, the partition starts again.
	for _, id := range native {
		p.Remove(id)
	}
	requireKeyOrder(t, p)
	for s := range int32(p.nslots) {
		if id := p.sl(s).id; id != "" {
			p.Remove(id)
		}
	}
	upsert("k-0001")
	upsert("k-0002")
	if p.idBase != "k-000" {
		t.Fatalf("base %q after emptying and two ids k-0001, k-0002", p.idBase)
	}
	requireKeyOrder(t, p)
}

// TestTextTiesByString: where two tied ids have equal keys, the strings
// order them in the text channel's top k. The ids share the base "a" and
// the first eight bytes after it; the control ranks the same ids stored
// in other orders alike.
func TestTextTiesByString(t *testing.T) {
	t.Parallel()
	ids := []string{"a1qqqqqqqqqqC", "a1qqqqqqqqqqA", "a2", "a1qqqqqqqqqqB", "a1qqqqqqqq", "a0"}
	want := slices.Clone(ids)
	slices.SortFunc(want, cmp.Compare[string])
	r := newRand(9)
	for range 4 {
		stored := slices.Clone(ids)
		r.Shuffle(len(stored), func(i, j int) { stored[i], stored[j] = stored[j], stored[i] })
		var entries []Entry
		for _, id := range stored {
			entries = append(entries, keyEntry(id))
		}
		requireTextTop(t, buildPartition(t, Config{}, entries), "tie", want, fmt.Sprintf("stored as %v", stored))
	}
}

package relate_test

import (
	"math"
	"testing"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/relate"
)

// weightOf returns the weight with which the query token relates to the
// memory word (0 if it does not), in the context of the query tokens ctx
// (the token alone when empty), and the relation.
func weightOf(r *relate.Relater, token, memory string, ctx ...string) (float64, relate.Relation) {
	if len(ctx) == 0 {
		ctx = []string{token}
	}
	term := analysis.Stem(memory)
	for _, w := range r.InContext(r.Related(token), relate.Context(ctx)) {
		if w.Term == term {
			return w.Weight, w.Relation
		}
	}
	return 0, ""
}

// The relations recall needs, each found with its kind: another form of
// the word, a derived form, a synonym, a kind of what it names.
func TestRelations(t *testing.T) {
	t.Parallel()
	r := relate.New(relate.Options{Similar: -1}) // WordNet's relations alone
	all := relate.New(relate.Options{})
	for _, c := range []struct {
		query, memory string
		rel           relate.Relation
	}{
		{"children", "child", relate.Lemma},
		{"ate", "eat", relate.Lemma},
		{"allergy", "allergic", relate.Derivation},
		{"allergies", "allergic", relate.Derivation},
		{"spectacles", "glasses", relate.Synonym},
		{"kids", "children", relate.Synonym},
		{"instrument", "cello", relate.Category},
		{"languages", "portuguese", relate.Category},
		{"vehicle", "car", relate.Category},
		{"medication", "penicillin", relate.Category},
		{"dog", "collie", relate.Category},
		{"spouse", "husband", relate.Category},
		{"race", "marathon", relate.Category},
		{"herb", "cilantro", relate.Category},
		{"eat", "vegetarian", relate.DerivationCategory},
	} {
		w, rel := weightOf(r, c.query, c.memory)
		if w <= 0 || rel != c.rel {
			t.Errorf("%s → %s: weight %.2f as %q, want a %s", c.query, c.memory, w, rel, c.rel)
		}
		if w2, _ := weightOf(all, c.query, c.memory); w2 < w {
			t.Errorf("%s → %s: weight %.2f with every relation, %.2f with WordNet's alone", c.query, c.memory, w2, w)
		}
	}
}

// A related word must mean the related sense when a memory says it, and
// fit the query's sense: "machine" is a member of car.n.01 but almost
// never means a car; "recorder" is a kind of flute, but a memory's term
// record almost always comes from "record"; a timer is an instrument, but
// not one a question about playing music means. The controls relate.
func TestRelationsKeepTheirSense(t *testing.T) {
	t.Parallel()
	r := relate.New(relate.Options{})
	for _, c := range []struct {
		query, memory string
		ctx           []string
	}{
		{"car", "machine", nil},
		{"instrument", "record", nil},
		{"go", "ecstasy", nil},
		{"exercise", "drill", nil},
	} {
		if w, rel := weightOf(r, c.query, c.memory, c.ctx...); w > 0.2 {
			t.Errorf("%s → %s: weight %.2f as %s, want little or none", c.query, c.memory, w, rel)
		}
	}
	for _, c := range [][2]string{{"car", "automobile"}, {"instrument", "violin"}, {"go", "went"}} {
		if w, _ := weightOf(r, c[0], c[1]); w < 0.3 {
			t.Errorf("control %s → %s: weight %.2f", c[0], c[1], w)
		}
	}
}

// A concept with too many kinds below it is too general to stand for
// them; the lexicon's example: a person has over 10,000.
func TestGeneralConceptsAreNotExpanded(t *testing.T) {
	t.Parallel()
	r := relate.New(relate.Options{})
	if w, _ := weightOf(r, "person", "nurse"); w > 0 {
		t.Errorf("person → nurse: weight %.2f, want none", w)
	}
	if w, _ := weightOf(r, "nurse", "midwife"); w <= 0 {
		t.Error("control nurse → midwife: not related")
	}
}

func TestUnknownAndOddTokens(t *testing.T) {
	t.Parallel()
	r := relate.New(relate.Options{})
	for _, tok := range []string{"", "zzqxv", "a", "___", "ünïcödé", "12345"} {
		for _, w := range r.Related(tok) {
			if w.Weight <= 0 || w.Weight > 1 || w.Term == "" {
				t.Errorf("%q: related word %+v", tok, w)
			}
		}
	}
}

func FuzzRelated(f *testing.F) {
	for _, s := range []string{"instrument", "children", "", "x_y", "ice_cream"} {
		f.Add(s)
	}
	r := relate.New(relate.Options{})
	f.Fuzz(func(t *testing.T, tok string) {
		for _, w := range r.InContext(r.Related(tok), relate.Context([]string{tok})) {
			if !(w.Weight > 0 && w.Weight <= 1) {
				t.Fatalf("%q: weight %v", tok, w.Weight)
			}
		}
	})
}

func TestCommonNoun(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{"budget": true, "plan": true, "dog": true, "caroline": false, "jon": false, "melanie": false, "quickly": false} {
		if got := relate.CommonNoun(tok); got != want {
			t.Errorf("CommonNoun(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestTemporal(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{"afternoon": true, "tonight": true, "week": true, "june": true, "monday": true, "morning": true,
		"birthday": false, "holiday": false, "dinner": false, "tea": false, "cello": false} {
		if got := relate.Temporal(tok); got != want {
			t.Errorf("Temporal(%q) = %v, want %v", tok, got, want)
		}
	}
}

// TestFitWeightsIsFit holds FitWeights (the cosines several words at a
// time) to Fit, word by word, bit for bit: related words of many kinds
// (forms of the query word, words the table lacks, words it has), in
// contexts of one and several words and in none.
func TestFitWeightsIsFit(t *testing.T) {
	t.Parallel()
	r := relate.New(relate.Options{})
	ctxs := [][]string{nil, {"zzqxv"}, {"guitar"}, {"board", "game", "kids", "holiday"}, {"tea", "lisbon", "weekend"}}
	words := 0
	for _, tok := range []string{"instrument", "children", "think", "pottery", "city", "medication", "ate", "board", "zzqxv", "play", "kitchen", "yoga"} {
		ws := r.Related(tok)
		for _, c := range ctxs {
			ctx := relate.Context(c)
			weights := make([]float64, len(ws)+1)
			weights[len(ws)] = -1 // past len(ws): left alone
			r.FitWeights(ws, ctx, weights)
			if weights[len(ws)] != -1 {
				t.Fatalf("%q: FitWeights wrote past len(ws)", tok)
			}
			for i, w := range ws {
				want := 0.0
				if fw, ok := r.Fit(w, ctx); ok {
					want = fw.Weight
				}
				if math.Float64bits(weights[i]) != math.Float64bits(want) {
					t.Fatalf("%q in %v, word %q: %v, want %v", tok, c, w.Term, weights[i], want)
				}
				words++
			}
		}
	}
	if words < 1000 {
		t.Fatalf("only %d words compared", words)
	}
}

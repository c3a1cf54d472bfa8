package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/relate"
)

// related gathers each content word's related words with the relater's
// Fit, without InContext's copies; what it returns is still what
// InContext gave (relatedRef, as related was written with it), in order,
// with and without explain, with excluded terms, bigrams ("board game")
// and past MaxRelated.
func TestRelatedIsInContext(t *testing.T) {
	e := &Engine{relater: relate.New(relate.Options{})}
	queries := []string{
		"which board game did she play with the kids",
		"when are the tomatoes ripe in the garden",
		"guitar lessons",
		"zzqx", // nothing related
	}
	total := 0
	for _, q := range queries {
		for _, exclude := range [][]string{nil, {analysis.AppendWords(nil, q)[0].Term}} {
			for _, explain := range []bool{false, true} {
				got, want := e.related(q, exclude, explain, nil), relatedRef(e.relater, q, exclude, explain, index.MaxRelated)
				if fmt.Sprint(got.words) != fmt.Sprint(want.words) || fmt.Sprint(got.how) != fmt.Sprint(want.how) {
					t.Errorf("%q exclude %v explain %v: %d words, want %d", q, exclude, explain, len(got.words), len(want.words))
				}
				total += len(want.words)
			}
		}
	}
	if total == 0 {
		t.Fatal("control: no query has related words")
	}
}

// relatedRef is related as it was, over InContext, capped at max words.
func relatedRef(r *relate.Relater, query string, exclude []string, explain bool, max int) related {
	var out related
	words := analysis.AppendWords(nil, query)
	var tokens []string
	for _, w := range words {
		if !slices.Contains(exclude, w.Term) {
			tokens = append(tokens, w.Token)
		}
	}
	ctx := relate.Context(tokens)
	add := func(of string, ws []relate.Word) {
		for _, w := range r.InContext(ws, ctx) {
			if len(out.words) == max {
				return
			}
			out.words = append(out.words, index.Related{Term: w.Term, Of: of, Weight: w.Weight})
			if explain {
				out.how = append(out.how, w)
			}
		}
	}
	for i, w := range words {
		if slices.Contains(exclude, w.Term) {
			continue
		}
		add(w.Term, r.Related(w.Token))
		if i+1 < len(words) && !slices.Contains(exclude, words[i+1].Term) {
			if ws := r.Bigram(w.Token, words[i+1].Token); len(ws) > 0 {
				add(w.Term, ws)
				add(words[i+1].Term, ws)
			}
		}
	}
	return out
}

// BenchmarkRelated is the related words of a recall query, as every
// recall without NoRelate finds them.
//
//	go test ./engine -run '^$' -bench '^BenchmarkRelated$' -benchmem
func BenchmarkRelated(b *testing.B) {
	e := &Engine{relater: relate.New(relate.Options{})}
	q := "which board game did she play with the kids on the holiday trip"
	e.related(q, nil, false, nil) // fills the relater's cache
	for b.Loop() {
		e.related(q, nil, false, nil)
	}
}

package engine

import (
	"context"
	"math"
	"slices"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/relate"
)

// related is the words a recall query's content terms may be matched by,
// with what relates each to its term (for explain).
type related struct {
	words []index.Related
	how   []relate.Word
}

// related returns the related words of the query's content words (those
// whose term is not excluded): each word's (package relate), and those of
// two adjacent content words that are one lemma together ("board game"),
// given to both. What relates each word (how) is kept only with explain:
// nothing else reads it, and it was a sixth of a recall's allocations.
//
// holds, when not nil, reports which of the given terms (each with its
// analysis.TermHash) the partition searched holds (nil: it cannot tell).
// A related word whose term the partition lacks can match no memory, so it
// is left out before its fit to the query's context is computed (a GloVe
// cosine each: with a few hundred related words per question, the most of
// related's cost): the words returned are the full list's words that the
// partition holds, with the same weights, in the same order. Past
// index.MaxRelated words, where the cap decides which words are kept,
// nothing is left out.
func (e *Engine) related(query string, exclude []string, explain bool, holds func(terms []string, hashes []uint64) []bool) related {
	var out related
	if e.relater == nil {
		return out
	}
	words := analysis.AppendWords(nil, query)
	var tokens []string
	for _, w := range words {
		if !slices.Contains(exclude, w.Term) {
			tokens = append(tokens, w.Token)
		}
	}
	ctx := relate.Context(tokens)
	// The related words of each content word (shared, not to be
	// changed), gathered first so that out.words is allocated once.
	type of struct {
		term string
		ws   []relate.Word
	}
	var lists []of
	n := 0
	for i, w := range words {
		if slices.Contains(exclude, w.Term) {
			continue
		}
		lists = append(lists, of{w.Term, e.relater.Related(w.Token)})
		n += len(lists[len(lists)-1].ws)
		if i+1 < len(words) && !slices.Contains(exclude, words[i+1].Term) {
			if ws := e.relater.Bigram(w.Token, words[i+1].Token); len(ws) > 0 {
				lists = append(lists, of{w.Term, ws}, of{words[i+1].Term, ws})
				n += 2 * len(ws)
			}
		}
	}
	// held[k]: whether the partition holds the term of the k-th word of
	// the lists, in order.
	var held []bool
	if holds != nil && n <= index.MaxRelated {
		terms := make([]string, 0, n)
		hashes := make([]uint64, 0, n)
		for _, l := range lists {
			for i := range l.ws {
				terms = append(terms, l.ws[i].Term)
				hashes = append(hashes, l.ws[i].TermHash())
			}
		}
		if held = holds(terms, hashes); len(held) != n {
			held = nil
		}
	}
	// Sized for the words kept: of the 451 related words of a question
	// of bench/load, on average, its partitions of 1,000 memories hold 6.
	size := n
	if held != nil {
		size = 0
		for _, h := range held {
			if h {
				size++
			}
		}
	}
	out.words = make([]index.Related, 0, min(size, index.MaxRelated))
	var weights [256]float64
	var kept []relate.Word
	for _, l := range lists {
		lws := l.ws
		if held != nil {
			kept = kept[:0]
			for i, w := range lws {
				if held[i] {
					kept = append(kept, w)
				}
			}
			held = held[len(lws):]
			lws = kept
		}
		for ws := range slices.Chunk(lws, len(weights)) {
			// InContext's weights, without its copies of the words.
			e.relater.FitWeights(ws, ctx, weights[:])
			for i, w := range ws {
				if !(weights[i] > 0) {
					continue
				}
				if len(out.words) == index.MaxRelated {
					return out
				}
				out.words = append(out.words, index.Related{Term: w.Term, Of: l.term, Weight: weights[i]})
				if explain {
					w.Weight = weights[i]
					out.how = append(out.how, w)
				}
			}
		}
	}
	return out
}

// holds returns related's holds for the partition of s: the index's
// answer, read under one lock, with the terms' hashes (index.Holds; nil
// when it cannot read them: then no related word is left out).
func (e *Engine) holds(ctx context.Context, s memgate.Scope) func(terms []string, hashes []uint64) []bool {
	return func(terms []string, hashes []uint64) []bool {
		held, err := e.rec.idx.Holds(ctx, s.Tenant, s.Principal, terms, hashes)
		if err != nil {
			return nil
		}
		return held
	}
}

// evidence completes ev for the match of related word i.
func (r related) evidence(i int, ev memgate.TermEvidence) memgate.TermEvidence {
	if i < 0 || i >= len(r.how) {
		return ev
	}
	ev.Memory = r.how[i].Term
	ev.Relation = string(r.how[i].Relation)
	ev.Path = r.how[i].Path
	return ev
}

// wordWeight says what rank needs to weigh the query word behind term
// (rank.Term): how specific it is, its information content under a Zipf
// law over its frequency rank among the built-in word-vector table's
// 40,000 words (in decreasing frequency), relative to the content of a
// word beyond the table; and whether it is a modifier: a word WordNet
// tags more often as a verb, adjective or adverb than as a noun, or a word
// of time (relate.Temporal), which says when rather than what.
func wordWeight(words []analysis.Word, term string) (specificity float64, modifier bool) {
	tb := wordvec.Default()
	for _, w := range words {
		if w.Term != term {
			continue
		}
		specificity = 1
		if r, ok := tb.Lookup(w.Token); ok {
			specificity = math.Log(float64(r+150)*13.48) / math.Log(float64(tb.Len()+150)*13.48)
		}
		return specificity, relate.Modifier(w.Token) || relate.Temporal(w.Token)
	}
	return 1, false
}

// commonNoun reports whether the query word behind term is a common noun
// (relate.CommonNoun): an identifying term that is one names a topic the
// partition is full of, not the person asked about.
func commonNoun(words []analysis.Word, term string) bool {
	for _, w := range words {
		if w.Term == term {
			return relate.CommonNoun(w.Token)
		}
	}
	return false
}

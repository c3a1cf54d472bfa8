// Package relate finds the words that may stand for a query word in a
// memory that says the same thing in other words, each with a weight below
// the word's own: recall counts a memory that holds a related word as
// holding the query's word, discounted by that weight (package rank, "A
// score is a memory's own evidence"). The relations come from WordNet 3.1
// (package lexicon) and from the built-in GloVe word table (package
// wordvec):
//
//   - Lemma: the word's other forms, regular and irregular (ate for eat,
//     children for child, went for go), at full weight;
//   - Synonym: the other words of its senses (spectacles, glasses);
//   - Derivation: its derived forms and pertainyms (allergic, allergy);
//   - Category: the kinds of what it names, hyponyms and instances to
//     CategoryDepth steps (cello for instrument, Portuguese for language,
//     penicillin for medication, Leeds for city), and the words derived
//     from those kinds (cellist); a concept with more than MaxDescendants
//     kinds (person, thing) is too general to stand for them;
//   - Derivation+category: the kinds of a derived form (vegetarian, a kind
//     of eater, for eat);
//   - Definition: the words whose definitions hold it (vegetarian, "eats no
//     meat", for meat), fewer than DefinedByMax of them;
//   - Similar: its nearest GloVe neighbours (husband for wife).
//
// Three checks keep a relation in the sense the query means. A word with
// VagueSenses senses or more (go, get, make, play, work) gets only its
// other forms. A related word keeps its weight by how often it means the
// related sense when a memory says it (WordNet's tag counts: "machine" is
// a member of car.n.01 but almost never means a car) and by whether the
// memory's term comes from it rather than from a more frequent word with
// the same stem ("recorder" and "record"). And the engine scales each
// related word by its GloVe cosine with the query's content words
// (InContext: a timer is an instrument, but not one a question about
// playing means).
//
// # What each relation earns
//
// Measured through the whole engine with the built-in embedder at the
// default floor, each relation left out in turn (`memgate bench paraphrase`
// on bench/paraphrase/dev.json, all ten people; `memgate bench locomo`,
// turns): paraphrase and task questions answered first alone / among
// distractors, unrelated silence alone / among distractors, LoCoMo turns
// recall@10 at the floor and foreign silence.
//
//	relations        first      unrelated  LoCoMo R@10  silence
//	all (default)    0.17/0.18  0.86/0.85  0.559        0.938
//	none             0.01/0.00  0.92/0.94  0.494        0.976
//	no synonyms      0.17/0.17  0.88/0.86  0.552        0.943
//	no derivations   0.18/0.18  0.86/0.86  0.558        0.940
//	no categories    0.07/0.07  0.88/0.87  0.548        0.954
//	no definitions   0.16/0.18  0.86/0.85  0.558        0.940
//	no neighbours    0.14/0.15  0.90/0.89  0.532        0.954
//
// Categories earn the most; neighbours earn and cost silence about
// equally; synonyms and derivations earn little at the floor on these
// sets, and stay because the questions they answer (kids for children,
// allergic for allergy) are among the commonest a person asks.
//
// It is pure computation over the embedded lexicon and word table: no I/O,
// no logging, safe for concurrent use. It never sees memory content, only
// query words.
package relate

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
	"github.com/memgate/memgate/lexicon"
)

// Relation names how a related word relates to the query's word.
type Relation string

// The relations, and chains of them.
const (
	Lemma              Relation = "lemma"      // another form of the same word: ate, eat
	Synonym            Relation = "synonym"    // a word of the same sense: spectacles, glasses
	Derivation         Relation = "derivation" // a derived form: allergic, allergy
	Category           Relation = "category"   // a kind of what the word names: cello, instrument
	DerivationCategory Relation = "derivation+category"
	Similar            Relation = "similar"    // a word used like it (GloVe neighbours): husband, married
	Definition         Relation = "definition" // a word whose definition holds the query word: vegetarian ("eats no meat"), meat
)

// Word is a word related to a query word.
type Word struct {
	// Term is the related word as package analysis makes it a term (its
	// Porter2 stem): what a memory's terms are matched against.
	Term string
	// Weight is the share of the query word's weight a memory holding
	// Term gets, in (0, 1].
	Weight   float64
	Relation Relation
	// Path names the concepts between the two words, for explain: the
	// WordNet synsets ("instrument.n.01 > stringed_instrument.n.01").
	Path []string

	glove int    // the word's row in the GloVe table; -1 if it has none, -2: not checked (a form of the query word)
	hash  uint64 // analysis.TermHash(Term), once Related has returned the word
}

// TermHash returns analysis.TermHash(w.Term), computed when the word was
// found: a caller that tests the terms of many related words against a
// set (package index's Holds) need not read their bytes again.
func (w *Word) TermHash() uint64 {
	if w.hash == 0 {
		return analysis.TermHash(w.Term)
	}
	return w.hash
}

// Options sets the relations' weights and limits; the zero value, after
// WithDefaults, is the measured default (chosen with package rank's
// weights: see "The defaults" there). A negative weight turns its relation
// off.
type Options struct {
	// Lemma, Synonym and Derivation weigh a word's other forms, its
	// synonyms and its derived forms.
	Lemma, Synonym, Derivation float64
	// Category weighs a direct kind of what the word names (a hyponym or
	// instance: cello for bowed stringed instrument), and each step further
	// down multiplies it by CategoryDecay, to at most CategoryDepth steps.
	Category      float64
	CategoryDecay float64
	CategoryDepth int
	// MaxDescendants is the specificity limit of a category: a concept
	// with more kinds than this below it (thing, person, act) is too
	// general for its kinds to stand for it, and is not expanded.
	MaxDescendants int
	// Senses is how many of a word's senses per part of speech count,
	// most frequent first.
	Senses int
	// SenseLow and SenseHigh check that a related word is related in the
	// sense the query means, as far as word vectors can tell: a synonym,
	// derived form or kind whose GloVe cosine with the query word is at or
	// below SenseLow is dropped (go and ecstasy share a rare sense), one at
	// or above SenseHigh keeps its relation's weight, and in between the
	// weight is scaled linearly. A word the table lacks counts as
	// SenseUnknown of the way.
	SenseLow, SenseHigh, SenseUnknown float64
	// MemorySense is the share of a related word's senses (by tag counts)
	// the related sense needs to keep its whole weight (see memorySense);
	// negative: not checked.
	MemorySense float64
	// Similar weighs a word that word vectors put close to the query word
	// (its GloVe neighbours, with cosine at least SimilarLow, weight
	// rising linearly to Similar at SimilarHigh); at most SimilarWords of
	// them. Negative Similar: none.
	Similar, SimilarLow, SimilarHigh float64
	SimilarWords                     int
	// Definition weighs a word whose definition holds the query word (of
	// a sense of it) when at most 10 definitions do, decreasing to nothing
	// at DefinedByMax (a word in hundreds of definitions, like use or
	// person, tells little). Negative: none.
	Definition   float64
	DefinedByMax int
	// MaxWords bounds the words returned for one query word, heaviest
	// first.
	MaxWords int
	// VagueSenses marks the vaguest words, whose senses are too many to
	// relate (go, get, make, play, work): a word with at least this many
	// senses, all parts of speech together, gets only its other forms.
	VagueSenses int
}

// Defaults. See the package comment for how they were measured.
const (
	DefaultLemma          = 1.0
	DefaultSynonym        = 0.75
	DefaultDerivation     = 0.85
	DefaultCategory       = 0.85
	DefaultCategoryDecay  = 1.0
	DefaultCategoryDepth  = 6
	DefaultMaxDescendants = 1500
	DefaultSenses         = 8
	DefaultSenseLow       = 0.0
	DefaultSenseHigh      = 0.35
	DefaultSenseUnknown   = 0.35
	DefaultMaxWords       = 2000
	DefaultVagueSenses    = 25
	DefaultMemorySense    = 0.5
	DefaultDefinition     = 0.65
	DefaultDefinedByMax   = 600
	DefaultSimilar        = 0.85
	DefaultSimilarLow     = 0.53
	DefaultSimilarHigh    = 0.79
	DefaultSimilarWords   = 40
)

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	set := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.Lemma, DefaultLemma)
	set(&o.Synonym, DefaultSynonym)
	set(&o.Derivation, DefaultDerivation)
	set(&o.Category, DefaultCategory)
	set(&o.CategoryDecay, DefaultCategoryDecay)
	if o.CategoryDepth == 0 {
		o.CategoryDepth = DefaultCategoryDepth
	}
	if o.MaxDescendants == 0 {
		o.MaxDescendants = DefaultMaxDescendants
	}
	if o.Senses == 0 {
		o.Senses = DefaultSenses
	}
	if o.MaxWords == 0 {
		o.MaxWords = DefaultMaxWords
	}
	if o.SenseLow == 0 && o.SenseHigh == 0 {
		o.SenseLow, o.SenseHigh = DefaultSenseLow, DefaultSenseHigh
	}
	set(&o.SenseUnknown, DefaultSenseUnknown)
	set(&o.MemorySense, DefaultMemorySense)
	set(&o.Similar, DefaultSimilar)
	set(&o.Definition, DefaultDefinition)
	if o.DefinedByMax == 0 {
		o.DefinedByMax = DefaultDefinedByMax
	}
	if o.SimilarLow == 0 && o.SimilarHigh == 0 {
		o.SimilarLow, o.SimilarHigh = DefaultSimilarLow, DefaultSimilarHigh
	}
	if o.SimilarWords == 0 {
		o.SimilarWords = DefaultSimilarWords
	}
	if o.VagueSenses == 0 {
		o.VagueSenses = DefaultVagueSenses
	}
	return o
}

// Relater finds related words with fixed options and keeps what it found
// for the words it was asked most recently. It is safe for concurrent use.
type Relater struct {
	o     Options
	cache wordCache[[]Word]
}

// New returns a Relater with options o (completed with WithDefaults).
func New(o Options) *Relater {
	return &Relater{o: o.WithDefaults()}
}

// Related returns the words related to a query token (a normalized token,
// as analysis.Tokens makes them), heaviest first, without the token's own
// term; nil for a word the lexicon does not know. The slice is shared:
// callers must not change it.
func (r *Relater) Related(token string) []Word {
	return r.cache.get(token, r.find)
}

// find is Related without the cache.
func (r *Relater) find(token string) []Word { return related(token, r.o) }

// Bigram returns the words related to two adjacent query tokens that
// together are one lemma ("board game", "ice cream"), as Related does; nil
// when they are not one.
func (r *Relater) Bigram(first, second string) []Word {
	return r.Related(first + "_" + second)
}

// found collects related words, keeping each term's heaviest relation.
type found struct {
	self  string
	o     Options
	byKey map[string]int
	words []Word
}

// add adds word m, reached as a member of synset s (0 for another form of
// the query word itself), with weight w, and the irregular forms of m
// (children for child) with it.
func (f *found) add(m lexicon.Word, s lexicon.Synset, w float64, rel Relation, path func() []string) {
	if rel != Lemma {
		w *= memorySense(m, s, f.o.MemorySense)
	}
	if !f.addForm(m.String(), w, rel, path) {
		return
	}
	for _, pos := range poses {
		for form := range lexicon.Inflections(m, pos) {
			f.addForm(form, w, rel, path)
		}
	}
}

// addForm adds one word form with weight w and reports whether it did.
func (f *found) addForm(word string, w float64, rel Relation, path func() []string) bool {
	if strings.ContainsAny(word, "_- ") || w <= 0 {
		return false // a multiword lemma matches no single memory term
	}
	term := analysis.Stem(word)
	if term == "" || term == f.self || analysis.IsStopword(word) {
		return false
	}
	glove := -2
	if rel != Lemma {
		w *= ownsStem(word, term)
		if w <= 0 {
			return false
		}
		glove = -1
		if i, ok := wordvec.Default().Lookup(word); ok {
			glove = i
		}
	}
	if i, ok := f.byKey[term]; ok {
		if f.words[i].Weight < w {
			f.words[i] = Word{Term: term, Weight: w, Relation: rel, Path: path(), glove: glove}
		}
		return true
	}
	f.byKey[term] = len(f.words)
	f.words = append(f.words, Word{Term: term, Weight: w, Relation: rel, Path: path(), glove: glove})
	return true
}

// memorySense is the share of its weight a related word m keeps by how
// often m means sense s when a memory says it: a word is matched in memories by
// its form, and "machine", though a member of car.n.01, almost never means
// a car. The share of s among m's senses, by WordNet's tag counts with
// half a count added to each sense, is divided by share (and capped at 1):
// a word with one sense keeps all, a word whose s is rare keeps little.
func memorySense(m lexicon.Word, s lexicon.Synset, share float64) float64 {
	if s == 0 || share <= 0 {
		return 1
	}
	var all, this float64
	for _, pos := range poses {
		for _, t := range lexicon.Senses(m, pos) {
			n := float64(lexicon.TagCount(lexicon.Sense{Synset: t, Word: m})) + 0.5
			all += n
			if t == s {
				this = n
			}
		}
	}
	if all == 0 {
		return 1
	}
	return min(1, this/all/share)
}

// owners maps each term of the GloVe table's words to the rank of the most
// frequent word with that term (see ownsStem).
var owners = sync.OnceValue(func() map[string]int {
	tb := wordvec.Default()
	m := make(map[string]int, tb.Len())
	for i := range tb.Len() {
		t := analysis.Stem(tb.Word(i))
		if _, ok := m[t]; !ok {
			m[t] = i
		}
	}
	return m
})

// ownsStem is the share of its weight a related word keeps by how likely a
// memory's term is to come from it rather than from another word with the
// same stem: "recorder" and "record" are both the term record, and a memory
// that holds it almost always says record. A word that is a form of the
// term's most frequent word, or about as frequent, keeps all; one more than
// 8 times rarer, nothing.
func ownsStem(word, term string) float64 {
	tb := wordvec.Default()
	o, ok := owners()[term]
	if !ok {
		return 1 // no frequent word makes this term
	}
	owner := tb.Word(o)
	if owner == word {
		return 1
	}
	var bases []lexicon.Word
	for _, pos := range poses {
		bases = lexicon.BaseForms(bases[:0], owner, pos)
		for _, b := range bases {
			if b.String() == word {
				return 1
			}
		}
	}
	r, ok := tb.Lookup(word)
	if !ok {
		return 0
	}
	if float64(r+1) > 8*float64(o+1) {
		return 0
	}
	return 1
}

var poses = [...]lexicon.POS{lexicon.Noun, lexicon.Verb, lexicon.Adj, lexicon.Adv}

// Context returns the sense context of a query: the sum of the unit GloVe
// vectors of its content tokens (those in the table); nil when none is.
func Context(tokens []string) []float32 {
	tb := wordvec.Default()
	var ctx []float32
	for _, t := range tokens {
		i, ok := tb.Lookup(t)
		if !ok {
			continue
		}
		v := tb.Vector(i)
		n := math.Sqrt(dot32(v, v))
		if n == 0 {
			continue
		}
		if ctx == nil {
			ctx = make([]float32, len(v))
		}
		for k, x := range v {
			ctx[k] += float32(float64(x) / n)
		}
	}
	return ctx
}

func dot32(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// InContext returns ws (from Related) with each word's weight scaled by how
// well it fits the query's sense context ctx (Context): a related word
// whose GloVe cosine with the context is at or below Options.SenseLow is
// dropped (go and ecstasy share a rare sense; a timer is an instrument,
// but not one a question about playing means), one at or above SenseHigh
// keeps its weight, and in between it is scaled linearly. A word the
// table lacks, or a query without context, counts as SenseUnknown of the
// way. The other forms of the query word are kept as they are. ws is not
// changed; the result is new, in ws's order.
func (r *Relater) InContext(ws []Word, ctx []float32) []Word {
	out := make([]Word, 0, len(ws))
	weights := make([]float64, len(ws))
	r.FitWeights(ws, ctx, weights)
	for i, w := range ws {
		if weights[i] > 0 {
			w.Weight = weights[i]
			out = append(out, w)
		}
	}
	return out
}

// fitBlock is how many words FitWeights hands wordvec's Cosines at a time
// (its buffers live on the stack).
const fitBlock = 64

// FitWeights is Fit of every word of ws: weights[i] (len(weights) ≥
// len(ws)) is the weight Fit gives ws[i] in ctx, or 0 when Fit drops it.
// The same values as Fit's, bit for bit; the word-vector cosines are
// computed several words at a time (wordvec's Cosines). It allocates
// nothing.
func (r *Relater) FitWeights(ws []Word, ctx []float32, weights []float64) {
	weights = weights[:len(ws)]
	var (
		rows [fitBlock]int     // the words' rows in the table
		at   [fitBlock]int     // their indexes in ws
		cos  [fitBlock]float64 // their cosines with ctx
	)
	n := 0
	flush := func() {
		wordvec.Default().Cosines(rows[:n], ctx, cos[:n])
		for k := range n {
			weights[at[k]] = fitted(ws[at[k]].Weight, r.sense(cos[k]))
		}
		n = 0
	}
	for i := range ws {
		w := &ws[i]
		switch {
		case w.glove == -2:
			weights[i] = fitted(w.Weight, 1)
		case w.glove < 0 || ctx == nil:
			weights[i] = fitted(w.Weight, r.o.SenseUnknown)
		default:
			rows[n], at[n] = w.glove, i
			if n++; n == fitBlock {
				flush()
			}
		}
	}
	if n > 0 {
		flush()
	}
}

// sense is the factor of a word whose GloVe cosine with the context is c.
func (r *Relater) sense(c float64) float64 {
	return max(0, min(1, (c-r.o.SenseLow)/(r.o.SenseHigh-r.o.SenseLow)))
}

// fitted is a word's weight scaled by f, or 0 if Fit drops it.
func fitted(weight, f float64) float64 {
	if weight*f > 0 {
		return weight * f
	}
	return 0
}

// Fit is InContext of one word: w with its weight scaled by how well it
// fits ctx, and whether it is kept. It allocates nothing, for callers
// that copy the kept words elsewhere anyway.
func (r *Relater) Fit(w Word, ctx []float32) (Word, bool) {
	f := 1.0
	switch {
	case w.glove == -2:
	case w.glove < 0 || ctx == nil:
		f = r.o.SenseUnknown
	default:
		f = r.sense(wordvec.Default().Cosine(w.glove, ctx))
	}
	if w.Weight*f > 0 {
		w.Weight *= f
		return w, true
	}
	return w, false
}

func related(token string, o Options) []Word {
	self := analysis.Stem(strings.ReplaceAll(token, "_", ""))
	f := &found{self: self, o: o, byKey: map[string]int{}}
	none := func() []string { return nil }
	// A vague word (many senses) gets only its other forms.
	senses := 0
	var bases []lexicon.Word
	for _, pos := range poses {
		bases = lexicon.BaseForms(bases[:0], token, pos)
		for _, b := range bases {
			for range lexicon.Senses(b, pos) {
				senses++
			}
		}
	}
	vague := senses >= o.VagueSenses
	for _, pos := range poses {
		bases = lexicon.BaseForms(bases[:0], token, pos)
		for _, b := range bases {
			if b.String() != token {
				f.add(b, 0, o.Lemma, Lemma, none)
			}
			for form := range lexicon.Inflections(b, pos) {
				f.addForm(form, o.Lemma, Lemma, none)
			}
			if vague {
				continue
			}
			// The words whose definitions hold it, the fewer the heavier.
			if n := lexicon.DefinedByCount(b); n > 0 && n <= o.DefinedByMax && o.Definition > 0 {
				w := o.Definition * min(1, math.Log(float64(o.DefinedByMax)/float64(n))/math.Log(float64(o.DefinedByMax)/10))
				for d := range lexicon.DefinedBy(b) {
					for m := range d.Members() {
						f.add(m, d, w, Definition, func() []string { return []string{d.Name()} })
					}
				}
			}
			for i, s := range lexicon.Senses(b, pos) {
				if i >= o.Senses {
					break
				}
				sense := lexicon.Sense{Synset: s, Word: b}
				for m := range s.Members() {
					if m != b {
						f.add(m, s, o.Synonym, Synonym, func() []string { return []string{s.Name()} })
					}
				}
				for d := range sense.Pointers(lexicon.Derivation) {
					f.add(d.Word, d.Synset, o.Derivation, Derivation, func() []string { return []string{s.Name(), d.Synset.Name()} })
					if d.Synset.POS() == lexicon.Noun {
						f.kinds(d.Synset, o.Derivation*o.Category, o, DerivationCategory, []string{s.Name()})
					}
				}
				for d := range sense.Pointers(lexicon.Pertainym) {
					f.add(d.Word, d.Synset, o.Derivation, Derivation, func() []string { return []string{s.Name(), d.Synset.Name()} })
				}
				if pos == lexicon.Noun {
					f.kinds(s, o.Category, o, Category, nil)
				}
			}
		}
	}
	f.similar(token)
	slices.SortStableFunc(f.words, func(a, b Word) int { return cmp.Compare(b.Weight, a.Weight) })
	if len(f.words) > o.MaxWords {
		f.words = f.words[:o.MaxWords]
	}
	for i := range f.words {
		f.words[i].hash = analysis.TermHash(f.words[i].Term)
	}
	return slices.Clip(f.words)
}

// similar adds the token's GloVe neighbours (see Options.Similar).
func (f *found) similar(token string) {
	o := f.o
	tb := wordvec.Default()
	i, ok := tb.Lookup(token)
	if !ok || o.Similar <= 0 {
		return
	}
	for _, n := range tb.Neighbors(i, o.SimilarWords, o.SimilarLow) {
		word := tb.Word(n.Word)
		term := analysis.Stem(word)
		if term == "" || term == f.self || analysis.IsStopword(word) {
			continue
		}
		w := o.Similar * min(1, (n.Cosine-o.SimilarLow)/(o.SimilarHigh-o.SimilarLow))
		if w <= 0 {
			continue
		}
		if j, ok := f.byKey[term]; ok {
			if f.words[j].Weight < w {
				f.words[j] = Word{Term: term, Weight: w, Relation: Similar, glove: -2}
			}
			continue
		}
		f.byKey[term] = len(f.words)
		f.words = append(f.words, Word{Term: term, Weight: w, Relation: Similar, glove: -2})
	}
}

// kinds adds the members of the kinds of concept c (hyponyms and
// instances, breadth first, to o.CategoryDepth steps) with weight w for
// the first step, decaying by o.CategoryDecay per further step; a concept
// too general (more than o.MaxDescendants kinds below it) adds nothing.
func (f *found) kinds(c lexicon.Synset, w float64, o Options, rel Relation, prefix []string) {
	if c.Descendants() > o.MaxDescendants {
		return
	}
	type step struct {
		s      lexicon.Synset
		parent int
	}
	seen := map[lexicon.Synset]bool{c: true}
	steps := []step{{c, -1}}
	path := func(i int) func() []string {
		return func() []string {
			var p []string
			for ; i >= 0; i = steps[i].parent {
				p = append(p, steps[i].s.Name())
			}
			slices.Reverse(p)
			return append(slices.Clip(prefix), p...)
		}
	}
	level, weight := []int{0}, w
	for depth := 1; depth <= o.CategoryDepth && len(level) > 0; depth++ {
		var next []int
		for _, i := range level {
			for _, r := range [...]lexicon.Relation{lexicon.Hyponym, lexicon.InstanceHyponym} {
				for h := range steps[i].s.Pointers(r) {
					if seen[h] {
						continue
					}
					seen[h] = true
					steps = append(steps, step{h, i})
					j := len(steps) - 1
					next = append(next, j)
					for m := range h.Members() {
						f.add(m, h, weight, rel, path(j))
						// And the words derived from it: a cellist plays
						// the cello, a kind of instrument.
						for d := range (lexicon.Sense{Synset: h, Word: m}).Pointers(lexicon.Derivation) {
							if d.Synset.POS() == lexicon.Noun {
								f.add(d.Word, d.Synset, weight*o.Derivation, rel+"+derivation", path(j))
							}
						}
					}
				}
			}
		}
		level, weight = next, weight*o.CategoryDecay
	}
}

// Modifier reports whether WordNet tags the token (a normalized token)
// more often as a verb, an adjective or an adverb than as a noun, counting
// one for each sense besides its tag counts: the "speak" of "Which
// languages do you speak?", which qualifies what a question is about
// rather than naming it. A word the lexicon does not know is not one.
func Modifier(token string) bool { return judge(token).modifier }

func isModifier(token string) bool {
	var noun, other int
	var bases []lexicon.Word
	for _, pos := range poses {
		bases = lexicon.BaseForms(bases[:0], token, pos)
		for _, b := range bases {
			for _, s := range lexicon.Senses(b, pos) {
				n := 1 + lexicon.TagCount(lexicon.Sense{Synset: s, Word: b})
				if pos == lexicon.Noun {
					noun += n
				} else {
					other += n
				}
			}
		}
	}
	return other > noun
}

// CommonNoun reports whether the token (a normalized token) is a common
// noun: WordNet tags one of its noun senses at least 3 times ("budget",
// "plan"), where a first name has none ("caroline" is only an adjective to
// WordNet, "jon" nothing).
func CommonNoun(token string) bool { return judge(token).commonNoun }

func isCommonNoun(token string) bool {
	var bases []lexicon.Word
	bases = lexicon.BaseForms(bases, token, lexicon.Noun)
	for _, b := range bases {
		for _, s := range lexicon.Senses(b, lexicon.Noun) {
			if lexicon.TagCount(lexicon.Sense{Synset: s, Word: b}) >= 3 {
				return true
			}
		}
	}
	return false
}

// temporal are the concepts a word of time is a kind of, each with the most
// hypernym steps the word's first noun sense may take to reach it.
var temporal = map[string]int{
	"time_period.n.01": 2, "time_unit.n.01": 2, "time.n.05": 2,
	"calendar_month.n.01": 2, "day_of_the_week.n.01": 2,
}

// Temporal reports whether the token (a normalized token) names a time,
// within two steps of a period, a unit, a month or a weekday ("afternoon",
// "tonight", "week", "June", "Monday"): in a question it says when, not
// what ("What should I drink this afternoon?"). A kind of day further down
// (a birthday, a holiday) is what a question is about, and is not one.
func Temporal(token string) bool { return judge(token).temporal }

func isTemporal(token string) bool {
	var bases []lexicon.Word
	bases = lexicon.BaseForms(bases, token, lexicon.Noun)
	for _, b := range bases {
		for _, s := range lexicon.Senses(b, lexicon.Noun) {
			level := []lexicon.Synset{s}
			for depth := 0; depth <= 2 && len(level) > 0; depth++ {
				var next []lexicon.Synset
				for _, x := range level {
					if d, ok := temporal[x.Name()]; ok && depth <= d && depth > 0 {
						return true
					}
					for h := range x.Pointers(lexicon.Hypernym) {
						next = append(next, h)
					}
				}
				level = next
			}
			break // the first noun sense only
		}
	}
	return false
}

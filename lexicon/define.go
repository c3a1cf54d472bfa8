package lexicon

import "iter"

// Definition iterates the content words of the synset's definition (its
// gloss less the examples) as lemmas of the lexicon, in gloss order, each
// once: vegetarian.n.01, "eater of fruits and grains and nuts; someone who
// eats no meat or fish or (often) any animal products", has eater, fruit,
// grain, nut, nuts, eats, eat, meat, fish, animal_product, animal and
// product. A gloss word gives every lemma BaseForms finds for it (eats as
// a noun and eat as a verb), a run of two or three gloss words that is a
// multiword lemma gives it as well as its words, and function words and
// the synset's own members are left out; the package comment says how
// exactly. It is empty for an invalid Synset. Ranging over it allocates
// nothing.
func (s Synset) Definition() iter.Seq[Word] {
	return func(yield func(Word) bool) { s.definition(yield) }
}

func (s Synset) definition(yield func(Word) bool) {
	_, _, lo, hi, _ := s.record()
	for p := lo; p < hi; p += 3 {
		if !yield(Word(u24(p))) {
			return
		}
	}
}

// DefinedBy iterates the synsets whose Definition has w, in synset order
// (the inverse of Definition): DefinedBy(meat) has vegetarian.n.01. It is
// empty for an invalid Word and a word in no definition. Ranging over it
// allocates nothing.
func DefinedBy(w Word) iter.Seq[Synset] {
	return func(yield func(Synset) bool) { definedBy(w, yield) }
}

func definedBy(w Word, yield func(Synset) bool) {
	_, _, p, hi := w.record()
	if p >= hi {
		return
	}
	n, p := uvarint(p, hi)
	s := 0
	for ; n > 0 && p < hi; n-- {
		var d int
		d, p = uvarint(p, hi)
		s += d
		if !yield(Synset(s)) {
			return
		}
	}
}

// DefinedByCount returns the number of synsets DefinedBy(w) iterates,
// without iterating them: a measure of how general a definition word w is
// (person is in 2,415 definitions, meat in 245, use in 6,375).
func DefinedByCount(w Word) int {
	_, _, p, hi := w.record()
	if p >= hi {
		return 0
	}
	n, _ := uvarint(p, hi)
	return n
}

// uvarint decodes the uvarint at byte p (before hi) and returns it with
// the byte after it.
func uvarint(p, hi int) (v, next int) {
	for shift := 0; p < hi && shift < 35; shift += 7 {
		c := data[p]
		p++
		v |= int(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return v, p
}

// Inflections iterates the irregular forms of w as pos: the forms whose
// bases in pos's exception list include w, the inverse of what BaseForms
// takes from that list (eat as a verb: ate, eaten; child as a noun:
// children; good as an adjective: better, best), in byte order, written
// as the list writes them ('_' between words: attorneys_general). Regular
// inflections (eats, eating) are not in the list, and neither is a form
// the same as w. The strings are the embedded data's: ranging over it
// allocates nothing. It is empty for an invalid Word or POS.
func Inflections(w Word, pos POS) iter.Seq[string] {
	return func(yield func(string) bool) { inflections(w, pos, yield) }
}

func inflections(w Word, pos POS, yield func(string) bool) {
	if pos < Noun || pos > Adv || w == 0 {
		return
	}
	i, j := inf[pos-1], inf[pos]
	for i < j {
		h := int(uint(i+j) >> 1)
		if Word(u24(secInf+6*h)) < w {
			i = h + 1
		} else {
			j = h
		}
	}
	for ; i < inf[pos] && Word(u24(secInf+6*i)) == w; i++ {
		if !yield(excForm(u24(secInf + 6*i + 3))) {
			return
		}
	}
}

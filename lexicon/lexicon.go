package lexicon

import (
	_ "embed"
	"iter"
	"strconv"
	"strings"

	"github.com/memgate/memgate/lexicon/internal/format"
)

//go:embed wordnet.bin
var data string

// The header, read once at start-up (a few dozen integers; the rest of the
// file is read in place when asked for).
var (
	nWords, nSynsets        int
	verb0, adj0, sat0, adv0 int // first synset of each class after the nouns
	hashSlots               int
	exc                     [5]int // first exception of each POS, and their number
	secWordOff, secWordRec  int
	secHash                 int
	secSynOff, secSynRec    int
	secExcOff, secExcRec    int
	inf                     [5]int // first inflection of each POS, and their number
	secInf                  int
	nDefined                int
)

func init() {
	if err := open(); err != "" {
		// Only a broken build gets here (TestEmbeddedFile checks the file).
		panic("lexicon: the embedded wordnet.bin is not valid: " + err)
	}
}

func open() string {
	if len(data) < format.HeaderSize || data[:len(format.Magic)] != format.Magic {
		return "no header"
	}
	f := func(i int) int { return int(u32(len(format.Magic) + 4*i)) }
	if v := f(format.FVersion); v != format.Version {
		return "version " + strconv.Itoa(v) + ", want " + strconv.Itoa(format.Version)
	}
	nWords, nSynsets = f(format.FWords), f(format.FSynsets)
	verb0, adj0, sat0, adv0 = f(format.FVerb), f(format.FAdj), f(format.FSat), f(format.FAdv)
	hashSlots = f(format.FHashSlots)
	for i := range exc {
		exc[i] = f(format.FExcNoun + i)
		inf[i] = f(format.FInfNoun + i)
	}
	nDefined = f(format.FDefined)
	secWordOff, secWordRec, secHash = f(format.FWordOff), f(format.FWordRec), f(format.FHash)
	secSynOff, secSynRec = f(format.FSynOff), f(format.FSynRec)
	secExcOff, secExcRec = f(format.FExcOff), f(format.FExcRec)
	secInf = f(format.FInf)
	if !(1 <= verb0 && verb0 <= adj0 && adj0 <= sat0 && sat0 <= adv0 && adv0 <= nSynsets && nSynsets <= format.SynsetMask+1 && nWords <= format.WordMask+1) {
		return "synset classes"
	}
	if !(exc[0] <= exc[1] && exc[1] <= exc[2] && exc[2] <= exc[3] && exc[3] <= exc[4]) ||
		!(inf[0] <= inf[1] && inf[1] <= inf[2] && inf[2] <= inf[3] && inf[3] <= inf[4]) {
		return "exceptions"
	}
	secs := []int{format.HeaderSize, secWordOff, secWordRec, secHash, secSynOff, secSynRec, secExcOff, secExcRec, secInf, f(format.FEnd), len(data)}
	for i := 1; i < len(secs); i++ {
		if secs[i] < secs[i-1] {
			return "sections out of order"
		}
	}
	if f(format.FEnd) != len(data) || secWordRec-secWordOff != 3*(nWords+1) || secSynRec-secSynOff != 3*(nSynsets+1) ||
		secSynOff-secHash != 3*hashSlots || hashSlots <= nWords || secExcRec-secExcOff != 3*(exc[4]+1) ||
		secWordOff+3*nWords+3 > secWordRec || secWordRec+u24(secWordOff+3*nWords) != secHash ||
		secSynRec+u24(secSynOff+3*nSynsets) != secExcOff || secExcRec+u24(secExcOff+3*exc[4]) != secInf ||
		secInf+6*inf[4] != len(data) {
		return "section sizes"
	}
	return ""
}

func u24(i int) int {
	_ = data[i+2]
	return int(data[i]) | int(data[i+1])<<8 | int(data[i+2])<<16
}

func u32(i int) uint32 {
	_ = data[i+3]
	return uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
}

// POS is a part of speech. The zero POS is none: what an invalid synset
// has.
type POS uint8

// The parts of speech. Adj includes WordNet's adjective satellites (see
// Synset.Satellite).
const (
	Noun POS = 1 + iota
	Verb
	Adj
	Adv
)

var posNames = [...]string{"", "noun", "verb", "adj", "adv"}

// String returns "noun", "verb", "adj" or "adv" ("" for an invalid POS).
func (p POS) String() string {
	if int(p) >= len(posNames) {
		return ""
	}
	return posNames[p]
}

// Word is a lemma of the lexicon: lowercase, as WordNet writes it ('_'
// between the words of a multiword lemma). Words are numbered densely from
// 1 to NumWords() in byte order of their lemmas, so a caller may index a
// table by Word; the zero Word is none. A Word's methods accept any value:
// one out of range behaves as the zero Word.
type Word uint32

// NumWords returns the number of words: valid Words are 1 to NumWords().
func NumWords() int { return nWords - 1 }

// record returns the byte range of w's record ([lo, hi) = [0, 0) for an
// invalid Word), where its senses start and where they end (where the
// synsets it is in the definition of start, if any).
func (w Word) record() (lo, senses, defs, hi int) {
	if w == 0 || uint32(w) >= uint32(nWords) { // uint32: no int overflow on 32-bit platforms
		return 0, 0, 0, 0
	}
	p := secWordOff + 3*int(w)
	lo, hi = secWordRec+u24(p), secWordRec+u24(p+3)
	n := lo + 1 + int(data[lo])
	return lo, n + 1, n + 1 + 4*int(data[n]), hi
}

// String returns the lemma, as WordNet writes it ("ice_cream"): a
// substring of the embedded data, so it allocates nothing. It is "" for an
// invalid Word.
func (w Word) String() string {
	if w == 0 || uint32(w) >= uint32(nWords) {
		return ""
	}
	lo := secWordRec + u24(secWordOff+3*int(w))
	return data[lo+1 : lo+1+int(data[lo])]
}

// Parts returns the number of words of the lemma: 1 for "dog", 2 for
// "ice_cream" (WordNet's '_'; a hyphen does not separate words), 0 for an
// invalid Word.
func (w Word) Parts() int {
	s := w.String()
	if s == "" {
		return 0
	}
	return 1 + strings.Count(s, "_")
}

// maxLemma is the longest input Lookup and BaseForms consider, in bytes;
// no lemma of WordNet is that long.
const maxLemma = 255

// normalize appends s to dst as lemmas are written: ASCII letters
// lowercased, spaces as '_'. It reports false for an empty s or one longer
// than maxLemma.
func normalize(dst []byte, s string) ([]byte, bool) {
	if len(s) == 0 || len(s) > maxLemma {
		return dst, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			c = '_'
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// find returns the word whose lemma is k, or 0.
func find(k []byte) Word {
	i, tag := format.Slot(format.Hash(k), hashSlots)
	for {
		v := u24(secHash + 3*i)
		if v == 0 {
			return 0
		}
		if uint32(v)>>format.WordBits == tag {
			if w := Word(v & format.WordMask); w.String() == string(k) {
				return w
			}
		}
		if i++; i == hashSlots {
			i = 0
		}
	}
}

// Lookup returns the word whose lemma is exactly lemma, with a space or
// '_' between the words of a multiword lemma ("ice cream" or "ice_cream").
// Lemmas are lowercase; Lookup lowercases ASCII letters, and does nothing
// else: it neither trims nor folds accents, and finds no inflected form
// (BaseForms does). It allocates nothing.
func Lookup(lemma string) (Word, bool) {
	var buf [maxLemma]byte
	k, ok := normalize(buf[:0], lemma)
	if !ok {
		return 0, false
	}
	w := find(k)
	return w, w != 0
}

// posOf returns the POS of synset s.
func posOf(s Synset) POS {
	switch {
	case s == 0 || uint32(s) >= uint32(nSynsets):
		return 0
	case int(s) < verb0:
		return Noun
	case int(s) < adj0:
		return Verb
	case int(s) < adv0:
		return Adj
	}
	return Adv
}

// senseRange returns the byte range of w's sense entries for pos (all of
// them for pos 0).
func senseRange(w Word, pos POS) (lo, hi int) {
	_, lo, hi, _ = w.record()
	if pos == 0 {
		return lo, hi
	}
	for lo < hi && posOf(Synset(u32(lo)&format.SynsetMask)) < pos {
		lo += 4
	}
	end := lo
	for end < hi && posOf(Synset(u32(end)&format.SynsetMask)) == pos {
		end += 4
	}
	return lo, end
}

// Senses iterates the synsets of w as pos, in WordNet's order of senses
// (index.POS: most frequent first, by the tag counts, then WordNet's own
// order), with each one's index: the sense number less one, so the pair
// (0, s) is sense 1, the name "lemma.p.01". It is empty for an invalid
// Word or POS or a word that is not a lemma of pos. Ranging over it
// allocates nothing.
func Senses(w Word, pos POS) iter.Seq2[int, Synset] {
	// Each iterator is a closure that calls a function doing the work, so
	// that it inlines into the caller's range statement and nothing
	// escapes: no allocation.
	return func(yield func(int, Synset) bool) { senses(w, pos, yield) }
}

func senses(w Word, pos POS, yield func(int, Synset) bool) {
	if pos == 0 {
		return
	}
	lo, hi := senseRange(w, pos)
	for i, p := 0, lo; p < hi; i, p = i+1, p+4 {
		if !yield(i, Synset(u32(p)&format.SynsetMask)) {
			return
		}
	}
}

// senseNumber returns the sense number of s for w (1-based), or 0.
func senseNumber(w Word, s Synset) int {
	lo, hi := senseRange(w, s.POS())
	for i, p := 1, lo; p < hi; i, p = i+1, p+4 {
		if Synset(u32(p)&format.SynsetMask) == s {
			return i
		}
	}
	return 0
}

// HasPOS reports whether w is a lemma of pos (has a sense as pos).
func HasPOS(w Word, pos POS) bool {
	lo, hi := senseRange(w, pos)
	return pos != 0 && lo < hi
}

// Sense is a word in one synset: WordNet's sense, the unit that lexical
// relations and tag counts belong to.
type Sense struct {
	Synset Synset
	Word   Word
}

// TagCount returns how often the sense is tagged in WordNet's semantically
// tagged corpora (the cntlist counts of index.sense); 0 for a sense never
// tagged and for a pair that is not a sense.
func TagCount(s Sense) int {
	_, lo, hi, _ := s.Word.record()
	for p := lo; p < hi; p += 4 {
		if e := u32(p); Synset(e&format.SynsetMask) == s.Synset {
			return int(e >> format.SynsetBits)
		}
	}
	return 0
}

// Synset is a WordNet synset: a set of words that share a meaning, with
// its semantic pointers. Synsets are numbered densely from 1 to
// NumSynsets() (nouns, then verbs, adjectives, adverbs), so a caller may
// index a table by Synset; the zero Synset is none. A Synset's methods
// accept any value: one out of range behaves as the zero Synset.
type Synset uint32

// NumSynsets returns the number of synsets: valid Synsets are 1 to
// NumSynsets().
func NumSynsets() int { return nSynsets - 1 }

// record returns the byte range of s's record ([0, 0) for an invalid
// Synset), where its members start, where its definition's words start and
// where its pointers start.
func (s Synset) record() (lo, members, defs, ptrs, hi int) {
	if s == 0 || uint32(s) >= uint32(nSynsets) {
		return 0, 0, 0, 0, 0
	}
	p := secSynOff + 3*int(s)
	lo, hi = secSynRec+u24(p), secSynRec+u24(p+3)
	members = lo + 6
	defs = members + 3*int(data[lo])
	return lo, members, defs, defs + 3*int(data[lo+5]), hi
}

// POS returns the synset's part of speech (0 for an invalid Synset).
func (s Synset) POS() POS { return posOf(s) }

// Satellite reports whether s is an adjective satellite (WordNet's POS
// 's'): an adjective synset that is similar to a head adjective synset
// (SimilarTo) rather than a head of its own.
func (s Synset) Satellite() bool { return uint32(s) >= uint32(sat0) && uint32(s) < uint32(adv0) }

// Depth returns the number of hypernym or instance hypernym pointers on
// the shortest path from s up to a root (a synset with neither): 0 for a
// root, and for every adjective and adverb.
func (s Synset) Depth() int {
	lo, m, _, _, _ := s.record()
	if m == 0 {
		return 0
	}
	return int(data[lo+1])
}

// Descendants returns the number of distinct synsets below s by hyponym and
// instance hyponym pointers, at any depth (s itself not counted): 0 for a
// leaf, 82,191 (every other noun) for entity.n.01.
func (s Synset) Descendants() int {
	lo, m, _, _, _ := s.record()
	if m == 0 {
		return 0
	}
	return u24(lo + 2)
}

// Members iterates the words of s in WordNet's order (the first is the one
// the synset is named after). A lemma is listed once even where WordNet
// lists it twice in two cases ("A" and "a"). Ranging over it allocates
// nothing.
func (s Synset) Members() iter.Seq[Word] {
	return func(yield func(Word) bool) { s.members(yield) }
}

func (s Synset) members(yield func(Word) bool) {
	_, lo, hi, _, _ := s.record()
	for p := lo; p < hi; p += 3 {
		if !yield(Word(u24(p))) {
			return
		}
	}
}

// member returns the i-th member of s (0-based), or 0.
func (s Synset) member(i int) Word {
	_, lo, hi, _, _ := s.record()
	if p := lo + 3*i; i >= 0 && p < hi {
		return Word(u24(p))
	}
	return 0
}

// memberIndex returns the index of w among the members of s, or -1.
func (s Synset) memberIndex(w Word) int {
	_, lo, hi, _, _ := s.record()
	for i, p := 0, lo; p < hi; i, p = i+1, p+3 {
		if Word(u24(p)) == w {
			return i
		}
	}
	return -1
}

// Name returns the synset's name as NLTK writes it, "dog.n.01": its first
// member, its POS letter (n, v, a, s for a satellite, r) and the sense
// number of the synset for that word. It is for output (explanations,
// tests) and allocates; "" for an invalid Synset.
func (s Synset) Name() string {
	w := s.member(0)
	if w == 0 {
		return ""
	}
	letter := "nvar"[s.POS()-1 : s.POS()]
	if s.Satellite() {
		letter = "s"
	}
	n := senseNumber(w, s)
	num := strconv.Itoa(n)
	if n < 10 {
		num = "0" + num
	}
	return w.String() + "." + letter + "." + num
}

// String returns Name().
func (s Synset) String() string { return s.Name() }

// Relation is a kind of WordNet pointer. WordNet has semantic pointers,
// from a synset to a synset, and lexical ones, from a word in a synset to a
// word in another (a Sense to a Sense); Synset.Pointers iterates the
// first, Sense.Pointers the second. In WordNet 3.1 hypernyms, hyponyms,
// holonyms, meronyms and similar-to are only semantic; antonym,
// derivation, pertainym and participle only lexical; also-see is both
// (semantic between adjectives, mostly lexical between verbs).
type Relation uint8

// The relations kept, with WordNet's pointer symbols. Other pointers of
// WordNet (entailment, cause, verb group, attribute, domains) are not in
// the lexicon.
const (
	Hypernym         Relation = format.Hypernym         // @ (a dog is a kind of canine)
	InstanceHypernym Relation = format.InstanceHypernym // @i (Portugal is an instance of a country)
	Hyponym          Relation = format.Hyponym          // ~ (the inverse of Hypernym)
	InstanceHyponym  Relation = format.InstanceHyponym  // ~i (the inverse of InstanceHypernym)
	MemberHolonym    Relation = format.MemberHolonym    // #m (a tree is a member of a forest)
	PartHolonym      Relation = format.PartHolonym      // #p (a wheel is a part of a car)
	SubstanceHolonym Relation = format.SubstanceHolonym // #s (flour is a substance of bread)
	MemberMeronym    Relation = format.MemberMeronym    // %m (the inverse of MemberHolonym)
	PartMeronym      Relation = format.PartMeronym      // %p (the inverse of PartHolonym)
	SubstanceMeronym Relation = format.SubstanceMeronym // %s (the inverse of SubstanceHolonym)
	SimilarTo        Relation = format.SimilarTo        // & (adjectives: a satellite and its head)
	AlsoSee          Relation = format.AlsoSee          // ^
	Antonym          Relation = format.Antonym          // ! (lexical)
	Derivation       Relation = format.Derivation       // + derivationally related form (lexical)
	Pertainym        Relation = format.Pertainym        // \ pertains to a noun, or an adverb's adjective (lexical)
	Participle       Relation = format.Participle       // < an adjective's verb (lexical)
)

var relNames = [...]string{"hypernym", "instance hypernym", "hyponym", "instance hyponym",
	"member holonym", "part holonym", "substance holonym", "member meronym", "part meronym",
	"substance meronym", "similar to", "also see", "antonym", "derivation", "pertainym", "participle"}

// String returns the relation's name ("hypernym"), "" for an invalid one.
func (r Relation) String() string {
	if int(r) >= len(relNames) {
		return ""
	}
	return relNames[r]
}

// Symbol returns WordNet's pointer symbol of the relation ("@"), "" for an
// invalid one.
func (r Relation) Symbol() string {
	if int(r) >= len(format.Sym) {
		return ""
	}
	return format.Sym[r]
}

// ptrRange returns the byte range of the pointers of s of relation r from
// source word src (0: the synset's semantic pointers). The pointers are
// sorted by (relation, source word).
func (s Synset) ptrRange(r Relation, src int) (lo, hi int) {
	_, _, _, lo, hi = s.record()
	if r >= format.NumRelations || src < 0 || src > format.PtrWordMask {
		return 0, 0
	}
	key := uint32(r)<<format.PtrWordBits | uint32(src)
	base, n := lo, (hi-lo)/4
	return base + 4*bound(base, n, key), base + 4*bound(base, n, key+1)
}

// bound returns the number of the n pointers at byte p whose key (relation
// and source word) is below key.
func bound(p, n int, key uint32) int {
	i, j := 0, n
	for i < j {
		h := int(uint(i+j) >> 1)
		if u32(p+4*h)>>format.PtrSrcShift < key {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// Pointers iterates the targets of the semantic pointers of relation r
// from s, in the order of WordNet's data file (so Hyponym's by offset).
// It is empty for a relation WordNet has only as lexical (see Relation)
// and for an invalid Synset or Relation. Ranging over it allocates
// nothing.
func (s Synset) Pointers(r Relation) iter.Seq[Synset] {
	return func(yield func(Synset) bool) { s.pointers(r, yield) }
}

func (s Synset) pointers(r Relation, yield func(Synset) bool) {
	lo, hi := s.ptrRange(r, 0)
	for p := lo; p < hi; p += 4 {
		if !yield(Synset(u32(p) & format.SynsetMask)) {
			return
		}
	}
}

// Pointers iterates the targets of the lexical pointers of relation r from
// the sense (word s.Word in synset s.Synset), in the order of WordNet's
// data file. It is empty for a relation WordNet has only as semantic (see
// Relation) and for a pair that is not a sense. Ranging over it allocates
// nothing.
func (s Sense) Pointers(r Relation) iter.Seq[Sense] {
	return func(yield func(Sense) bool) { s.pointers(r, yield) }
}

func (s Sense) pointers(r Relation, yield func(Sense) bool) {
	i := s.Synset.memberIndex(s.Word)
	if i < 0 {
		return
	}
	lo, hi := s.Synset.ptrRange(r, i+1)
	for p := lo; p < hi; p += 4 {
		e := u32(p)
		t := Synset(e & format.SynsetMask)
		if !yield(Sense{t, t.member(int(e>>format.PtrTgtShift&format.PtrWordMask) - 1)}) {
			return
		}
	}
}

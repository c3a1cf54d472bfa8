// Package format is the layout of lexicon's wordnet.bin, shared by the
// generator that writes it (lexicon/gen) and the package that reads it in
// place (lexicon). Both sides use these constants only; a change of layout
// is a change of Version.
//
// All integers are little-endian; u24 is three bytes. The file is:
//
//	header    Magic, then NumFields u32 fields (indexed by the F constants)
//	WordOff   u24 × (Words+1): offset of word i's record in WordRec
//	WordRec   per word: lemma length u8, lemma bytes, sense count u8, one
//	          u32 per sense: synset (SynsetBits) | tag count << SynsetBits
//	          (senses are by POS: noun, verb, adj, adv, then in index.POS
//	          order), then, if the word is in a definition, the synsets
//	          whose definition has it: their number as a uvarint, then the
//	          first synset as a uvarint and each next one as the uvarint of
//	          its difference from the one before (ascending).
//	Hash      u24 × HashSlots, open addressing with linear probing over the
//	          lemma's Hash: slot index is the high 32 bits scaled to
//	          HashSlots, a slot is word | tag << WordBits with the
//	          tag the hash's low TagBits bits; 0 is an empty slot.
//	SynOff    u24 × (Synsets+1): offset of synset i's record in SynRec
//	SynRec    per synset: member count u8, depth u8, descendants u24,
//	          definition word count u8, members (words) u24 each, the
//	          definition's words u24 each (in gloss order), then pointers
//	          u32 each (Ptr* bits), sorted by (relation, source word) and
//	          otherwise in the order of the data file.
//	ExcOff    u24 × (exceptions+1): offset of exception i's record in ExcRec
//	ExcRec    per exception: form length u8, form bytes, base words u24 each.
//	          Exceptions are sorted by (POS, form); FExc* give each POS's
//	          first index.
//	Inf       per exception base: base word u24, exception index u24,
//	          sorted by (POS, base word, form) with FInf* giving each POS's
//	          first entry: the inverse of the exception lists, less the
//	          entries whose form is the base.
//
// Word 0 and synset 0 are reserved (empty records): valid ones start at 1.
// Synsets are numbered by class (nouns, verbs, head adjectives, satellite
// adjectives, adverbs) and by offset in the data file within a class, so a
// synset's POS and satellite flag follow from its number.
package format

// Magic starts the file.
const Magic = "MGWN"

// Version is the layout's version.
const Version = 2

// Header fields, u32 each, after Magic.
const (
	FVersion   = iota
	FWords     // number of words including the reserved word 0
	FSynsets   // number of synsets including the reserved synset 0
	FVerb      // first verb synset (nouns start at 1)
	FAdj       // first head adjective synset
	FSat       // first satellite adjective synset
	FAdv       // first adverb synset
	FHashSlots // slots of the hash table
	FExcNoun   // first noun exception; FExcVerb, FExcAdj, FExcAdv follow
	FExcVerb
	FExcAdj
	FExcAdv
	FExcEnd  // number of exceptions
	FInfNoun // first noun entry of Inf; FInfVerb, FInfAdj, FInfAdv follow
	FInfVerb
	FInfAdj
	FInfAdv
	FInfEnd  // number of entries of Inf
	FDefined // number of (synset, definition word) pairs
	// Sections, as byte offsets from the start of the file; each ends where
	// the next starts and the last at FEnd, the length of the file.
	FWordOff
	FWordRec
	FHash
	FSynOff
	FSynRec
	FExcOff
	FExcRec
	FInf
	FEnd
	NumFields
)

// HeaderSize is the size of the header in bytes.
const HeaderSize = len(Magic) + 4*NumFields

// Bit layout of word ids, synset ids, sense entries, hash slots and pointers.
const (
	SynsetBits  = 17
	SynsetMask  = 1<<SynsetBits - 1
	TagCountMax = 1<<(32-SynsetBits) - 1

	WordBits = 18
	WordMask = 1<<WordBits - 1
	TagBits  = 24 - WordBits

	PtrWordBits = 5 // source and target word numbers (1-based; 0: the synset)
	PtrWordMask = 1<<PtrWordBits - 1
	PtrTgtShift = SynsetBits
	PtrSrcShift = PtrTgtShift + PtrWordBits
	PtrRelShift = PtrSrcShift + PtrWordBits
	PtrRelBits  = 4
)

// Relations as the pointer entries number them (the lexicon package's
// Relation values). Sym gives WordNet's pointer symbol of each.
const (
	Hypernym = iota
	InstanceHypernym
	Hyponym
	InstanceHyponym
	MemberHolonym
	PartHolonym
	SubstanceHolonym
	MemberMeronym
	PartMeronym
	SubstanceMeronym
	SimilarTo
	AlsoSee
	Antonym
	Derivation
	Pertainym
	Participle
	NumRelations
)

// Sym is WordNet's pointer symbol of each relation.
var Sym = [NumRelations]string{"@", "@i", "~", "~i", "#m", "#p", "#s", "%m", "%p", "%s", "&", "^", "!", "+", `\`, "<"}

// Hash returns the hash of a lemma: FNV-1a 64 with MurmurHash3's
// finalizer, so that both halves are well mixed.
func Hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return Mix(h)
}

// Mix is MurmurHash3's 64-bit finalizer.
func Mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Slot returns the first slot and the tag of a hash in a table of n slots:
// the slot from the high 32 bits, the tag from the low TagBits bits.
func Slot(h uint64, n int) (int, uint32) {
	return int((h >> 32) * uint64(n) >> 32), uint32(h & (1<<TagBits - 1))
}

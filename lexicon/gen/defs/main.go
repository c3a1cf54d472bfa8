// Command defs derives the definition words of every WordNet synset, for
// lexicon/gen to store: it reads the glosses of data.POS and reduces their
// words to lemmas with the lexicon package's own Lookup and BaseForms, so
// it must be built with a wordnet.bin of the same lemmas and exception
// lists (scripts/gen-wordnet first makes one without definitions, then runs
// this, then makes the final file; the definitions do not change what
// Lookup and BaseForms return, so the result does not depend on which of
// the two files this is built with).
//
// For each synset it writes a line "POS OFFSET<TAB>lemma lemma ...", with
// POS the data file's letter (n, v, a, r), in data file order, lemmas in
// gloss order without repeats. The definition is the gloss less its
// examples: a double-quoted span is dropped with whatever follows it up to
// the next top-level ';' (an attribution such as -T.S.Eliot); the other
// ';'-separated clauses are kept, usage notes after the examples included
// ("`alright' is a nonstandard variant of `all right'"). A token is a run
// of ASCII letters and digits with inner hyphens and apostrophes, lowercased,
// without a possessive "'s"; one with no letter is dropped. Each token not
// in the stopword list below gives every lemma BaseForms finds for it as
// noun, verb, adjective and adverb ("eats" → eats, eat; "born" → born,
// bear), or itself if it is a lemma and gives none; a hyphenated token that
// gives nothing gives its parts instead; a one-letter token gives nothing.
// Two or three adjacent tokens with no punctuation between them, the first
// no stopword and the last none but an auxiliary (human being, not used
// to nor kind of), give, greedily (the longest at the leftmost
// place first), the multiword lemmas BaseForms finds for them ("health
// professionals" → health_professional), before the lemmas of their single
// tokens, which are kept too. Lemmas in the stopword list and the synset's
// own members are dropped.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/memgate/memgate/lexicon"
)

// stopwords are English function words: articles and determiners,
// pronouns (with someone, something and the like), prepositions,
// conjunctions, negation, the gloss fillers especially, usually, often,
// very, also and etc. (e.g. and i.e. are one-letter tokens), and the
// auxiliary and modal verbs, which are true in auxiliaries too.
var stopwords, auxiliaries = map[string]bool{}, map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		be am is are was were been being have has had having do does did doing done
		will would shall should can could may might must ought`) {
		stopwords[w] = true
		auxiliaries[w] = true
	}
	for _, w := range strings.Fields(`
		a an the this that these those each every either neither both all any some no
		not nor many much more most few less least several such other another own same
		i me my mine myself you your yours yourself yourselves he him his himself she
		her hers herself it its itself we us our ours ourselves they them their theirs
		themselves who whom whose which what whoever whatever whichever
		someone somebody something somewhere anyone anybody anything everyone everybody
		everything nobody nothing one ones oneself
		about above across after against along amid among around as at before behind
		below beneath beside besides between beyond by down during except for from in
		inside into near of off on onto out outside over since than through throughout
		till to toward towards under underneath until unto up upon via with within without per
		and or but if then so yet because although though while whether when where whereas
		whereby wherein unless once how why there here thus
		very too also especially usually often etc eg ie`) {
		stopwords[w] = true
	}
}

var files = []struct{ name, pos string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

func main() {
	dict := flag.String("dict", "", "directory with data.POS (WordNet 3.1)")
	out := flag.String("out", "", "file to write")
	flag.Parse()
	if *dict == "" || *out == "" {
		log.Fatal("usage: defs -dict DIR -out defs.txt")
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var d definer
	n, words := 0, 0
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(*dict, "data."+file.name))
		if err != nil {
			log.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == "" || strings.HasPrefix(l, "  ") {
				continue
			}
			i := strings.Index(l, " | ")
			if i < 0 {
				log.Fatalf("data.%s: no gloss in %.40q", file.name, l)
			}
			fs := strings.Fields(l[:i])
			var members []lexicon.Word
			var cnt int
			if _, err := fmt.Sscanf(fs[3], "%x", &cnt); err != nil {
				log.Fatalf("data.%s %s: word count %q", file.name, fs[0], fs[3])
			}
			for j := 0; j < cnt; j++ {
				m := strings.ToLower(fs[4+2*j])
				for _, mark := range []string{"(a)", "(p)", "(ip)"} {
					m = strings.TrimSuffix(m, mark)
				}
				x, ok := lexicon.Lookup(m)
				if !ok {
					log.Fatalf("data.%s %s: member %q is no lemma of the lexicon", file.name, fs[0], m)
				}
				members = append(members, x)
			}
			ws := d.define(l[i+3:], members)
			fmt.Fprintf(w, "%s %s\t", file.pos, fs[0])
			for k, x := range ws {
				if k > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(x.String())
			}
			w.WriteByte('\n')
			n++
			words += len(ws)
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "definitions of %d synsets, %d words (%.2f per synset)\n", n, words, float64(words)/float64(n))
}

type token struct {
	s     string
	joins bool // nothing but spaces between it and the token before
}

type definer struct {
	toks  []token
	out   []lexicon.Word
	forms []lexicon.Word
}

// definition returns the gloss less its examples (see the command's doc).
func definition(gloss string) string {
	var b strings.Builder
	quoted, skip := false, false
	for i := 0; i < len(gloss); i++ {
		c := gloss[i]
		switch {
		case c == '"':
			if quoted {
				skip = true // up to the next ';'
			}
			quoted = !quoted
		case quoted:
		case c == ';':
			skip = false
			b.WriteByte(c)
		case !skip:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// tokenize splits a definition into tokens (see the command's doc).
func (d *definer) tokenize(s string) {
	d.toks = d.toks[:0]
	joins := false
	for i := 0; i < len(s); {
		c := s[i]
		if !isAlnum(c) {
			if c != ' ' {
				joins = false
			}
			i++
			continue
		}
		j := i
		for j < len(s) && (isAlnum(s[j]) || (s[j] == '-' || s[j] == '\'') && j+1 < len(s) && isAlnum(s[j+1])) {
			j++
		}
		t := strings.ToLower(s[i:j])
		t = strings.TrimSuffix(t, "'s")
		i = j
		if strings.IndexFunc(t, func(r rune) bool { return 'a' <= r && r <= 'z' }) < 0 {
			joins = false
			continue
		}
		d.toks = append(d.toks, token{t, joins})
		joins = true
	}
}

// add appends the lemmas of tok that are no stopword, no member and not
// yet there.
func (d *definer) add(ws []lexicon.Word, members []lexicon.Word) {
	for _, w := range ws {
		if stopwords[w.String()] || contains(members, w) || contains(d.out, w) {
			continue
		}
		d.out = append(d.out, w)
	}
}

func contains(ws []lexicon.Word, w lexicon.Word) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// lemmas returns the lemmas BaseForms finds for tok as any POS.
func (d *definer) lemmas(tok string) []lexicon.Word {
	d.forms = d.forms[:0]
	for pos := lexicon.Noun; pos <= lexicon.Adv; pos++ {
		for _, w := range lexicon.BaseForms(nil, tok, pos) {
			if !contains(d.forms, w) {
				d.forms = append(d.forms, w)
			}
		}
	}
	return d.forms
}

func (d *definer) define(gloss string, members []lexicon.Word) []lexicon.Word {
	d.tokenize(definition(gloss))
	d.out = d.out[:0]
	multiEnd := 0 // tokens before it are in a multiword lemma found
	for i, t := range d.toks {
		if i >= multiEnd && !stopwords[t.s] {
			for n := 3; n >= 2; n-- {
				if i+n > len(d.toks) {
					continue
				}
				parts := []string{t.s}
				for _, u := range d.toks[i+1 : i+n] {
					if !u.joins {
						break
					}
					parts = append(parts, u.s)
				}
				if last := parts[len(parts)-1]; len(parts) < n || stopwords[last] && !auxiliaries[last] {
					continue
				}
				if ws := d.lemmas(strings.Join(parts, " ")); len(ws) > 0 {
					d.add(ws, members)
					multiEnd = i + n
					break
				}
			}
		}
		if stopwords[t.s] || len(t.s) == 1 {
			continue
		}
		ws := d.lemmas(t.s)
		if len(ws) == 0 {
			if w, ok := lexicon.Lookup(t.s); ok {
				ws = append(ws, w)
			} else if strings.Contains(t.s, "-") {
				for _, p := range strings.Split(t.s, "-") {
					if len(p) > 1 && !stopwords[p] {
						d.add(d.lemmas(p), members)
					}
				}
				continue
			}
		}
		d.add(ws, members)
	}
	return d.out
}

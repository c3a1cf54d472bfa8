package policy

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// A sentence rule's expression costs a run of the regular expression engine
// at every occurrence of a lead, and a rule whose leads are common words
// runs often. Most runs fail on the first word after the lead, so each rule
// keeps the byte pairs its expression can start with (after one optional
// white space character): an occurrence whose next two bytes are not among
// them is rejected without running it.

// firstPairs returns the sorted pairs of bytes a match of the compiled
// expression re can start with, skipping one leading white space
// character, or nil when any pair may start one (an empty match, a wide
// character class, or a program too complex to follow).
func firstPairs(re string) []uint16 {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil
	}
	start := closure(prog, []uint32{uint32(prog.Start)})
	// One optional white space character: follow the instructions that
	// accept a space too.
	s := slices.Clone(start)
	for _, pc := range start {
		if in := &prog.Inst[pc]; isRuneInst(in) && in.MatchRune(' ') {
			s = append(s, closure(prog, []uint32{in.Out})...)
		}
	}
	pairs := map[uint16]bool{}
	for _, pc := range s {
		in := &prog.Inst[pc]
		if in.Op == syntax.InstMatch {
			return nil
		}
		if !isRuneInst(in) {
			continue
		}
		firsts, ok := encodings(in)
		if !ok {
			return nil
		}
		for _, enc := range firsts {
			if len(enc) >= 2 {
				pairs[uint16(enc[0])<<8|uint16(enc[1])] = true
				continue
			}
			// One byte: the second is the first of what follows.
			next := closure(prog, []uint32{in.Out})
			for _, npc := range next {
				nin := &prog.Inst[npc]
				if nin.Op == syntax.InstMatch {
					return nil
				}
				if !isRuneInst(nin) {
					continue
				}
				seconds, ok := encodings(nin)
				if !ok {
					return nil
				}
				for _, e2 := range seconds {
					pairs[uint16(enc[0])<<8|uint16(e2[0])] = true
				}
			}
		}
	}
	out := make([]uint16, 0, len(pairs))
	for p := range pairs {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// closure returns the instructions reachable from pcs without consuming
// input, treating every empty-width assertion as satisfied.
func closure(prog *syntax.Prog, pcs []uint32) []uint32 {
	seen := map[uint32]bool{}
	var out []uint32
	for len(pcs) > 0 {
		pc := pcs[len(pcs)-1]
		pcs = pcs[:len(pcs)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			pcs = append(pcs, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			pcs = append(pcs, in.Out)
		case syntax.InstFail:
		default:
			out = append(out, pc)
		}
	}
	return out
}

func isRuneInst(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// encodings returns the UTF-8 encodings of the runes an instruction
// accepts, or false when there are too many to list.
func encodings(in *syntax.Inst) ([][]byte, bool) {
	if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
		return nil, false
	}
	switch {
	case in.Op == syntax.InstRune1 || in.Op == syntax.InstRune && len(in.Rune) == 1:
		return [][]byte{utf8.AppendRune(nil, in.Rune[0])}, true
	case in.Op != syntax.InstRune:
		return nil, false
	}
	var out [][]byte
	for k := 0; k+1 < len(in.Rune); k += 2 {
		lo, hi := in.Rune[k], in.Rune[k+1]
		if len(out)+int(hi-lo) >= 64 {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			out = append(out, utf8.AppendRune(nil, r))
		}
	}
	return out, true
}

// mayStart reports whether the text after a lead, at offset p, can start a
// match of a rule with the given first pairs.
func mayStart(pairs []uint16, text string, p int) bool {
	if pairs == nil {
		return true
	}
	if p < len(text) && (text[p] == ' ' || text[p] == '\n') {
		p++
	}
	if p+1 >= len(text) {
		return true
	}
	_, ok := slices.BinarySearch(pairs, uint16(text[p])<<8|uint16(text[p+1]))
	return ok
}

package policy

import (
	"unicode"
	"unicode/utf8"
)

// isInvisible reports the characters that render as nothing and are used to
// hide text from a human reader: Unicode tag characters, zero-width
// characters, the byte order mark, and bidirectional embeddings, overrides
// and isolates.
func isInvisible(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F: // tag characters
	case r >= 0x200B && r <= 0x200F: // zero width space, non-joiner, joiner; LRM, RLM
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
	case r == 0xFEFF: // zero width no-break space (byte order mark)
	case r >= 0x202A && r <= 0x202E: // bidi embeddings and overrides
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
	default:
		return false
	}
	return true
}

// hasInvisible reports whether text holds any invisible character. Every
// one of them is encoded with a lead byte E2, EF or F3, so ASCII text costs
// one comparison per byte.
func hasInvisible(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == 0xE2 || c == 0xEF || c == 0xF3 {
			if r, _ := utf8.DecodeRuneInString(text[i:]); isInvisible(r) {
				return true
			}
		}
	}
	return false
}

// stripInvisible removes invisible characters. pos[j] is the offset in text
// of byte j of the result (bytes are copied whole), so a span [s, e) of the
// result is [pos[s], pos[e-1]+1) of text.
func stripInvisible(text string) (string, []int32) {
	b := make([]byte, 0, len(text))
	pos := make([]int32, 0, len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isInvisible(r) {
			b = append(b, text[i:i+n]...)
			for k := range n {
				pos = append(pos, int32(i+k))
			}
		}
		i += n
	}
	return string(b), pos
}

// folded is text prepared for phrase matching, with (when mapped) the
// original span of the character that produced each byte.
type folded struct {
	s          string
	start, end []int32
}

// fold prepares text for instruction matching:
//   - invisible characters are dropped, so "ig\u200bnore" reads "ignore";
//   - fullwidth forms, mathematical and circled letters become ASCII, and
//     common Cyrillic and Greek look-alikes become the Latin letter they
//     imitate (an approximation of NFKC plus confusable folding);
//   - look-alike angle brackets become < and >, curly quotes straight ones;
//   - letters are lower-cased;
//   - each run of white space becomes one space, or one newline when it
//     holds a line break; leading and trailing space is dropped.
//
// With mapped set, start[j] and end[j] give the span in text of the
// character that produced byte j (for white space, the whole run).
func fold(text string, mapped bool) folded {
	var f folded
	b := make([]byte, 0, len(text))
	if mapped {
		f.start = make([]int32, 0, len(text))
		f.end = make([]int32, 0, len(text))
	}
	wsStart, wsEnd, wsNL, inWS := 0, 0, false, false
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		s := i
		i += n
		if r < utf8.RuneSelf {
			// ASCII fast path.
			switch {
			case r == ' ' || r == '\t':
			case r == '\n' || r == '\r' || r == '\v' || r == '\f':
				wsNL = true
			default:
				if inWS && len(b) > 0 {
					c := byte(' ')
					if wsNL {
						c = '\n'
					}
					b = append(b, c)
					if mapped {
						f.start, f.end = append(f.start, int32(wsStart)), append(f.end, int32(wsEnd))
					}
				}
				inWS, wsNL = false, false
				if r >= 'A' && r <= 'Z' {
					r += 'a' - 'A'
				}
				b = append(b, byte(r))
				if mapped {
					f.start, f.end = append(f.start, int32(s)), append(f.end, int32(i))
				}
				continue
			}
			if !inWS {
				inWS, wsStart = true, s
			}
			wsEnd = i
			continue
		}
		if isInvisible(r) {
			continue
		}
		if unicode.IsSpace(r) {
			if r == 0x85 || r == 0x2028 || r == 0x2029 {
				wsNL = true
			}
			if !inWS {
				inWS, wsStart = true, s
			}
			wsEnd = i
			continue
		}
		if inWS && len(b) > 0 {
			c := byte(' ')
			if wsNL {
				c = '\n'
			}
			b = append(b, c)
			if mapped {
				f.start, f.end = append(f.start, int32(wsStart)), append(f.end, int32(wsEnd))
			}
		}
		inWS, wsNL = false, false
		r = foldRune(r)
		k := utf8.EncodeRune(enc[:], r)
		b = append(b, enc[:k]...)
		if mapped {
			for range k {
				f.start, f.end = append(f.start, int32(s)), append(f.end, int32(i))
			}
		}
	}
	f.s = string(b)
	return f
}

// foldRune maps one non-ASCII, non-space rune for matching.
func foldRune(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		r -= 0xFEE0
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters, 52 per style
		i := (r - 0x1D400) % 52
		if i < 26 {
			return 'a' + i
		}
		return 'a' + i - 26
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits
		return '0' + (r-0x1D7CE)%10
	case r >= 0x24B6 && r <= 0x24CF: // circled capital letters
		return 'a' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		return 'a' + r - 0x24D0
	}
	switch r {
	case 0x2039, 0x3008, 0xFE64, 0x276E, 0x2329, 0x27E8, 0x02C2:
		return '<'
	case 0x203A, 0x3009, 0xFE65, 0x276F, 0x232A, 0x27E9, 0x02C3:
		return '>'
	case 0x2018, 0x2019, 0x201B, 0x2032:
		return '\''
	case 0x201C, 0x201D, 0x201F, 0x2033:
		return '"'
	}
	return confusable(unicode.ToLower(r))
}

// confusable maps lower-case Cyrillic and Greek letters to the Latin letter
// they look like. Applied to genuine Cyrillic or Greek text it produces
// nonsense, never an English phrase, so it cannot create a false match.
func confusable(r rune) rune {
	switch r {
	case 'а', 'α':
		return 'a'
	case 'в':
		return 'b'
	case 'с':
		return 'c'
	case 'ԁ':
		return 'd'
	case 'е', 'ε':
		return 'e'
	case 'ɡ':
		return 'g'
	case 'н', 'һ':
		return 'h'
	case 'і', 'ι', 'ı':
		return 'i'
	case 'ј':
		return 'j'
	case 'к', 'κ':
		return 'k'
	case 'м':
		return 'm'
	case 'о', 'ο':
		return 'o'
	case 'р', 'ρ':
		return 'p'
	case 'ԛ':
		return 'q'
	case 'ѕ':
		return 's'
	case 'т', 'τ':
		return 't'
	case 'υ':
		return 'u'
	case 'ν':
		return 'v'
	case 'ԝ':
		return 'w'
	case 'х', 'χ':
		return 'x'
	case 'у':
		return 'y'
	}
	return r
}

package policy

import (
	"unicode"
	"unicode/utf8"
)

// Look-alike letters, after the Unicode confusables data (UTS #39,
// confusables.txt), restricted to the letters that are near-identical to an
// ASCII letter in common fonts and are used to dodge filters. Each string
// lists pairs: the look-alike, then the ASCII letter it imitates. Fullwidth
// forms, mathematical alphanumerics and circled letters are not here: NFKC
// already maps them.
//
// The class says when a letter is folded (see foldConfusables):
//
//   - latinLike: Latin small capitals and IPA letters, the negative
//     circled and squared capitals and the regional indicators; no language of the text memgate keeps
//     writes words with them, so they are always folded.
//   - foreign: letters of Cyrillic and Greek that Russian and Greek do not
//     use, and Armenian and Cherokee letters: folded in a word that also
//     holds a Latin letter or digit, or whose letters are all look-alikes.
//   - common: the letters of the Russian and Greek alphabets themselves:
//     folded only in a word that also holds a Latin letter or digit, so
//     "все" stays Russian while "іgnоre" becomes "ignore".
const (
	confusablesLatinLike = "" +
		"ᴀaʙbᴄcᴅdᴇeꜰfɢgʜhɪiᴊjᴋkʟlᴍmɴnᴏoᴘpʀrꜱsᴛtᴜuᴠvᴡwʏyᴢz" + // small capitals
		"ɑaɡgɩiıiȷjǀl" // IPA and dotless letters
	confusablesForeign = "" +
		"ЅSѕsІIіiЈJјjԚQԛqԜWԝwҮYүyҺHһhӀIӏlԁdѵv" + // Cyrillic outside Russian
		"\u037FJ\u03F3j" + // Greek yot
		"ՕOօoՏSՍUսuԼLհhոnցgզqաw" + // Armenian
		"\u13A0D\u13A1R\u13A2T\u13A5i\u13A9y\u13AAA\u13ABJ\u13ACE\u13B3W\u13B7M\u13BBH\u13C0G\u13C2h\u13C3Z\u13CFb\u13D2R\u13D9V\u13DAS\u13DEL\u13DFC\u13E2P\u13E6K\u13E7d\u13F4B" // Cherokee capitals
	confusablesCommon = "" +
		"АAВBЕEКKМMНHОOРPСCТTУYХXаaвbеeкkмmнhоoрpсcтtуyхxпn" + // Cyrillic
		"ΑAΒBΕEΖZΗHΙIΚKΜMΝNΟOΡPΤTΥYΧXαaεeιiκkνvοoρpτtυuχxγyηn" // Greek
)

// Confusable classes, in increasing order of readiness to fold.
const (
	confCommon uint8 = 1 + iota
	confForeign
	confLatinLike
)

// confusableMap maps each look-alike to its ASCII letter (low 7 bits) and
// class (high bits).
var confusableMap = func() map[rune]uint16 {
	m := map[rune]uint16{}
	for _, t := range []struct {
		class uint8
		pairs string
	}{
		{confCommon, confusablesCommon},
		{confForeign, confusablesForeign},
		{confLatinLike, confusablesLatinLike},
	} {
		s := []rune(t.pairs)
		for i := 0; i+1 < len(s); i += 2 {
			m[s[i]] = uint16(t.class)<<8 | uint16(s[i+1])
		}
	}
	// Cherokee has small letters since Unicode 8: fold them too.
	small := map[rune]uint16{}
	for r, v := range m {
		if lo := unicode.ToLower(r); r >= 0x13A0 && r <= 0x13F5 && lo != r {
			small[lo] = v&0xFF00 | uint16(unicode.ToLower(rune(v&0x7F)))
		}
	}
	for r, v := range small {
		m[r] = v
	}
	return m
}()

// confusable returns the ASCII letter r imitates and its class, or 0.
func confusable(r rune) (byte, uint8) {
	switch {
	case r >= 0x1F150 && r <= 0x1F169: // negative circled capital letters
		return byte('A' + r - 0x1F150), confLatinLike
	case r >= 0x1F170 && r <= 0x1F189: // negative squared capital letters
		return byte('A' + r - 0x1F170), confLatinLike
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators, shown as letters outside flags
		return byte('A' + r - 0x1F1E6), confLatinLike
	case r < 0x131 || r > 0x58F && !(r >= 0x13A0 && r <= 0x13FF) && !(r >= 0x1D00 && r <= 0x1DBF) &&
		!(r >= 0xA720 && r <= 0xA7FF) && !(r >= 0xAB70 && r <= 0xABBF):
		// Outside the blocks the table draws from (Latin extensions and
		// IPA, Greek, Cyrillic, Armenian, Cherokee, phonetic extensions):
		// CJK, Arabic, Hebrew … text skips the lookup.
		return 0, 0
	}
	v, ok := confusableMap[r]
	if !ok {
		return 0, 0
	}
	return byte(v & 0x7F), uint8(v >> 8)
}

// latinToCyrillic maps the Latin letters that look like letters of the
// Russian alphabet to them, for the reverse attack: Latin look-alikes in a
// Russian word ("Игнoрируй", with a Latin o).
var latinToCyrillic = [128]rune{
	'A': 'А', 'B': 'В', 'C': 'С', 'E': 'Е', 'H': 'Н', 'K': 'К', 'M': 'М', 'O': 'О', 'P': 'Р', 'T': 'Т', 'X': 'Х', 'Y': 'У',
	'a': 'а', 'c': 'с', 'e': 'е', 'k': 'к', 'o': 'о', 'p': 'р', 'x': 'х', 'y': 'у',
}

// foldConfusables replaces look-alike letters, word by word (a word being
// a run of letters, marks, digits and underscores), with the letters of the
// script the word is written in. Mostly the attack is Cyrillic or Greek
// look-alikes in a Latin word, and they become the ASCII letters they
// imitate: latinLike letters always, foreign ones in a word that has a
// Latin letter or digit or is all look-alikes, common ones only in a word
// that has a Latin letter or digit. Genuine Russian or Greek words are left
// alone. The reverse, Latin look-alikes in a word whose other letters are
// Cyrillic ("Teпepь"), becomes Cyrillic; a word made only of letters that
// exist in both scripts ("вce") goes to the script most letters of the
// text are written in.
func foldConfusables(v *view) *view {
	src := v.s
	if !mayConfuse(src) {
		return v
	}
	b := builder{src: src}
	cyrillicText := -1 // whether most letters of the text are Cyrillic; computed on demand
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf && !isWordByte(c) {
			i++
			continue
		}
		// One word: what it holds decides what is folded.
		j := i
		var latin, foreign, lookAlike, other bool
		var latinOwn, latinShared, cyrOwn bool // for the direction
		for j < len(src) {
			c := src[j]
			if c < utf8.RuneSelf {
				if !isWordByte(c) {
					break
				}
				latin = latin || c != '_'
				if isAlpha(c) {
					if latinToCyrillic[c] != 0 {
						latinShared = true
					} else {
						latinOwn = true
					}
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(src[j:])
			if !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r) && !confusableRange(r) {
				break
			}
			switch _, class := confusable(r); class {
			case confLatinLike:
				latin = true
				lookAlike = true
			case confForeign:
				foreign = true
				lookAlike = true
			case confCommon:
				lookAlike = true
			default:
				if unicode.IsLetter(r) {
					if isLatin(r) {
						latin = true
						latinOwn = true
					} else {
						other = true
						cyrOwn = cyrOwn || r >= 0x400 && r <= 0x52F && unicode.Is(unicode.Cyrillic, r)
					}
				}
			}
			j += n
		}
		toCyrillic := latinShared && !latinOwn && (cyrOwn || lookAlike && !other)
		if toCyrillic && !cyrOwn {
			// Only letters both scripts have: follow the text.
			if cyrillicText < 0 {
				cyrillicText = mostlyCyrillic(src)
			}
			toCyrillic = cyrillicText == 1
		}
		switch {
		case toCyrillic:
			for k := i; k < j; k++ {
				if c := src[k]; c < utf8.RuneSelf && latinToCyrillic[c] != 0 {
					b.replaceRune(k, k+1, latinToCyrillic[c])
				}
			}
		case lookAlike:
			least := confLatinLike
			switch {
			case latin:
				least = confCommon
			case foreign && !other:
				least = confCommon // all look-alikes, one of them foreign
			}
			for k := i; k < j; {
				r, n := utf8.DecodeRuneInString(src[k:])
				if a, class := confusable(r); class >= least {
					b.replaceRune(k, k+n, rune(a))
				}
				k += n
			}
		}
		i = j
		if i < len(src) && src[i] >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(src[i:])
			i += n // the non-word rune that ended the word
		}
	}
	return b.finish(v)
}

// mayConfuse reports whether s holds a character of the blocks the
// look-alike table draws from or a Latin letter that looks Cyrillic (see
// confusable), by their UTF-8 lead bytes: text without one is left as it
// is at the cost of one byte comparison per byte.
func mayConfuse(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0xC4:
		case c <= 0xD6: // U+0100–U+05BF: Latin extensions, IPA, Greek, Cyrillic, Armenian
			return true
		case c == 0xE1 && i+1 < len(s):
			if d := s[i+1]; d == 0x8E || d == 0x8F || d >= 0xB4 && d <= 0xB6 { // Cherokee, phonetic extensions
				return true
			}
		case c == 0xEA && i+1 < len(s):
			if d := s[i+1]; d >= 0x9C && d <= 0x9F || d == 0xAD || d == 0xAE { // Latin extended-D, Cherokee small letters
				return true
			}
		case c == 0xF0 && i+2 < len(s):
			if s[i+1] == 0x9F && s[i+2] >= 0x85 && s[i+2] <= 0x87 { // enclosed letters, regional indicators
				return true
			}
		}
	}
	return false
}

// mostlyCyrillic returns 1 when text has more Cyrillic letters than ASCII
// ones, else 0.
func mostlyCyrillic(text string) int {
	var cyr, lat int
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf:
			if isAlpha(byte(r)) {
				lat++
			}
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		}
	}
	if cyr > lat {
		return 1
	}
	return 0
}

// confusableRange reports the enclosed look-alikes and regional
// indicators, which are symbols, not letters, but belong in a word.
func confusableRange(r rune) bool {
	return r >= 0x1F150 && r <= 0x1F189 || r >= 0x1F1E6 && r <= 0x1F1FF
}

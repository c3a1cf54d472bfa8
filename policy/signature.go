package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SignatureVersion names the normalization Signature applies. A store that
// keeps signatures must recompute them when it changes.
const SignatureVersion = 1

// Signature returns the dedup signature of content: the hex SHA-256 of its
// normalized form. Two contents with the same signature are the same memory
// for dedup; the engine compares signatures only within one scope (tenant,
// principal, agent, conversation) and kind.
//
// Normalization does:
//   - lower-case every letter (Unicode simple case mapping; final sigma
//     folds to sigma);
//   - map fullwidth ASCII forms to ASCII and curly quotes and apostrophes to
//     straight ones ("Alice’s" = "Alice's");
//   - drop invisible characters (zero-width, bidi controls, tag characters);
//   - collapse every run of white space, line breaks included, to one space
//     and trim both ends;
//   - drop trailing full stops, exclamation marks and ellipses ("Alice likes
//     tea." = "alice likes tea"), but keep a trailing question mark, which
//     changes the meaning, and keep them all when nothing else is left.
//
// It does not: apply Unicode canonical normalization (a precomposed é and e
// plus a combining accent differ), remove accents, touch punctuation
// inside the text, reorder, stem or correct words, or treat different
// numbers, dates or spellings as equal. "Alice likes tea" and "Alice likes
// coffee" stay different. Invalid UTF-8 is read as U+FFFD.
func Signature(content string) string {
	sum := sha256.Sum256([]byte(signatureText(content)))
	return hex.EncodeToString(sum[:])
}

// signatureText is the normalized form Signature hashes.
func signatureText(content string) string {
	b := make([]byte, 0, len(content))
	space := false
	for i := 0; i < len(content); {
		c := content[i]
		if c < utf8.RuneSelf { // ASCII fast path
			i++
			switch {
			case c == ' ' || c >= '\t' && c <= '\r':
				space = len(b) > 0
				continue
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			}
			if space {
				b = append(b, ' ')
				space = false
			}
			b = append(b, c)
			continue
		}
		r, n := utf8.DecodeRuneInString(content[i:]) // U+FFFD for an invalid byte
		i += n
		if isInvisible(r) {
			continue
		}
		if unicode.IsSpace(r) {
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x2018 || r == 0x2019 || r == 0x201B || r == 0x2032:
			r = '\''
		case r == 0x201C || r == 0x201D || r == 0x201F || r == 0x2033:
			r = '"'
		}
		r = unicode.ToLower(r)
		if r == 'ς' {
			r = 'σ'
		}
		b = utf8.AppendRune(b, r)
	}
	s := string(b)
	trimmed := strings.TrimRightFunc(s, func(r rune) bool {
		return r == '.' || r == '!' || r == '…' || r == '。' || r == ' '
	})
	if trimmed == "" {
		return s
	}
	return trimmed
}

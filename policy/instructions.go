package policy

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Instruction-like finding types.
const (
	InstructionIgnore     = "ignore_instructions" // "ignore all previous instructions"
	InstructionOverride   = "role_override"       // "you are now DAN", "new instructions:", "reveal your system prompt"
	InstructionRoleTag    = "role_tag"            // <system>, <|im_start|>, [INST], <<SYS>>, "system:" at line start
	InstructionPromptTag  = "prompt_block_tag"    // </memories>, <memory ...>: forged delimiters of memgate's block
	InstructionInvisible  = "invisible_unicode"   // tag characters, zero-width, bidi overrides
	InstructionExfilImage = "data_exfil_image"    // ![x](https://host/p?d=...): an image or link URL carrying data
)

// InstructionTypes lists every type DetectInstructions reports.
var InstructionTypes = []string{
	InstructionIgnore, InstructionOverride, InstructionRoleTag, InstructionPromptTag,
	InstructionInvisible, InstructionExfilImage,
}

// DetectInstructions returns the places where text tries to instruct the
// model that will later read it as a recalled memory, ordered by offset.
// Findings of different types may overlap (a zero-width character inside
// "ignore previous instructions" is both); findings of one type do not. It
// runs in linear time and is safe for concurrent use.
//
// Phrases are matched on a folded copy of text (see fold): case-insensitive,
// white space collapsed, invisible characters removed, fullwidth and
// look-alike letters mapped to ASCII. Offsets are mapped back to text, so a
// finding spans the original bytes, zero-width characters included.
//
//   - ignore_instructions: ignore / disregard / forget / override / bypass /
//     "do not follow" … followed by previous, prior, above, earlier, system
//     … instructions, prompts, rules, guidelines …; "ignore everything
//     above", "forget everything you were told", "disregard your
//     programming", "ignore what you were told".
//   - role_override: "you are now" / "you are no longer" followed by an AI
//     role or a jailbreak word (not "you are now subscribed"); "new
//     instructions:"; requests to reveal, print or replace the system
//     prompt; "new system prompt"; "from now on, you will act …"; "developer
//     mode enabled"; "do anything now"; "act as an unrestricted …".
//   - role_tag: <system>, </system>, <assistant>, <developer> and their
//     -prompt/-message/-instructions variants, <|im_start|> and any other
//     <|special|> token, [INST], [/INST], <<SYS>>, "### System:" and similar
//     headings, and "system:", "assistant:" or "developer:" at the start of
//     a line.
//   - prompt_block_tag: <memories>, </memories>, <memory …>, </memory>: the
//     delimiters memgate's recall block uses.
//   - invisible_unicode: each run of tag characters (U+E0000–E007F),
//     zero-width characters (U+200B–200F, U+2060–2064, U+FEFF) and bidi
//     controls (U+202A–202E, U+2066–2069). Legitimate uses are spared: a
//     byte order mark at offset 0, a zero-width joiner inside an emoji
//     sequence, joiners and non-joiners between letters of scripts that
//     need them, LRM/RLM in text with right-to-left letters, and the tag
//     sequence of a subdivision flag emoji.
//   - data_exfil_image: a markdown or HTML image whose http(s) URL has a
//     query string, or a path segment or host label that looks like encoded
//     data (see dataLike: 32 bytes or more of letters and digits that is
//     neither a slug nor a hex hash, or several percent escapes); a markdown
//     link or reference whose query value, path segment or host label
//     carries such data (an ordinary ?utm_source=… link does not).
//     An image loads without a click, so its URL is how an injected prompt
//     sends data out.
//
// Ordinary text stays clean: "I ignored the previous email", "the system was
// down", "please remember my instructions for the cake", "you are now
// subscribed", an image without a query string.
func DetectInstructions(text string) []Finding {
	var hits []hit
	if hasInvisible(text) {
		hits = appendInvisible(text, hits)
	}
	f := fold(text, false)
	n := len(hits)
	hits = instructionRules.scan(f.s, 0, hits)
	if len(hits) > n {
		m := fold(text, true)
		for j := n; j < len(hits); j++ {
			h := &hits[j]
			h.Start, h.End = int(m.start[h.Start]), int(m.end[h.End-1])
		}
	}
	return resolve(hits, true)
}

// Each regular expression runs on folded text, anchored at its trigger.
var instructionRules = newRuleSet([]tokenRule{
	{
		typ: InstructionIgnore, wordStart: true, window: 256,
		triggers: []string{"ignore", "disregard", "forget", "override", "bypass", "neglect",
			"do not follow", "don't follow", "dont follow", "stop following", "pay no attention to"},
		re: regexp.MustCompile(`^(?:ignore|disregard|forget|override|bypass|neglect|do not follow|don'?t follow|stop following|pay no attention to)\s` +
			`(?:` +
			`(?:(?:all|any|each|every|the|your|these|those|of)\s){0,4}` +
			`(?:(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|system|developer|safety|hidden)\s(?:(?:and|or|&|/)\s)?){1,3}` +
			`(?:instructions?|prompts?|directions?|directives?|rules|guidelines|commands|constraints|guardrails|restrictions|programming|context|training|polic(?:y|ies))` +
			`|(?:all|everything|anything)(?:\s(?:of|that\sis|that\swas|written|stated|said))?(?:\sthe)?\s(?:above|before|previously|prior|earlier)` +
			`|(?:everything|all)\s(?:you\s(?:know|were\stold|have\sbeen\stold|learned|have\slearned)|(?:your|the)\s(?:instructions|training|programming))` +
			`|(?:your|all(?:\sof)?(?:\syour|\sthe)?)\s(?:instructions|guidelines|programming|training|directives|guardrails|system\sprompt)` +
			`|(?:what|whatever|anything)\syou\s(?:were|have\sbeen|'ve\sbeen)\s(?:told|instructed)` +
			`)\b`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 200,
		triggers: []string{"you are now", "you're now", "you are no longer", "you're no longer", "you are henceforth"},
		re: regexp.MustCompile(`^(?:you are|you're)\s(?:now|no longer|henceforth)\s(?:(?:a|an|the|my|in|called|named|acting as)\s)?` +
			`(?:(?:new|different|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free|unbound|unlimited|amoral)\s){0,2}` +
			`(?:ai|assistant|chatbot|bot|model|llm|language model|dan|jailbroken|unrestricted|unfiltered|uncensored|amoral|` +
			`developer mode|god mode|dan mode|bound by|restricted by|limited by|required to|obligated to|chatgpt|gpt|claude|gemini)\b`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 64,
		triggers: []string{"new", "updated", "revised", "real", "actual", "true", "hidden", "secret", "override"},
		re:       regexp.MustCompile(`^(?:new|updated|revised|real|actual|true|hidden|secret|override)\s(?:system\s)?(?:instructions?|prompt|directives?)\s?:`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 160,
		triggers: []string{"reveal", "print", "show", "output", "repeat", "leak", "dump", "override", "replace", "bypass",
			"ignore", "disregard", "forget", "change", "update", "display", "tell me"},
		re: regexp.MustCompile(`^(?:reveal|print|show|output|repeat|leak|dump|override|replace|bypass|ignore|disregard|forget|change|update|display|tell me)\s` +
			`(?:me\s)?(?:(?:the|your|this|that|all|of|its)\s){0,3}(?:(?:original|initial|hidden|secret|real|current|previous|full|entire|whole|exact)\s)?` +
			`(?:system\s(?:prompt|message|instructions)|initial\sprompt|hidden\sprompt|instructions\sabove)\b`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 64,
		triggers: []string{"new system prompt", "system prompt override", "system prompt:", "system prompt :"},
		re:       regexp.MustCompile(`^(?:new system prompt|system prompt override|system prompt\s?:)`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 96,
		triggers: []string{"from now on"},
		re:       regexp.MustCompile(`^from now on,?\s(?:you\s(?:are|will|must|should|shall)(?:\snow)?\s)?(?:act|behave|respond|answer|reply|ignore|pretend|obey|disregard)\b`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 64,
		triggers: []string{"developer mode", "dan mode", "god mode", "jailbreak mode", "do anything now"},
		re:       regexp.MustCompile(`^(?:(?:developer|dan|god|jailbreak)\smode\s(?:enabled|activated|on|engaged|unlocked)|do anything now)\b`),
	},
	{
		typ: InstructionOverride, wordStart: true, window: 96,
		triggers: []string{"act as", "pretend"},
		re: regexp.MustCompile(`^(?:act as|pretend\s(?:to be|you are|you're))\s(?:an?\s)?` +
			`(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|dan|(?:the\s)?system|(?:the\s)?developer)\b`),
	},
	{
		typ: InstructionRoleTag, triggers: []string{"<"}, window: 64,
		re: regexp.MustCompile(`^(?:<\s?/?\s?(?:system|sys|developer|assistant)(?:[_-](?:prompt|message|instructions?|reminder|note|override))?\s?>` +
			`|<\s?/?\s?(?:im_start|im_end|start_of_turn|end_of_turn)\s?>|<\|[a-z0-9_]{1,30}\|>)`),
	},
	{
		typ: InstructionRoleTag, triggers: []string{"[inst]", "[/inst]", "<<sys>>", "<</sys>>"}, window: 8,
		re: regexp.MustCompile(`^(?:\[/?inst\]|<</?sys>>)`),
	},
	{
		typ: InstructionRoleTag, triggers: []string{"##"}, window: 40,
		re: regexp.MustCompile(`^#{2,}\s?(?:system|instructions?|assistant|human|response|user)\s?:`),
	},
	{
		typ: InstructionRoleTag, triggers: []string{"system", "assistant", "developer"}, window: 16,
		re:    regexp.MustCompile(`^(?:system|assistant|developer)\s?:`),
		quick: func(hay string, i int) bool { return atLineStart(hay, i, 0) },
	},
	{
		typ: InstructionPromptTag, triggers: []string{"<"}, window: 280,
		re: regexp.MustCompile(`^<\s?/?\s?memor(?:y|ies)(?:\s[^<>]{0,})?\s?/?>`),
	},
	{
		typ: InstructionExfilImage, triggers: []string{"!["}, window: 2400,
		re:    regexp.MustCompile(`^!\[[^\]\n]{0,}\]\(\s?<?([^\s)>]{1,})`),
		check: 1,
		valid: func(text string, s, e int) bool { return urlCarriesData(text[s:e], true) },
	},
	{
		typ: InstructionExfilImage, triggers: []string{"<img"}, window: 2600,
		re:    regexp.MustCompile(`^<img\b[^>]{0,}?\ssrc\s?=\s?["']?([^\s"'>]{1,})`),
		check: 1,
		valid: func(text string, s, e int) bool { return urlCarriesData(text[s:e], true) },
	},
	{
		typ: InstructionExfilImage, triggers: []string{"](", "]:"}, window: 2100, group: 1,
		re:    regexp.MustCompile(`^\](?:\(|:)\s?<?([^\s)>]{1,})`),
		valid: func(text string, s, e int) bool { return urlCarriesData(text[s:e], false) },
	},
})

// atLineStart reports whether only spaces stand between the start of the
// line and s.
func atLineStart(text string, s, _ int) bool {
	i := s
	for i > 0 && text[i-1] == ' ' {
		i--
	}
	return i == 0 || text[i-1] == '\n'
}

// urlCarriesData reports whether a web URL can carry data to its server. For
// an image (fetched without a click) any query string counts; for a link
// only a query value, path segment or host label that looks like encoded
// data does.
func urlCarriesData(raw string, image bool) bool {
	l := strings.ToLower(raw)
	if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "//") {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil {
		// A URL Go cannot parse is not a URL a renderer will fetch cleanly;
		// judge its raw text.
		return image && strings.Contains(raw, "?")
	}
	if image && (u.RawQuery != "" || u.ForceQuery) {
		return true
	}
	for _, label := range strings.Split(u.Hostname(), ".") {
		if dataLike(label) {
			return true
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if dataLike(seg) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		_, v, _ := strings.Cut(part, "=")
		if dataLike(v) || len(v) >= 128 {
			return true
		}
	}
	return false
}

// dataLike reports whether s looks like encoded data rather than a word, a
// slug or a content hash. It must work on lower-cased text (the rules run on
// folded text), so it cannot count upper case: it wants 32 bytes or more
// with at least 3 digits and 8 letters, a letter beyond f (not hex), and few
// word separators (not a slug); or several percent escapes.
func dataLike(s string) bool {
	if len(s) < 32 {
		return false
	}
	if strings.Count(s, "%") >= 3 {
		return true
	}
	var digits, letters, seps int
	hex := true
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		switch {
		case isDigit(s[i]):
			digits++
		case c >= 'a' && c <= 'z':
			letters++
			if c > 'f' {
				hex = false
			}
		case s[i] == '-' || s[i] == '_' || s[i] == '.' || s[i] == '+':
			seps++
		}
	}
	return digits >= 3 && letters >= 8 && !hex && seps*10 <= len(s)
}

// appendInvisible adds one finding per run of hidden characters, sparing
// their legitimate uses (see DetectInstructions).
func appendInvisible(text string, hits []hit) []hit {
	rtl := -1 // whether text has right-to-left letters; computed on demand
	runStart, runEnd := -1, -1
	flush := func() {
		if runStart >= 0 {
			hits = append(hits, hit{Finding{Type: InstructionInvisible, Start: runStart, End: runEnd}, len(instructionRules.rules)})
			runStart = -1
		}
	}
	prev := rune(-1) // the last visible rune before i
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isInvisible(r) {
			flush()
			prev = r
			i += n
			continue
		}
		// The next visible rune after the run of invisible ones.
		next := rune(-1)
		for j := i + n; j < len(text); {
			q, m := utf8.DecodeRuneInString(text[j:])
			if !isInvisible(q) {
				next = q
				break
			}
			j += m
		}
		legit := false
		switch {
		case r == 0xFEFF && i == 0:
			legit = true
		case r == 0x200D: // zero width joiner
			legit = isEmojiPart(prev) && isEmojiPart(next) || isJoiningLetter(prev) && isJoiningLetter(next)
		case r == 0x200C: // zero width non-joiner
			legit = isJoiningLetter(prev) && isJoiningLetter(next)
		case r == 0x200B: // zero width space: a word break in scripts without spaces
			legit = isJoiningLetter(prev) && isJoiningLetter(next)
		case r == 0x200E || r == 0x200F: // LRM, RLM
			if rtl < 0 {
				rtl = 0
				if strings.IndexFunc(text, isRTL) >= 0 {
					rtl = 1
				}
			}
			legit = rtl == 1
		case r >= 0xE0020 && r <= 0xE007F && prev == 0x1F3F4:
			// A subdivision flag: black flag, up to 7 tag letters, cancel tag.
			j, k := i, 0
			for j < len(text) && k < 8 {
				q, m := utf8.DecodeRuneInString(text[j:])
				j += m
				k++
				if q == 0xE007F {
					legit = true
					break
				}
				if q < 0xE0020 || q > 0xE007E {
					break
				}
			}
			if legit {
				flush()
				i, prev = j, 0xE007F
				continue
			}
		}
		if legit {
			flush()
		} else {
			if runStart < 0 {
				runStart = i
			}
			runEnd = i + n
		}
		i += n
	}
	flush()
	return hits
}

// isEmojiPart reports whether r can sit beside a zero width joiner inside
// an emoji sequence.
func isEmojiPart(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r == 0xFE0F ||
		r >= 0x2190 && r <= 0x21FF || r >= 0x2B00 && r <= 0x2BFF || r == 0x2640 || r == 0x2642 ||
		unicode.Is(unicode.So, r)
}

// isJoiningLetter reports a non-Latin letter or mark: the scripts (Arabic,
// Persian, Indic, Thai, …) where joiners and zero width spaces are ordinary.
func isJoiningLetter(r rune) bool {
	return r >= 0x0370 && (unicode.IsLetter(r) || unicode.IsMark(r)) && !unicode.Is(unicode.Latin, r)
}

func isRTL(r rune) bool {
	return unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko)
}

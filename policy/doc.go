// Package policy holds memgate's write-gate rules and their configuration:
// which source may write which kind, the default time to live and retention
// cap of each kind, size limits, what to do with a secret or an
// instruction-like finding, and the dedup signature of content.
//
// Everything here is a pure function of its arguments and the Config: no
// store, no network, no clock, no logging. The only I/O is Load, which reads
// a policy file. The engine calls Config.Decide in the write gate after field
// validation and before anything is embedded or stored.
//
// It must never copy the text it scans into a result: a Finding is a type
// and byte offsets, a Decision's error names the reason and the finding
// types, and neither ever contains any part of a matched secret.
//
// # Default write rules
//
// An action per (source, kind). "allow" stores the memory active, "pending"
// holds it for approval (it is not recalled until approved), "reject" refuses
// it with a policy_violation error.
//
//	source          message  fact     preference  task     summary
//	user            allow    allow    allow       allow    allow
//	assistant       allow    pending  pending     allow    allow
//	tool            allow    pending  pending     allow    allow
//	verified_tool   allow    allow    allow       allow    allow
//	system          allow    allow    allow       allow    allow
//	import          allow    allow    allow       allow    allow
//
// An assistant or an unverified tool may record what happened (message), what
// it is doing (task) and a condensation (summary), but a claim about the
// person (fact, preference) waits for a human or a trusted source to approve
// it: that is where a hallucination or an injected instruction would do
// lasting harm. import is an operator's restore of an export and may write
// anything.
//
// # Default finding actions
//
//	finding        user     assistant  tool     verified_tool  system   import
//	secret         reject   reject     reject   reject         reject   reject
//	instruction    flag     pending    pending  pending        flag     pending
//
// "flag" stores the memory as the other rules say and records the reason
// code in Decision.Flags. A secret is refused from every source: once stored
// it would be embedded, indexed, exported and recalled into prompts.
// Instruction-like text from the person (user) or the operator (system) is
// theirs to keep, so it is only flagged; from anyone else it waits for
// approval, because recall would put it in front of a model.
//
// # Other defaults
//
//	kind         TTL      retention cap (active+pending per tenant, principal, agent, kind, source)
//	message      30 days  10000
//	task         7 days   1000
//	fact         none     unlimited
//	preference   none     unlimited
//	summary      none     1000
//
// Limits default to memgate's (content 8 KiB, metadata 4 KiB, reason 1 KiB)
// and dedup is on. See Default for the reasoning behind each number.
//
// # Order of Decide
//
// The (source, kind) rule first (a reject there ends the decision without
// scanning), then secret detection, then instruction detection, both over
// every free-text field: content, reason, the agent and conversation
// identifiers, and every metadata key and string value (numbers are read
// for secrets only; an identifier's separators are read as spaces). Each
// finding names its field (Finding.Field: "content", "agent",
// "metadata.note", "metadata[#0]" for a key …). The strictest action wins:
// reject over pending over flag over allow.
//
// # Normalization
//
// Both detectors read the text normalized once per field, so that what
// renders the same is judged the same (see normalize.go):
//
//   - NFKC (golang.org/x/text/unicode/norm): fullwidth, mathematical,
//     circled, superscript and halfwidth forms become the characters they
//     style;
//   - default ignorable code points removed (Default_Ignorable_Code_Point:
//     soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul
//     fillers, Mongolian vowel separator and free variation selectors,
//     zero-width characters, bidi controls, variation selectors, tag
//     characters, the byte order mark …);
//   - look-alike letters folded (after Unicode's confusables.txt): Cyrillic,
//     Greek, Armenian and Cherokee letters and Latin small capitals inside a
//     Latin word become Latin, Latin letters inside a Russian word become
//     Cyrillic; genuine Russian, Greek or Ukrainian words are left alone.
//
// The sentence rules then read a lower-case copy without Latin accents
// (nor Arabic vowel signs and tatweel), in
// which letters or syllables split by separators are joined ("i-g-n-o-r-e",
// "i.g.n.o.r.e", "i g n o r e", "ig-no-re") and leetspeak is read ("1gn0r3
// 4ll pr3v10u5"), only inside words that mix letters with digits, so
// "2024" and "5 apples" stay. Findings are mapped back to the original
// bytes, hidden characters included. ASCII text skips NFKC and the
// look-alike table entirely.
//
// The sentence rules know English, Spanish, French, German, Portuguese,
// Italian, Dutch, Russian, Chinese and Japanese, and the cue detector
// (cues.go) those and Korean, Arabic and Hindi (InstructionLanguages);
// tags, links, tool calls and hidden characters are found in any language,
// and base64, hex, rot13, reversed and emoji-separated text is decoded and
// scanned again (decode.go). The
// labelled corpus in testdata/corpus measures detection and false
// positives (TestCorpusRates).
package policy

package relate

// judgment is what Modifier, Temporal and CommonNoun say of one token.
type judgment struct {
	modifier, temporal, commonNoun bool
}

// judged keeps the judgments of the tokens asked most recently. Each is a
// function of the token and the built-in lexicon only, and every recall
// asks them of its query words: found (base forms, senses, tag counts,
// hypernyms) they cost about 5 µs a word, cached about 0.15 µs
// (BenchmarkJudge), and finding them was about half of the time a recall
// spent weighing its query's terms (issue 27, BENCHMARKS.md).
var judged wordCache[judgment]

// judge returns the token's judgments, found once while it stays cached.
func judge(token string) judgment { return judged.get(token, findJudgment) }

func findJudgment(token string) judgment {
	return judgment{modifier: isModifier(token), temporal: isTemporal(token), commonNoun: isCommonNoun(token)}
}

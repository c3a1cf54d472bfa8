package relate

import "sync"

// judgment is what Modifier, Temporal and CommonNoun say of one token.
type judgment struct {
	modifier, temporal, commonNoun bool
}

// judged keeps the judgments of the tokens asked most recently. Each is a
// function of the token and the built-in lexicon only, and every recall
// asks them of its query words: found (base forms, senses, tag counts,
// hypernyms) they cost about 5 µs a word, cached about 0.15 µs
// (BenchmarkJudge), and finding them was about half of the time a recall
// spent weighing its query's terms (issue 27, BENCHMARKS.md). Bounded as
// a Relater's cache is.
var judged = struct {
	sync.Mutex
	m map[string]judgment
}{m: map[string]judgment{}}

// judge returns the token's judgments, found once while it stays cached.
func judge(token string) judgment {
	judged.Lock()
	j, ok := judged.m[token]
	judged.Unlock()
	if ok {
		return j
	}
	j = judgment{modifier: isModifier(token), temporal: isTemporal(token), commonNoun: isCommonNoun(token)}
	judged.Lock()
	if len(judged.m) >= cacheSize {
		clear(judged.m) // simple and bounded; a hot word is judged again at once
	}
	judged.m[token] = j
	judged.Unlock()
	return j
}

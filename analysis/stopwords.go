package analysis

// stopwords are left out of Terms: function words (the Snowball English list,
// with contractions as the tokenizer spells them) that carry no topic. They
// are common in every text, so BM25 would give them little weight anyway;
// dropping them keeps postings short and keeps them out of the "fraction of
// the query matched" that rank uses.
var stopwords = makeSet(`
a about above after again against all am an and any are arent as at
be because been before being below between both but by
can cannot cant could couldnt
did didnt do does doesnt doing dont down during
each
few for from further
had hadnt has hasnt have havent having he her here hers herself him himself his how
i if in into is isnt it its itself
just
me more most mustnt my myself
no nor not now
of off on once only or other ought our ours ourselves out over own
same shant she should shouldnt so some such
than that the their theirs them themselves then there these they this those through to too
under until up us
very
was wasnt we were werent what when where which while who whom why will with wont would wouldnt
you your yours yourself yourselves
`)

// IsStopword reports whether the normalized token w is a stopword.
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

func isStopwordBytes(b []byte) bool {
	if len(b) > maxStopwordLen {
		return false
	}
	_, ok := stopwords[string(b)] // no allocation: the compiler elides the conversion
	return ok
}

var maxStopwordLen = func() int {
	n := 0
	for w := range stopwords {
		n = max(n, len(w))
	}
	return n
}()

func makeSet(words string) map[string]struct{} {
	m := make(map[string]struct{})
	for _, w := range Tokens(words) {
		m[w] = struct{}{}
	}
	return m
}

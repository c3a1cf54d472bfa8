package relate

import (
	"fmt"
	"sync"
	"testing"
)

// judgeWords hold every judgment both ways: modifiers ("speak", "quickly"),
// times ("afternoon", "monday"), common nouns ("budget", "dog"), names
// ("caroline") and a word the lexicon does not know.
var judgeWords = []string{"speak", "quickly", "drink", "afternoon", "monday", "week", "budget", "dog", "plan",
	"birthday", "tea", "cello", "caroline", "jon", "zqxjv"}

// TestJudgeIsUncached: Modifier, Temporal and CommonNoun, asked first and
// then from the cache (and after the cache was cleared), say what the
// lexicon says of each word; the words hold each judgment true of some and
// false of others, so a judgment cached under another's name fails.
func TestJudgeIsUncached(t *testing.T) {
	seen := map[judgment]bool{}
	for round := range 3 {
		if round == 2 {
			judged.reset()
		}
		for _, w := range judgeWords {
			want := judgment{modifier: isModifier(w), temporal: isTemporal(w), commonNoun: isCommonNoun(w)}
			got := judgment{modifier: Modifier(w), temporal: Temporal(w), commonNoun: CommonNoun(w)}
			if got != want {
				t.Fatalf("round %d, %q: judged %+v, the lexicon says %+v", round, w, got, want)
			}
			seen[judgment{modifier: want.modifier}] = true
			seen[judgment{temporal: want.temporal}] = true
			seen[judgment{commonNoun: want.commonNoun}] = true
		}
	}
	for _, j := range []judgment{{modifier: true}, {temporal: true}, {commonNoun: true}} {
		if !seen[j] {
			t.Fatalf("no word of the test is %+v: the test needs one", j)
		}
	}
	if !seen[judgment{}] {
		t.Fatal("no word is judged false: the test needs some")
	}
}

// TestJudgeBounded: the cache never holds more than cacheSize tokens, and
// goroutines judging at once agree (run with -race).
func TestJudgeBounded(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range cacheSize/2 + 100 {
				w := fmt.Sprintf("w%d_%d", g, i)
				if Modifier(w) || Temporal(w) || CommonNoun(w) {
					t.Errorf("%q, a word no lexicon has, judged true", w)
					return
				}
				if !Temporal("afternoon") {
					t.Error(`"afternoon" not a time`)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := judged.len(); n > cacheSize || n == 0 {
		t.Fatalf("the cache holds %d tokens, bound %d", n, cacheSize)
	}
}

// BenchmarkJudge is the three judgments of one query word, from the cache
// and found afresh.
func BenchmarkJudge(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    func(string) bool
	}{
		{"cached", func(w string) bool { return Modifier(w) || Temporal(w) || CommonNoun(w) }},
		{"found", func(w string) bool { return isModifier(w) || isTemporal(w) || isCommonNoun(w) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				bc.f(judgeWords[i%len(judgeWords)])
				i++
			}
		})
	}
}

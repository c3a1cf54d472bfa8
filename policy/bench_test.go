package policy

import (
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

const benchSize = 8 << 10 // memgate.DefaultMaxContentBytes

// fill repeats s up to n bytes, cut on a rune boundary.
func fill(s string, n int) string {
	t := strings.Repeat(s, n/len(s)+1)[:n]
	return strings.ToValidUTF8(t, "")
}

var benchTexts = map[string]string{
	// Ordinary English with digits, dates, dots and a few trigger words.
	"prose": fill("On 2024-05-12 Alice asked the assistant to book a table for 4 at 19:30; "+
		"she passed the token of thanks to Bob, who said the system was down. Order #112-2345678 "+
		"ships Monday. Call +1 (415) 555-2671. The author: J. Austen, p. 42. ", benchSize),
	// Every trigger of every detector, over and over: the worst case the
	// window design has to bound.
	"adversarial": fill("password: secret token=auth AKIA ghp_ sk- SK SG. eyJ. xox -----BEGIN "+
		"4111 1111 1111 123-45-6789 AB 12 34 56 GB82 :// ![x](http://a?b) <system> ignore previous "+
		"you are now new system prompt from now on ## system: \u200b ", benchSize),
	// Dense digits: the numeric scanners' worst case.
	"digits": fill("4111 1111 1111 1112 5555-5555-5555-4445 123-45-678 GB82 WEST 1234 ", benchSize),
	// Non-ASCII text: the folding path.
	"unicode": fill("Ｆｕｌｌｗｉｄｔｈ текст ελληνικά 日本語のテキスト שלום مرحبا ", benchSize),
	// Ordinary text in the other languages of InstructionLanguages, with
	// accents: NFKC's quick check passes, the phrase view drops accents.
	"multilingual": fill("Él olvidó las instrucciones del horno. Elle a envoyé les photos à mamie. "+
		"Er hat die Anweisungen des Arztes befolgt. Она забыла зонтик. 他忘记了明天的会议。 傘を忘れてしまった。 ", benchSize),
	// Every evasion the normalization undoes, over and over.
	"evasions": fill("i-g-n-o-r-e 1gn0r3 Іgnоrе ig­nore ＩＧＮＯＲＥ 𝐈𝐠𝐧 i g n o r e ab-ab-ab vce "+
		"pre​vious a.b.c 5 apples 2024 ", benchSize),
}

// benchNames orders benchTexts; the first four are the ones measured
// before normalization was added (policy/RESULTS.md compares them).
var benchNames = []string{"prose", "adversarial", "digits", "unicode", "multilingual", "evasions"}

func BenchmarkDetectSecrets(b *testing.B) {
	for _, name := range benchNames {
		text := benchTexts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				DetectSecrets(text)
			}
		})
	}
}

func BenchmarkDetectInstructions(b *testing.B) {
	for _, name := range benchNames {
		text := benchTexts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				DetectInstructions(text)
			}
		})
	}
}

func BenchmarkDecide(b *testing.B) {
	cfg := Default()
	short := mem(memgate.SourceTool, memgate.KindMessage, "Weather in Paris: 18°C, cloudy, wind 12 km/h from the west.")
	// About 200 bytes, the size the embedder's cost is quoted for: the
	// gate's cost per ordinary memory.
	typical := mem(memgate.SourceAssistant, memgate.KindFact, "Caroline went to the LGBTQ support group on 7 May 2023 "+
		"and told Melanie it gave her the courage to apply for the counselling course; she starts in September and wants "+
		"to volunteer.")
	long := mem(memgate.SourceTool, memgate.KindMessage, benchTexts["prose"])
	long.Reason = "tool result"
	long.Metadata = map[string]any{"url": "https://example.com/weather", "status": 200.0, "tags": []any{"weather", "paris"}}
	for _, bc := range []struct {
		name string
		m    *memgate.Memory
	}{{"short", short}, {"200B", typical}, {"8KiB", long}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.m.Content)))
			b.ReportAllocs()
			for b.Loop() {
				cfg.Decide(bc.m)
			}
		})
	}
}

func BenchmarkSignature(b *testing.B) {
	text := benchTexts["prose"]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Signature(text)
	}
}

package serveout

import (
	"bytes"
	"strings"
	"testing"
)

// TestScan reads back what Run prints: the key on a first start, none
// on a later one, and no banner when the output ends before serving.
func TestScan(t *testing.T) {
	var first bytes.Buffer
	PrintAdminKey(&first, "default", "mgk_secret")
	PrintServing(&first, "127.0.0.1:7070")
	first.WriteString("memgate: serving on http://elsewhere\n") // only the first counts

	var got []Banner
	if !Scan(&first, func(b Banner) { got = append(got, b) }) {
		t.Fatal("Scan: no banner in a first start's output")
	}
	if len(got) != 1 || got[0] != (Banner{URL: "http://127.0.0.1:7070", Key: "mgk_secret"}) {
		t.Fatalf("first start: %+v", got)
	}

	var later bytes.Buffer
	PrintServing(&later, "127.0.0.1:7071")
	got = nil
	if !Scan(&later, func(b Banner) { got = append(got, b) }) || len(got) != 1 || got[0] != (Banner{URL: "http://127.0.0.1:7071"}) {
		t.Fatalf("later start: %+v", got)
	}

	var died bytes.Buffer
	PrintAdminKey(&died, "default", "mgk_secret")
	if Scan(strings.NewReader(died.String()), func(b Banner) { t.Fatalf("started: %+v", b) }) {
		t.Fatal("Scan reported a start for output without the serving line")
	}
}

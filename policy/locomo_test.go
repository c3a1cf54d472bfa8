package policy

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memgate/memgate"
)

// maxLoCoMoFalsePositives is the most of LoCoMo's dev facts and turns the
// gate may find anything in (TestLoCoMoOrdinary): ordinary conversation
// between two people, every line of which must pass as ordinary.
const maxLoCoMoFalsePositives = 0.01

// TestLoCoMoOrdinary runs the write gate on every fact and turn of the
// LoCoMo dev conversations (bench/locomo: facts.jsonl and memories.jsonl)
// as they are imported, all their fields included, and counts those in
// which either detector finds anything. It fails above 1 %; go test -v
// prints the rate and names the lines by number, never their text.
func TestLoCoMoOrdinary(t *testing.T) {
	t.Parallel()
	cfg := Default()
	for _, name := range locomoFiles {
		var n, flagged int
		for i, m := range locomoMemories(t, name) {
			n++
			if d := cfg.Decide(m); len(d.Findings) > 0 {
				flagged++
				var types []string
				for _, f := range d.Findings {
					types = append(types, f.Field+":"+f.Type)
				}
				t.Logf("%s:%d flagged: %v", name, i+1, types)
			}
		}
		rate := float64(flagged) / float64(n)
		t.Logf("%s: %d of %d flagged = %.2f%%", name, flagged, n, 100*rate)
		if n < 900 {
			t.Errorf("%s: only %d lines", name, n)
		}
		if rate > maxLoCoMoFalsePositives {
			t.Errorf("%s: %.4f of lines flagged > %.2f", name, rate, maxLoCoMoFalsePositives)
		}
	}
}

// locomoFiles are LoCoMo's dev facts and turns (bench/locomo).
var locomoFiles = []string{"facts.jsonl", "memories.jsonl"}

// locomoMemories reads one of locomoFiles as memories, as they are
// imported: all their fields, stated by the user.
func locomoMemories(t *testing.T, name string) []*memgate.Memory {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "bench", "locomo", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []*memgate.Memory
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Conversation string         `json:"conversation"`
			Kind         memgate.Kind   `json:"kind"`
			Content      string         `json:"content"`
			Metadata     map[string]any `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		out = append(out, &memgate.Memory{Source: memgate.SourceUser, Kind: rec.Kind, Content: rec.Content, Conversation: rec.Conversation, Metadata: rec.Metadata})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

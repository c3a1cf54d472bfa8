package wordvec_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

func TestEmbeddedNeighborsMatchTheirChecksum(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("neighbors.sha256")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("neighbors.bin")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(want)) {
		t.Fatalf("neighbors.bin has sha256 %s, neighbors.sha256 says %s (run genneighbors after changing table.bin)", got, want)
	}
}

// The embedded neighbours are what a scan of the table finds, for a spread
// of words, to the quantization of their cosines.
func TestNeighborsAreTheNearestWords(t *testing.T) {
	t.Parallel()
	tb := wordvec.Default()
	for i := 0; i < tb.Len(); i += 997 {
		want := tb.Nearest(i, wordvec.NeighborsK, wordvec.NeighborsMin)
		got := tb.Neighbors(i, wordvec.NeighborsK, 0)
		if len(got) != len(want) {
			t.Fatalf("%s: %d neighbours, a scan finds %d", tb.Word(i), len(got), len(want))
		}
		for j := range got {
			if math.Abs(got[j].Cosine-want[j].Cosine) > 1.0/255 {
				t.Fatalf("%s: neighbour %d cosine %.3f, a scan finds %.3f", tb.Word(i), j, got[j].Cosine, want[j].Cosine)
			}
		}
	}
	i, _ := tb.Lookup("car")
	found := false
	for _, n := range tb.Neighbors(i, 10, 0.6) {
		found = found || tb.Word(n.Word) == "vehicle"
		if n.Cosine < 0.6 {
			t.Errorf("car's neighbour %s at %.3f, below the minimum asked", tb.Word(n.Word), n.Cosine)
		}
	}
	if !found {
		t.Error("vehicle is not among car's ten nearest words")
	}
}

package wordvec_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

// The embedded table is the one scripts/gen-wordvec made and checked.
func TestEmbeddedTableMatchesItsChecksum(t *testing.T) {
	want, err := os.ReadFile("table.sha256")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("table.bin")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(want)) {
		t.Fatalf("table.bin has sha256 %s, table.sha256 says %s", got, want)
	}
	tb := wordvec.Default()
	if tb.Len() != wordvec.DefaultWords {
		t.Fatalf("%d words, want %d", tb.Len(), wordvec.DefaultWords)
	}
	if !bytes.Equal(tb.Encode(), b) {
		t.Fatal("decoding and encoding the table changes it")
	}
}

func cos(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// Words related by meaning are closer than unrelated ones: the table holds
// real word vectors, in frequency order, without stopwords.
func TestTableRelatesWordsByMeaning(t *testing.T) {
	tb := wordvec.Default()
	vec := func(w string) []float32 {
		t.Helper()
		i, ok := tb.Lookup(w)
		if !ok {
			t.Fatalf("%q is not in the table", w)
		}
		return tb.Vector(i)
	}
	for _, c := range []struct{ a, near, far string }{
		{"tea", "coffee", "parliament"},
		{"car", "vehicle", "poem"},
		{"doctor", "nurse", "guitar"},
		{"violin", "cello", "mortgage"},
		{"beverages", "drinks", "earthquake"},
	} {
		if n, f := cos(vec(c.a), vec(c.near)), cos(vec(c.a), vec(c.far)); !(n > f+0.2) {
			t.Errorf("cos(%s, %s) = %.2f is not well above cos(%s, %s) = %.2f", c.a, c.near, n, c.a, c.far, f)
		}
	}
	for _, w := range []string{"the", "and", "of", "x"} {
		if _, ok := tb.Lookup(w); ok {
			t.Errorf("%q (a stopword or a single letter) is in the table", w)
		}
	}
	if i, _ := tb.Lookup("city"); i > 200 {
		t.Errorf("city has rank %d: the table is not in frequency order", i)
	}
}

func TestDecodeRefusesCorruptTables(t *testing.T) {
	good := wordvec.Quantize([]string{"tea", "coffee"}, [][]float64{make([]float64, wordvec.Dim), make([]float64, wordvec.Dim)}).Encode()
	if _, err := wordvec.Decode(good); err != nil {
		t.Fatalf("a valid table: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXX"), good[4:]...),
		"truncated": good[:len(good)-1],
		"longer":    append(append([]byte{}, good...), 0),
	} {
		if _, err := wordvec.Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

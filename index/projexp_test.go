package index

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/internal/zipfcorpus"
)

// BenchmarkProjSurvivors measures the candidate "projected first pass"
// without building it: the top d principal directions of 4,096 sample
// directions, each row's projection quantized (int8, or 4-bit with
// -bits 4 rows), its residual norm, and per query the rows whose upper
// bound reaches the k-th largest lower bound (those the exact stage would
// then read). Float64 throughout; the query's projection is not quantized.
// The "full" runs bound the whole vector's 4-bit (or int8) codes instead,
// with no projection: a first pass of half (or all) the scan's bytes.
//
// Three distributions: "lowrank" and "topics" at 100k, and "builtin" at
// 10k: the built-in embedder's vectors of bench/speed's end-to-end corpus
// (Zipf-distributed words), with its queries (a stored text's first six
// words).
//
//	go test ./index -run '^$' -bench ProjSurvivors -benchtime 1x
func BenchmarkProjSurvivors(b *testing.B) {
	const nq, k = 20, 10
	for _, dist := range []string{"lowrank", "topics", "builtin"} {
		n := 100000
		var data, queries [][]float32
		if dist == "builtin" {
			n = 10000
			data, queries = builtinCorpus(b, n, nq)
		} else if dist == "topics" {
			c := corpus(n)
			for _, e := range c.entries {
				data = append(data, e.Vector)
			}
			for _, q := range c.queries[:nq] {
				queries = append(queries, q.Vector)
			}
		} else {
			data, queries = lowRankCorpus(n, nq)
		}
		dim := len(data[0])
		const m = 4096
		sample := make([]float32, 0, m*dim)
		for i := range m {
			v := data[i*n/m]
			nv := norm64(v)
			for _, x := range v {
				sample = append(sample, float32(float64(x)/nv))
			}
		}
		start := time.Now()
		cm := secondMoment(sample, dim)
		tm := time.Since(start)
		for _, bits := range []int{4, 8} {
			b.Run(fmt.Sprintf("%s/full/bits=%d", dist, bits), func(b *testing.B) {
				var survivors float64
				for range b.N {
					survivors = fullPassSurvivors(data, queries, k, bits)
				}
				b.ReportMetric(survivors, "survivors/query")
			})
		}
		basis, vals := topEigen(cm, dim, 96, 20)
		te := time.Since(start) - tm
		b.Logf("%s: second moment %v, eigen %v; eigenvalues %.4f %.4f %.4f %.4f %.4f", dist, tm, te, vals[0], vals[31], vals[63], vals[64], vals[95])
		for _, d := range []int{32, 64, 96} {
			for _, bits := range []int{8, 4} {
				b.Run(fmt.Sprintf("%s/d=%d/bits=%d", dist, d, bits), func(b *testing.B) {
					cmax := 127.0
					if bits == 4 {
						cmax = 7
					}
					codes := make([]float64, n*d)
					scale := make([]float64, n)
					ep := make([]float64, n)
					ru := make([]float64, n)
					var meanR float64
					y := make([]float64, d)
					for i, v := range data {
						nv := norm64(v)
						var y2, maxAbs float64
						for j := range d {
							var s float64
							for t, x := range v {
								s += basis[j*dim+t] * float64(x)
							}
							y[j] = s / nv
							y2 += y[j] * y[j]
							maxAbs = max(maxAbs, math.Abs(y[j]))
						}
						s := maxAbs / cmax
						var e2 float64
						for j := range d {
							c := math.Round(y[j] / s)
							codes[i*d+j] = c
							e2 += (y[j] - s*c) * (y[j] - s*c)
						}
						scale[i], ep[i] = s, math.Sqrt(e2)
						ru[i] = math.Sqrt(max(0, 1-y2))
						meanR += ru[i]
					}
					meanR /= float64(n)
					lo := make([]float64, n)
					hi := make([]float64, n)
					var survivors, exact float64
					for range b.N {
						survivors, exact = 0, 0
						for _, q := range queries {
							nq := norm64(q)
							qz := make([]float64, d)
							var z2 float64
							for j := range d {
								var s float64
								for t, x := range q {
									s += basis[j*dim+t] * float64(x)
								}
								qz[j] = s / nq
								z2 += qz[j] * qz[j]
							}
							rq := math.Sqrt(max(0, 1-z2))
							zn := math.Sqrt(z2)
							for i := range n {
								var dd float64
								for j, c := range codes[i*d : (i+1)*d] {
									dd += qz[j] * c
								}
								a := scale[i] * dd
								e := zn*ep[i] + rq*ru[i]
								lo[i], hi[i] = a-e, a+e
							}
							sorted := slices.Clone(lo)
							slices.Sort(sorted)
							tau := sorted[n-k]
							// The exact k-th cosine, to see how far τ is.
							cs := make([]float64, n)
							for i, v := range data {
								cs[i] = float64(Cosine(q, v))
							}
							slices.Sort(cs)
							for _, h := range hi {
								if h >= tau {
									survivors++
								}
								if h >= cs[n-k] {
									exact++ // survivors had τ been the true k-th cosine
								}
							}
						}
					}
					b.ReportMetric(survivors/nq, "survivors/query")
					b.ReportMetric(exact/nq, "ideal-survivors/query")
					b.ReportMetric(meanR, "mean-resid")
				})
			}
		}
	}
}

// fullPassSurvivors returns the mean number of rows a first pass over the
// whole vectors' bits-bit codes (per row: scale maxAbs/cmax, rounded codes,
// e the norm of the quantization error, all of the unit vector) cannot
// drop for the top k of each query: rows whose upper bound a + e reaches
// τ, the k-th largest lower bound a − e, a the dot of the unit query with
// the decoded row. The query is not quantized.
func fullPassSurvivors(data, queries [][]float32, k, bits int) float64 {
	cmax := float64(int(1)<<(bits-1) - 1)
	n, dim := len(data), len(data[0])
	dec := make([]float64, n*dim)
	e := make([]float64, n)
	for i, v := range data {
		nv := norm64(v)
		var maxAbs float64
		for _, x := range v {
			maxAbs = max(maxAbs, math.Abs(float64(x))/nv)
		}
		s := maxAbs / cmax
		var e2 float64
		for j, x := range v {
			y := float64(x) / nv
			d := s * math.Round(y/s)
			dec[i*dim+j] = d
			e2 += (y - d) * (y - d)
		}
		e[i] = math.Sqrt(e2)
	}
	lo, hi := make([]float64, n), make([]float64, n)
	var survivors float64
	for _, q := range queries {
		nq := norm64(q)
		for i := range n {
			var a float64
			for j, x := range q {
				a += float64(x) / nq * dec[i*dim+j]
			}
			lo[i], hi[i] = a-e[i], a+e[i]
		}
		tau := slices.Clone(lo)
		slices.Sort(tau)
		for _, h := range hi {
			if h >= tau[n-k] {
				survivors++
			}
		}
	}
	return survivors / float64(len(queries))
}

// builtinCorpus returns the built-in embedder's vectors of bench/speed's
// end-to-end corpus of n texts and of nq of its queries (package
// zipfcorpus).
func builtinCorpus(b *testing.B, n, nq int) (data, queries [][]float32) {
	texts := zipfcorpus.Texts(n, 1)
	emb := builtin.New()
	embed := func(ts []string) [][]float32 {
		es, err := emb.Embed(b.Context(), ts)
		if err != nil {
			b.Fatal(err)
		}
		out := make([][]float32, len(es))
		for i, e := range es {
			out[i] = e.Vector
		}
		return out
	}
	return embed(texts), embed(zipfcorpus.Queries(texts, nq))
}

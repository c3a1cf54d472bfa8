package index

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// BenchmarkProjSurvivors measures the candidate "projected first pass"
// without building it: the top d principal directions of 4,096 sample
// directions, each row's projection quantized (int8, or 4-bit with
// -bits 4 rows), its residual norm, and per query the rows whose upper
// bound reaches the k-th largest lower bound (those the exact stage would
// then read). Float64 throughout; the query's projection is not quantized.
//
//	go test ./index -run '^$' -bench ProjSurvivors -benchtime 1x
func BenchmarkProjSurvivors(b *testing.B) {
	const n, nq, k = 100000, 20, 10
	for _, dist := range []string{"lowrank", "topics"} {
		var data, queries [][]float32
		if dist == "topics" {
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
					meanR /= n
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

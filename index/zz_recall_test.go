package index

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

func TestZZRecall(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	n := 100000
	const dim = 384
	r := rand.New(rand.NewPCG(7, 7))
	gens := map[string]func() []float32{}
	topics := make([][]float32, 2000)
	for i := range topics {
		topics[i] = gaussVec(r, dim)
	}
	gens["topics2000"] = func() []float32 {
		tp := topics[r.IntN(len(topics))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = tp[j] + float32(1.2*r.NormFloat64())
		}
		return v
	}
	const lat = 64
	A := make([]float32, dim*lat)
	for i := range A {
		A[i] = float32(r.NormFloat64())
	}
	gens["lowrank64"] = func() []float32 {
		z := make([]float64, lat)
		for i := range z {
			z[i] = r.NormFloat64()
		}
		v := make([]float32, dim)
		for j := range v {
			var s float64
			for i := range z {
				s += float64(A[j*lat+i]) * z[i]
			}
			v[j] = float32(s + 2*r.NormFloat64())
		}
		return v
	}
	for name, g := range gens {
		es := make([]Entry, n)
		for i := range es {
			es[i] = Entry{ID: fmt.Sprintf("%07d", i), Vector: g(), Status: memgate.StatusActive}
		}
		start := time.Now()
		ap := buildPartition(t, Config{}, es)
		tb := time.Since(start)
		ex := buildPartition(t, Config{ApproxMinRows: -1}, es)
		var rec float64
		var ta, te time.Duration
		const nq = 200
		for range nq {
			q := Query{Vector: g(), K: 10, Filter: Filter{Now: now}}
			s := time.Now()
			got, err := ap.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			ta += time.Since(s)
			s = time.Now()
			want, _ := ex.Search(q)
			te += time.Since(s)
			rec += recallAt(got, want)
		}
		lists, probes := 0, 0
		if ap.ivf != nil {
			lists, probes = ap.ivf.nlist, ap.ivf.probes
		}
		t.Logf("%s: recall %.4f approx %v exact %v build %v lists %d probes %d", name, rec/nq, ta/nq, te/nq, tb, lists, probes)
	}
}

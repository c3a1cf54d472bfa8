package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// lowRankGen draws x = A·z + σ·N(0, I) with z in latent dimensions (A fixed
// per generator): the distribution the projected pass is for.
func lowRankGen(r *rand.Rand, dim, latent int, sigma float64) vecGen {
	a := make([]float64, dim*latent)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	z := make([]float64, latent)
	return func(r *rand.Rand, dim, i int) []float32 {
		for j := range z {
			z[j] = r.NormFloat64()
		}
		v := make([]float32, dim)
		for j := range v {
			var s float64
			for l, x := range z {
				s += a[j*latent+l] * x
			}
			v[j] = float32(s + sigma*r.NormFloat64())
		}
		return v
	}
}

// TestTopEigen holds the solver to a matrix with known eigenvectors: the
// basis is orthonormal and spans the leading eigenvectors.
func TestTopEigen(t *testing.T) {
	t.Parallel()
	const dim, d = 96, 32
	r := newRand(3)
	// C = V·diag(λ)·Vᵀ with V a random orthonormal basis, λ decaying.
	v := make([]float64, dim*dim)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	orthonormalize(v, dim)
	lambda := make([]float64, dim)
	for i := range lambda {
		lambda[i] = math.Pow(0.8, float64(i))
	}
	c := make([]float64, dim*dim)
	for k := range dim {
		vk := v[k*dim : (k+1)*dim]
		for i := range dim {
			for j := range dim {
				c[i*dim+j] += lambda[k] * vk[i] * vk[j]
			}
		}
	}
	basis, vals := topEigen(c, dim, d, 60)
	for i := range d {
		if math.Abs(vals[i]-lambda[i]) > 1e-6 {
			t.Fatalf("eigenvalue %d = %v, want %v", i, vals[i], lambda[i])
		}
		bi := basis[i*dim : (i+1)*dim]
		for j := range d {
			g := dotF64(bi, basis[j*dim:(j+1)*dim])
			if i == j {
				g--
			}
			if math.Abs(g) > 1e-12 {
				t.Fatalf("basis not orthonormal: ⟨b%d, b%d⟩ off by %v", i, j, g)
			}
		}
		// |⟨bᵢ, vᵢ⟩| = 1: the same direction.
		if x := math.Abs(dotF64(bi, v[i*dim:(i+1)*dim])); math.Abs(x-1) > 1e-6 {
			t.Fatalf("basis vector %d: |⟨b, v⟩| = %v", i, x)
		}
	}
}

// TestProjMask holds every SIMD bound check the CPU runs to the Go loop's,
// on random and extreme blocks.
func TestProjMask(t *testing.T) {
	if projMask == nil {
		needSIMD(t, "SIMD projMask")
	}
	t.Parallel()
	r := newRand(8)
	for it := range 2000 {
		n := 64 * (1 + r.IntN(4))
		d := make([]int32, n)
		scale := make([]float32, n)
		resid := make([]float32, n)
		for i := range n {
			d[i] = int32(r.IntN(1<<24) - 1<<23)
			scale[i] = float32(r.Float64() * 0.01)
			resid[i] = float32(r.Float64())
			if it%5 == 0 && i%3 == 0 {
				scale[i], d[i] = 0, 0
			}
		}
		tt, alpha, beta, gamma := r.Float64()*1e-4, r.Float64(), r.Float64(), r.Float64()*1e-3
		tau := r.NormFloat64()
		if it%7 == 0 {
			tau = math.Inf(-1)
		}
		// A τ equal to some row's bound: ties must be kept.
		if it%3 == 0 {
			i := r.IntN(n)
			s := float64(scale[i])
			a := float64(s*tt) * float64(d[i])
			tau = a + (float64(float64(s*alpha)+float64(float64(resid[i])*beta)) + gamma)
		}
		want := make([]uint64, n/64)
		projMaskGeneric(d, scale, resid, tt, alpha, beta, gamma, tau, want)
		for _, m := range projMasks {
			got := make([]uint64, n/64)
			m.fn(d, scale, resid, tt, alpha, beta, gamma, tau, got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s, iteration %d: mask %x, want %x", m.name, it, got, want)
			}
		}
	}
}

// checkProj checks the projection's invariants: a row for every row of the
// partition, each the projection of the row's vector as stored, and the
// running sum of the residuals.
func checkProj(t *testing.T, p *Partition) {
	t.Helper()
	pj := p.proj
	if pj == nil {
		return
	}
	if pj.rows != p.rows {
		t.Fatalf("projection has %d rows, partition %d", pj.rows, p.rows)
	}
	codes := make([]int8, pj.d)
	y, lanes := make([]float64, pj.d), make([]float64, 4*pj.d)
	var sum float64
	for r := range p.rows {
		c, i := pj.row(r)
		s, ru := pj.project(p.vec(r), p.normOf(r), codes, y, lanes)
		stored := make([]int8, pj.d)
		c.getCodes(i, pj.d, stored)
		if s != c.scale[i] || ru != c.resid[i] || !slices.Equal(codes, stored) {
			t.Fatalf("row %d: projection stale", r)
		}
		sum += float64(ru)
	}
	if math.Abs(sum-pj.residSum) > 1e-6*float64(p.rows+1) {
		t.Fatalf("residual sum %v, want %v", pj.residSum, sum)
	}
}

var debugProj func(t *testing.T, p *Partition, q Query)

// TestProjExact holds the projected pass to the brute-force float64 top k
// on adversarial data: low-rank rows and queries, queries and rows outside
// the learnt subspace, rows exactly in it (zero residual), exact
// duplicates (ties broken by ID), near-ties, random filters, and upserts
// and removals after the projection was learnt. The projection is forced
// on (projectForce), so every search of a trained partition takes it.
func TestProjExact(t *testing.T) {
	t.Parallel()
	const dim = 128
	for _, dist := range []string{"lowrank", "lowrank-noiseless", "gaussian", "duplicates", "near-ties", "clustered"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			r := newRand(uint64(len(dist)))
			var gen vecGen
			switch dist {
			case "lowrank":
				gen = lowRankGen(r, dim, 24, 1)
			case "lowrank-noiseless": // every row in a 24-dimensional subspace
				gen = lowRankGen(r, dim, 24, 0)
			default:
				gen = distributions[dist](r, dim)
			}
			p := NewPartition(Config{ApproxMinRows: -1, ProjectMinRows: 600, projectForce: true, ParallelMinRows: 256})
			live := map[string]Entry{}
			var order []string
			known := map[string]bool{}
			upsert := func(e Entry) {
				if err := p.Upsert(e); err != nil {
					t.Fatal(err)
				}
				if !known[e.ID] {
					known[e.ID] = true
					order = append(order, e.ID)
				}
				live[e.ID] = e
			}
			for i := range 900 {
				e := randomEntry(r, i, gen(r, dim, i), false)
				e.ID = fmt.Sprintf("m%04d", i)
				upsert(e)
			}
			p.Settle()
			if p.proj == nil {
				t.Fatal("no projection learnt")
			}
			checkProj(t, p)
			pj := p.proj
			// Rows exactly in the learnt subspace (basis rows and their
			// negations, several times: ties), and rows orthogonal to it.
			out := func() []float32 {
				v := gaussVec(r, dim)
				w := make([]float64, dim)
				for j, x := range v {
					w[j] = float64(x)
				}
				for i := range pj.d {
					b := pj.basis[i*dim : (i+1)*dim]
					var s float64
					for j, x := range b {
						s += float64(x) * w[j]
					}
					for j, x := range b {
						w[j] -= s * float64(x)
					}
				}
				for j := range v {
					v[j] = float32(w[j])
				}
				return v
			}
			for i := range 30 {
				var v []float32
				switch i % 3 {
				case 0:
					v = slices.Clone(pj.basis[(i%pj.d)*dim : (i%pj.d+1)*dim])
				case 1:
					v = slices.Clone(pj.basis[0:dim])
					for j := range v {
						v[j] = -v[j]
					}
				default:
					v = out()
				}
				e := randomEntry(r, 900+i, v, false)
				e.ID = fmt.Sprintf("x%03d", i)
				upsert(e)
			}
			check := func(label string, n int) {
				entries := make([]Entry, 0, len(live))
				for _, id := range order {
					if e, ok := live[id]; ok {
						entries = append(entries, e)
					}
				}
				for i := range n {
					var qv []float32
					switch i % 5 {
					case 0:
						qv = gen(r, dim, -1)
					case 1: // a row: itself and its duplicates tie at the top
						qv = slices.Clone(entries[r.IntN(len(entries))].Vector)
					case 2:
						qv = out()
					case 3:
						qv = slices.Clone(pj.basis[0:dim])
					default:
						qv = gaussVec(r, dim)
					}
					q := Query{Vector: qv, K: 1 + r.IntN(20)}
					if i%2 == 0 {
						q.Filter = randomFilter(r)
					} else {
						q.Filter = Filter{Now: now}
					}
					res, err := p.Search(q)
					if err != nil {
						t.Fatal(err)
					}
					if debugProj != nil {
						debugProj(t, p, q) // nolint
					}
					checkResult(t, fmt.Sprintf("%s %s query %d", dist, label, i), entries, q, res)
				}
			}
			check("trained", 60)
			// Updates and removals after training.
			for i := range 400 {
				id := order[r.IntN(len(order))]
				if r.IntN(3) == 0 {
					p.Remove(id)
					delete(live, id)
					continue
				}
				e := randomEntry(r, 2000+i, gen(r, dim, i), false)
				if r.IntN(4) == 0 {
					e.Vector = out()
				}
				e.ID = id
				upsert(e)
			}
			p.Settle()
			checkProj(t, p)
			if p.proj == nil {
				t.Fatal("projection dropped")
			}
			check("updated", 60)
		})
	}
}

// TestProjBound holds every row's bound to its exact cosine (Cosine, float64
// then float32) on the queries that make Cauchy–Schwarz tight: each row
// itself (its residual is the query's), the direction of a row's
// quantization error within the subspace, basis vectors, vectors
// orthogonal to the subspace, and random ones, on rows of every kind
// (low-rank, isotropic, in the subspace, orthogonal to it, duplicates).
// A bound weakened in any of its terms fails here.
func TestProjBound(t *testing.T) {
	t.Parallel()
	const dim = 96
	for _, dist := range []string{"lowrank", "gaussian", "near-ties", "scaled"} {
		r := newRand(uint64(len(dist)) + 40)
		var gen vecGen
		if dist == "lowrank" {
			gen = lowRankGen(r, dim, 12, 0.5)
		} else {
			gen = distributions[dist](r, dim)
		}
		p := NewPartition(Config{ApproxMinRows: -1, ProjectMinRows: 300, projectForce: true, projectDims: 32})
		for i := range 400 {
			e := randomEntry(r, i, gen(r, dim, i), true)
			e.ID = fmt.Sprintf("m%04d", i)
			if err := p.Upsert(e); err != nil {
				t.Fatal(err)
			}
		}
		p.Settle()
		pj := p.proj
		if pj == nil {
			t.Fatalf("%s: no projection", dist)
		}
		// Rows in the subspace and orthogonal to it, added after training.
		for i := range 40 {
			v := slices.Clone(pj.basis[(i%pj.d)*dim : (i%pj.d+1)*dim])
			if i%2 == 1 {
				v = orthogonalTo(r, pj, dim)
			}
			e := randomEntry(r, 400+i, v, true)
			e.ID = fmt.Sprintf("x%04d", i)
			if err := p.Upsert(e); err != nil {
				t.Fatal(err)
			}
		}
		// Rows whose quantization error is near its worst case: in the
		// subspace, one coordinate at the top of the grid and every other
		// half a step from a code.
		first := p.rows
		for i := range 8 {
			y := make([]float64, pj.d)
			y[i%pj.d] = 1
			for j := range y {
				if j != i%pj.d {
					y[j] = 0.5 / codeMax * float64(1-2*r.IntN(2))
				}
			}
			v := make([]float32, dim)
			for j, yj := range y {
				for k := range dim {
					v[k] += float32(yj * float64(pj.basis[j*dim+k]))
				}
			}
			e := randomEntry(r, 500+i, v, true)
			e.ID = fmt.Sprintf("h%04d", i)
			if err := p.Upsert(e); err != nil {
				t.Fatal(err)
			}
		}
		checkProj(t, p)
		var queries [][]float32
		for row := 0; row < p.rows; row++ {
			if row%3 != 0 && row < first {
				continue
			}
			queries = append(queries, slices.Clone(p.vec(row)))
			// The direction of the row's quantization error: Bᵀ(y − s·c).
			c, i := pj.row(row)
			y := make([]float64, pj.d)
			dots64(p.vec(row), pj.bptrs, y, make([]float64, 4*pj.d))
			q := make([]float32, dim)
			rc := make([]int8, pj.d)
			c.getCodes(i, pj.d, rc)
			for j := range pj.d {
				ej := y[j]/p.normOf(row) - float64(c.scale[i])*float64(rc[j])
				for k := range dim {
					q[k] += float32(ej * float64(pj.basis[j*dim+k]))
				}
			}
			if norm64(q) > 0 {
				queries = append(queries, q)
			}
		}
		for i := range 20 {
			queries = append(queries, slices.Clone(pj.basis[(i%pj.d)*dim:(i%pj.d+1)*dim]), orthogonalTo(r, pj, dim), gaussVec(r, dim))
		}
		sc := getScratch()
		worst := math.Inf(1)
		for qi, q := range queries {
			qv := prepareQuery(q, norm64(q), p.stride, nil)
			pq := pj.prepare(&qv, sc)
			for row := range p.rows {
				c, i := pj.row(row)
				rc := make([]int8, pj.d)
				c.getCodes(i, pj.d, rc)
				var D int32
				for j := range pj.d {
					D += int32(pq.codes[j]) * int32(rc[j])
				}
				a, e := projBound(c.scale[i], c.resid[i], D, pq.t, pq.alpha, pq.beta, pq.gamma)
				cos := float64(Cosine(q, p.vec(row)))
				if cos < a-e || cos > a+e {
					t.Fatalf("%s: query %d row %d: cosine %v outside [%v, %v]", dist, qi, row, cos, a-e, a+e)
				}
				worst = min(worst, e-math.Abs(cos-a))
			}
		}
		putScratch(sc)
		t.Logf("%s: %d queries × %d rows, least room %.3g", dist, len(queries), p.rows, worst)
	}
}

// orthogonalTo returns a random vector orthogonal to pj's basis (to
// float32 rounding).
func orthogonalTo(r *rand.Rand, pj *proj, dim int) []float32 {
	v := gaussVec(r, dim)
	w := make([]float64, dim)
	for j, x := range v {
		w[j] = float64(x)
	}
	for range 2 {
		for i := range pj.d {
			b := pj.basis[i*dim : (i+1)*dim]
			var s float64
			for j, x := range b {
				s += float64(x) * w[j]
			}
			for j, x := range b {
				w[j] -= s * float64(x)
			}
		}
	}
	for j := range v {
		v[j] = float32(w[j])
	}
	return v
}

// TestProjDots holds the projected pass's kernel to projDotsGeneric and
// to plain dot products of the rows as written (setCodes), on the extremes.
func TestProjDots(t *testing.T) {
	t.Parallel()
	r := newRand(12)
	for _, d := range []int{32, 64, 96, 128} {
		q := make([]int8, d)
		for j := range q {
			q[j] = int8(r.IntN(255) - 127)
			if j%7 == 0 {
				q[j] = codeMax
			}
			if j%11 == 0 {
				q[j] = -codeMax
			}
		}
		c := projChunk{codes: make([]uint8, chunkRows*d)}
		rows := make([][]int8, chunkRows)
		for i := range rows {
			rows[i] = make([]int8, d)
			for j := range rows[i] {
				rows[i][j] = int8(r.IntN(255) - 127)
				switch i % 5 {
				case 0:
					rows[i][j] = -codeMax
				case 1:
					rows[i][j] = codeMax
				}
			}
			c.setCodes(i, d, rows[i])
			back := make([]int8, d)
			c.getCodes(i, d, back)
			if !slices.Equal(back, rows[i]) {
				t.Fatalf("d %d row %d: codes read back differ", d, i)
			}
		}
		for _, from := range []int{0, 256, 512} {
			for _, n := range []int{64, 128, 256} {
				want := make([]int32, n)
				for i := range want {
					var s int32
					for j, x := range rows[from+i] {
						s += int32(q[j]) * int32(x)
					}
					want[i] = s
				}
				gen := make([]int32, n)
				projDotsGeneric(q, c.codes[from*d:], d, gen)
				if !slices.Equal(gen, want) {
					t.Fatalf("d %d rows %d+%d: generic %v, want %v", d, from, n, gen[:4], want[:4])
				}
				for _, k := range projDotsKernels { // the last is projDots
					got := make([]int32, n)
					k.fn(q, c.codes[from*d:], d, got)
					if !slices.Equal(got, want) {
						t.Fatalf("%s, d %d rows %d+%d: %v, want %v", k.name, d, from, n, got[:4], want[:4])
					}
				}
			}
		}
	}
}

// TestProjKernelsSameResults runs the projected pass with the generic
// kernels handed in (projDotsGeneric and the bound in Go, what a CPU
// without AVX2 runs) and with the kernels in use, on the same
// queries, serial and parallel, with and without filters: the hits and
// the number of rows re-scored must be identical, and the hits exact.
func TestProjKernelsSameResults(t *testing.T) {
	t.Parallel()
	r := newRand(41)
	const n, dim = 3000, 128
	gen := lowRankGen(r, dim, 24, 1)
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = randomEntry(r, i, gen(r, dim, i), false)
	}
	for _, minRows := range []int{256, 1 << 30} {
		p := NewPartition(Config{ApproxMinRows: -1, ProjectMinRows: 600, projectForce: true, ParallelMinRows: minRows})
		for _, e := range entries {
			if err := p.Upsert(e); err != nil {
				t.Fatal(err)
			}
		}
		p.Settle()
		if p.proj == nil {
			t.Fatal("no projection learnt")
		}
		generic := projKernels{dots: projDotsGeneric}
		for qi := range 30 {
			q := Query{Vector: gen(r, dim, -1), K: 1 + r.IntN(20), Filter: Filter{Now: now}}
			if qi%2 == 0 {
				q.Filter = randomFilter(r)
			}
			want, wantN, got, gotN := func() ([]hit, int, []hit, int) {
				p.mu.RLock()
				defer p.mu.RUnlock()
				f, err := q.Filter.compile(p)
				if err != nil {
					t.Fatal(err)
				}
				sc := getScratch()
				defer putScratch(sc)
				qv := prepareQuery(q.Vector, norm64(q.Vector), p.stride, nil)
				want, wantN := p.projTopKWith(generic, p.proj, &qv, &f, q.K, sc)
				want = slices.Clone(want)
				got, gotN := p.projTopKWith(projInUse(), p.proj, &qv, &f, q.K, sc)
				return want, wantN, slices.Clone(got), gotN
			}()
			if !slices.Equal(got, want) || gotN != wantN {
				t.Fatalf("parallel %d query %d: kernels in use %v (%d re-scored), generic %v (%d)", minRows, qi, got, gotN, want, wantN)
			}
			if wantN >= n/2 {
				t.Fatalf("query %d: %d of %d rows re-scored: the projection pruned nothing", qi, wantN, n)
			}
			res, err := p.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, fmt.Sprintf("query %d", qi), entries, q, res)
		}
	}
}

// TestProjKeepsExact: on isotropic data no subspace holds the rows, the
// check on the sample refuses the projection (without projecting every
// row), and the partition stays on the exact scan until it doubles.
func TestProjKeepsExact(t *testing.T) {
	t.Parallel()
	r := newRand(31)
	const n, dim = 3000, 128
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = randomEntry(r, i, gaussVec(r, dim), true)
	}
	p := buildPartition(t, Config{ApproxMinRows: -1, ProjectMinRows: 2000}, entries)
	if p.proj != nil {
		t.Fatalf("kept a projection of %d dimensions on isotropic data", p.proj.d)
	}
	if p.projRetry < 4000 {
		t.Fatalf("retry at %d rows, want twice the rows learnt on (≥ 4000)", p.projRetry)
	}
	if p.Stats().Projection != 0 {
		t.Fatal("Stats reports a projection")
	}
	// And with an inverted file, none is learnt: the inverted file answers.
	c := corpus(3000)
	q := buildPartition(t, Config{ApproxMinRows: 1000, probeAll: true, ProjectMinRows: 1000, projectForce: true}, c.entries)
	if q.ivf == nil || q.proj != nil {
		t.Fatalf("inverted file %v, projection %v: want the inverted file alone", q.ivf != nil, q.proj != nil)
	}
}

// TestProjDrift: rows that leave the learnt subspace raise the mean
// residual, and the projection is learnt again on the data as it is.
func TestProjDrift(t *testing.T) {
	t.Parallel()
	r := newRand(32)
	const dim = 128
	gen := lowRankGen(r, dim, 16, 0.5)
	p := NewPartition(Config{ApproxMinRows: -1, ProjectMinRows: 1000, projectForce: true, projectDims: 32})
	var entries []Entry
	for i := range 1500 {
		e := randomEntry(r, i, gen(r, dim, i), true)
		entries = append(entries, e)
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
	}
	p.Settle()
	first := p.proj
	if first == nil {
		t.Fatal("no projection")
	}
	// Drift: the new rows come from another subspace.
	other := lowRankGen(r, dim, 16, 0.5)
	for i := range 700 {
		e := randomEntry(r, 1500+i, other(r, dim, i), true)
		entries = append(entries, e)
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
	}
	p.Settle()
	if p.proj == nil || p.proj == first {
		t.Fatal("the projection was not learnt again after the data drifted")
	}
	if p.proj.trainedResid >= first.residSum/float64(first.rows) {
		t.Fatalf("mean residual %v after learning again, %v before", p.proj.trainedResid, first.residSum/float64(first.rows))
	}
	checkProj(t, p)
	for i := range 20 {
		var v []float32
		if i%2 == 0 {
			v = gen(r, dim, -1)
		} else {
			v = other(r, dim, -1)
		}
		q := Query{Vector: v, K: 10, Filter: Filter{Now: now}}
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, fmt.Sprintf("drifted query %d", i), entries, q, res)
	}
}

// TestProjConcurrent runs searches beside upserts and removals that learn,
// learn again and maintain the projection (run it with -race).
func TestProjConcurrent(t *testing.T) {
	t.Parallel()
	r := newRand(33)
	const dim = 128
	gen := lowRankGen(r, dim, 16, 0.5)
	var entries []Entry
	for i := range 3000 {
		entries = append(entries, randomEntry(r, i, gen(r, dim, i), true))
	}
	queries := make([][]float32, 16)
	for i := range queries {
		queries[i] = gen(r, dim, -1)
	}
	p := buildPartition(t, Config{ApproxMinRows: -1, ProjectMinRows: 400, projectForce: true, ParallelMinRows: 256}, entries[:500])
	done := make(chan struct{})
	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := p.Search(Query{Vector: queries[(g*7+i)%len(queries)], K: 10, Filter: Filter{Now: now}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i, e := range entries[500:] {
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			p.Remove(entries[i].ID)
		}
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	p.Settle()
	if p.proj == nil {
		t.Fatal("no projection: the test tests nothing")
	}
	checkProj(t, p)
}

// TestProjAccounted: the memory of a projection learnt in the background
// after a load reaches the Index's count (Settle, or the next search).
func TestProjAccounted(t *testing.T) {
	t.Parallel()
	r := newRand(34)
	const dim = 128
	gen := lowRankGen(r, dim, 16, 0.5)
	var entries []Entry
	for i := range 3000 {
		entries = append(entries, randomEntry(r, i, gen(r, dim, i), true))
	}
	load := func(ctx context.Context, tenant, principal string, l *Load) (int64, error) {
		for i := range entries {
			e := entries[i]
			if err := l.Add(&e); err != nil {
				return 0, err
			}
		}
		return 1, nil
	}
	for _, settle := range []bool{true, false} {
		x, err := New(Config{ApproxMinRows: -1, ProjectMinRows: 1000, projectForce: true}, load)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Search(context.Background(), "t", "p", Query{Vector: entries[0].Vector, K: 5, Filter: Filter{Now: now}}); err != nil {
			t.Fatal(err)
		}
		x.mu.Lock()
		p := x.parts[pkey{"t", "p"}].p
		x.mu.Unlock()
		if settle {
			x.Settle()
		} else {
			p.Settle()
			if _, err := x.Search(context.Background(), "t", "p", Query{Vector: entries[1].Vector, K: 5, Filter: Filter{Now: now}}); err != nil {
				t.Fatal(err)
			}
		}
		if p.proj == nil {
			t.Fatal("no projection")
		}
		if got, want := x.Stats().Bytes, p.Bytes(); got != want {
			t.Fatalf("settle %v: Index counts %d bytes, the partition %d", settle, got, want)
		}
	}
}

package index

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// A projected first pass, exact (issue 27, item 4)
//
// The exact scan reads every row's int8 codes (stride bytes a row): at
// 100k × 384 that is 38 MB a query, more than the L3, so it is bound by
// memory bandwidth. Where a partition's directions lie mostly in a
// subspace of few dimensions (embeddings whose spectrum decays, the
// `lowrank` benchmark distribution), a first pass over a projection of
// each row onto that subspace reads d bytes a row instead, and bounds
// every row's cosine tightly enough that only a few hundred rows go on to
// the int8 pass and the exact re-scoring. No row is skipped unless its
// bound proves it is not in the top k: the result is the exact top k, as
// the scan's.
//
// The bound. B is the d × dim basis (float32 rows, from the principal
// directions of a sample, see pca.go; any B works, a good one prunes
// more), M = BᵀB, Q the orthogonal projector onto B's row space and
// ε ≥ ‖BBᵀ − I‖_F ≥ ‖M − Q‖₂ (measured when B is made; about 10⁻⁶ for a
// float32 rounding of an orthonormal basis). For a row's direction u
// (‖u‖ = 1) the partition keeps y = B·u quantized, y ≈ s·c with int8
// codes c and no clamping, so ‖y − s·c‖ ≤ s·√d/2, and rᵤ ≥ ‖(I − Q)·u‖,
// rᵤ² = 1 − ‖y‖² + ε (rounded up). A query's direction qn gives z = B·qn
// ≈ t·e (int16 codes, ρ ≥ ‖z − t·e‖) and r_q likewise. Then
//
//	⟨qn, u⟩ = ⟨z, y⟩ + qnᵀ(Q − M)u + ⟨(I − Q)qn, (I − Q)u⟩
//	⟨z, y⟩  = s·t·D + ⟨z, y − s·c⟩ + s·⟨z − t·e, c⟩,   D = Σ eⱼcⱼ (integers)
//	|⟨qn, u⟩ − s·t·D| ≤ s·(‖z‖ + ρ)·√d/2 + ρ·(1 + ε) + ε + r_q·rᵤ
//
// (Cauchy–Schwarz on each term; ‖y‖ ≤ 1 + ε), plus roundingMargin for
// the floating-point rounding of it all, as the int8 bound has. The slack
// that matters is r_q·rᵤ: about 0.05 on `lowrank` with d = 64, where a
// row's residual is 22 % of its norm.
//
// A search runs the first pass over every row (the scan's kernel on the
// d-byte codes, the bound in SIMD where the CPU has it), keeps the rows
// whose upper bound reaches τ, the k-th largest lower bound among the rows
// that pass the filter, then runs the int8 pass and the exact re-scoring
// of the scan over those rows only (scanGathered, rescore): three
// filters, each of which only drops rows that cannot be in the top k.
//
// The projection is learnt in the background (like the inverted file,
// and by the same trainer) from ProjectMinRows vectors on, where no
// inverted file is kept: the basis from projSample evenly spaced rows;
// then a check on that sample that the bound would prune at all; then
// every row projected under short read locks; then calibration: searches
// of projCalibQueries rows timed against the exact scan, interleaved, and
// the projection kept only where its median time is at most
// projMaxTimeShare of the scan's. It is kept current on every upsert and
// removal, learnt again when the partition has doubled or its rows'
// mean residual has grown by a quarter (the data drifted away from the
// subspace), and dropped below half the threshold.

// DefaultProjectMinRows is the default Config.ProjectMinRows.
const DefaultProjectMinRows = 50000

const (
	// projSample is how many rows the basis is learnt from;
	// projCheckRows how many check that its bound prunes.
	projSample    = 4096
	projCheckRows = 2048
	// projMaxDims is the largest projection tried; projDimStep the step
	// (the kernels want strides that are multiples of strideAlign).
	projMaxDims = 96
	projDimStep = strideAlign
	// projIterations is the number of subspace iterations of the solver.
	projIterations = 12
	// projMaxSurvivors: the sample check gives up on the projection when
	// more than this share of the sample survives its bound.
	projMaxSurvivors = 0.5
	// projCalibQueries is how many searches calibration times on each
	// path; projMaxTimeShare the largest median ratio of the projected
	// path's time to the scan's for which the projection is kept.
	projCalibQueries = 24
	projMaxTimeShare = 0.75
	// projDrift: learn again when the rows' mean residual exceeds the
	// mean at training by this factor (plus projDriftAbs).
	projDrift    = 1.25
	projDriftAbs = 0.01
)

// proj is the projected first pass of a partition.
type proj struct {
	d       int
	basis   []float32  // d × dim, rows
	bptrs   []*float32 // the rows of basis
	eps     float64    // ≥ ‖BBᵀ − I‖_F
	halfSD  float64    // √d/2, rounded up
	trained int        // rows when it was learnt
	gen     uint64     // the partition's rowGen its rows were projected at
	// Rows, in chunks of chunkRows aligned with the partition's.
	chunks []projChunk
	rows   int
	// Σ rᵤ over the rows, and its mean when learnt (drift).
	residSum, trainedResid float64
	// Scratch of the write path (under the write lock).
	y, lanes []float64
	codes    []int8
}

type projChunk struct {
	codes []uint8   // chunkRows × d, offset and in groups (projGroup)
	scale []float32 // s
	resid []float32 // rᵤ
}

// projRowBytes is the memory of one row of capacity.
func projRowBytes(d int) int64 { return int64(d + 4 + 4) }

// bytes is the memory of the projection, counted by capacity.
func (pj *proj) bytes(dim int) int64 {
	n := int64(pj.d)*int64(4*dim+8) + 64
	for _, c := range pj.chunks {
		n += int64(cap(c.scale)) * projRowBytes(pj.d)
	}
	return n
}

// newProj makes an empty projection of basis (d × dim, orthonormal rows,
// float64).
func newProj(basis []float64, d, dim int) *proj {
	pj := &proj{d: d, basis: make([]float32, d*dim), bptrs: make([]*float32, d)}
	for i, x := range basis[:d*dim] {
		pj.basis[i] = float32(x)
	}
	for i := range d {
		pj.bptrs[i] = &pj.basis[i*dim]
	}
	// ε ≥ ‖BBᵀ − I‖_F, on the float32 basis as stored. Products of
	// float32 values are exact in float64; the sums' rounding is far
	// below the margins added.
	var e2 float64
	for i := range d {
		for j := range d {
			g := dot64(pj.basis[i*dim:(i+1)*dim], pj.basis[j*dim:(j+1)*dim])
			if i == j {
				g--
			}
			e2 += g * g
		}
	}
	pj.eps = math.Sqrt(e2)*(1+1e-6) + 1e-12
	pj.halfSD = math.Sqrt(float64(d)) / 2 * (1 + 1e-12)
	pj.y = make([]float64, d)
	pj.lanes = make([]float64, 4*d)
	pj.codes = make([]int8, d)
	return pj
}

// project writes the projection of v (norm norm) into codes (d values)
// and returns its scale and residual bound; y and lanes are scratch (d and
// 4·d values).
func (pj *proj) project(v []float32, norm float64, codes []int8, y, lanes []float64) (scale, resid float32) {
	dots64(v, pj.bptrs, y, lanes)
	var y2, maxAbs float64
	for j, x := range y {
		x /= norm
		y[j] = x
		y2 += x * x
		maxAbs = max(maxAbs, math.Abs(x))
	}
	// s ≥ max|y|/codeMax with room, so no code reaches the clamp and every
	// |y − s·c| ≤ s/2.
	scale = roundUp32(maxAbs * (1 + 1e-6) / codeMax)
	if scale > 0 {
		inv := 1 / float64(scale)
		for j, x := range y {
			codes[j] = int8(clampCode(math.Round(x * inv)))
		}
	} else {
		clear(codes)
	}
	return scale, roundUp32(math.Sqrt(max(0, 1-y2+pj.eps+1e-12)) * (1 + 1e-9))
}

// row returns the chunk and the offset of row r.
func (pj *proj) row(r int) (*projChunk, int) {
	return &pj.chunks[r/chunkRows], r % chunkRows
}

// add projects v as the next row and returns the change in bytes.
func (pj *proj) add(v []float32, norm float64) int64 {
	r := pj.rows
	var grown int64
	if r%chunkRows == 0 && r/chunkRows == len(pj.chunks) {
		pj.chunks = append(pj.chunks, projChunk{
			codes: make([]uint8, chunkRows*pj.d),
			scale: make([]float32, 0, chunkRows),
			resid: make([]float32, 0, chunkRows),
		})
		grown = chunkRows * projRowBytes(pj.d)
	}
	c := &pj.chunks[r/chunkRows]
	i := len(c.scale)
	s, ru := pj.project(v, norm, pj.codes, pj.y, pj.lanes)
	c.setCodes(i, pj.d, pj.codes)
	c.scale = append(c.scale, s)
	c.resid = append(c.resid, ru)
	pj.residSum += float64(ru)
	pj.rows++
	return grown
}

// remove moves the last row into row r and drops the last; it returns the
// change in bytes.
func (pj *proj) remove(r int) int64 {
	last := pj.rows - 1
	d := pj.d
	lc, li := pj.row(last)
	c, i := pj.row(r)
	pj.residSum -= float64(c.resid[i])
	if r != last {
		lc.getCodes(li, d, pj.codes)
		c.setCodes(i, d, pj.codes)
		c.scale[i], c.resid[i] = lc.scale[li], lc.resid[li]
	}
	lc.scale = lc.scale[:li]
	lc.resid = lc.resid[:li]
	pj.rows--
	if li == 0 {
		pj.chunks[len(pj.chunks)-1] = projChunk{}
		pj.chunks = pj.chunks[:len(pj.chunks)-1]
		return -chunkRows * projRowBytes(d)
	}
	return 0
}

func (p *Partition) projectMinRows() int { return p.cfg.ProjectMinRows }

// projDue reports whether the projection should be learnt (again). Under
// a lock.
func (p *Partition) projDue() bool {
	min := p.projectMinRows()
	if min <= 0 || p.ivf != nil || p.rows < min || p.dim < 2*projDimStep {
		return false
	}
	pj := p.proj
	if pj == nil {
		return p.rows >= p.projRetry
	}
	return p.rows >= 2*pj.trained ||
		pj.rows > 0 && pj.residSum/float64(pj.rows) > pj.trainedResid*projDrift+projDriftAbs
}

// projAdded keeps the projection current after row r (vector v) was added,
// and starts the trainer when the projection is due.
func (p *Partition) projAdded(v []float32, norm float64) {
	if pj := p.proj; pj != nil {
		if p.ivf != nil {
			p.dropProj()
		} else {
			p.bytes += pj.add(v, norm)
		}
	}
	if p.projDue() {
		p.startTrain()
	}
}

// projRemoved keeps the projection current after row r was removed and the
// last row moved into its place.
func (p *Partition) projRemoved(r int) {
	pj := p.proj
	if pj == nil {
		return
	}
	if p.rows < p.projectMinRows()/2 || p.rows == 0 {
		p.dropProj()
		return
	}
	p.bytes += pj.remove(r)
}

// dropProj drops the projection. Under the write lock.
func (p *Partition) dropProj() {
	if pj := p.proj; pj != nil {
		p.bytes -= pj.bytes(p.dim)
		p.proj = nil
	}
}

// trainProj learns the projection, in the background (train): see the
// comment at the top.
func (p *Partition) trainProj() {
	p.mu.RLock()
	if !p.projDue() {
		p.mu.RUnlock()
		return
	}
	n, dim := p.rows, p.dim
	p.mu.RUnlock()

	pj, ok := p.learnProj(n, dim)
	if !ok {
		// Rows were removed meanwhile: that says nothing of whether a
		// projection pays, so the one in use (if any) is kept, and the
		// next upsert that finds the projection due starts again.
		return
	}
	if pj == nil {
		p.rejectProj(n)
		return
	}
	for attempt := 0; attempt < 4; attempt++ {
		if !p.projectAll(pj, n) {
			if p.Stats().Vectors < n {
				return // the partition shrank: give up
			}
			continue // rows moved: again
		}
		if !p.projCalibrate(pj, n) {
			p.rejectProj(n)
			return
		}
		p.mu.Lock()
		if p.rowGen == pj.gen && p.rows >= n && p.ivf == nil && p.rows >= p.projectMinRows()/2 {
			p.installProj(pj, n)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// rejectProj records that the projection does not pay at n rows: none
// until the partition doubles.
func (p *Partition) rejectProj(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropProj()
	p.projRetry = 2 * n
}

// projSampleChunk is how many sample rows the trainer reads under one
// read lock.
const projSampleChunk = 256

// readSample copies the directions of the sample rows [i0, i0+len(dst)/dim)
// (m rows evenly spaced over n) into dst, under a short read lock; false
// when the partition no longer has n rows.
func (p *Partition) readSample(n, m, i0 int, dst []float32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.rows < n {
		return false
	}
	dim := p.dim
	for i := range len(dst) / dim {
		r := int(int64(i0+i) * int64(n) / int64(m))
		v, inv := p.vec(r), 1/p.normOf(r)
		for j, x := range v {
			dst[i*dim+j] = float32(float64(x) * inv)
		}
	}
	return true
}

// learnProj chooses the basis from the second moment of projSample rows
// of the n (read a few at a time, so the trainer holds little memory) and
// checks on projCheckRows of them that its bound prunes; nil when it would
// not. ok is false when the partition shrank below n rows meanwhile.
func (p *Partition) learnProj(n, dim int) (pj *proj, ok bool) {
	dmax := min(projMaxDims, dim/2/projDimStep*projDimStep)
	if dmax < projDimStep {
		return nil, true
	}
	m := min(n, projSample)
	buf := make([]float32, projSampleChunk*dim)
	cm := make([]float64, dim*dim)
	for i0 := 0; i0 < m; i0 += projSampleChunk {
		rows := buf[:min(projSampleChunk, m-i0)*dim]
		if !p.readSample(n, m, i0, rows) {
			return nil, false
		}
		momentAdd(cm, rows, dim)
	}
	momentFinish(cm, dim, m)
	basis, vals := topEigen(cm, dim, dmax, projIterations)
	// The residual energy 1 − Σλ of each candidate d (the trace is the
	// mean ‖u‖² = 1): the smallest d whose residual is within a quarter
	// of the largest candidate's, as further dimensions buy little.
	resid := func(d int) float64 {
		var s float64
		for _, v := range vals[:d] {
			s += v
		}
		return max(0, 1-s)
	}
	d := dmax
	if p.cfg.projectDims > 0 {
		d = min(dmax, p.cfg.projectDims)
	} else {
		for c := projDimStep; c < dmax; c += projDimStep {
			if resid(c) <= 1.25*resid(dmax)+1e-3 {
				d = c
				break
			}
		}
	}
	pj = newProj(basis, d, dim)
	if p.cfg.projectForce {
		return pj, true
	}
	// Would it prune? On projCheckRows sample rows, for a few of them as
	// queries, the share of the rows whose upper bound reaches the best
	// lower bound scaled to the sample (k of n rows is k·mc/n of mc, at
	// least one): more than projMaxSurvivors, and the projection cannot
	// pay.
	mc := min(n, projCheckRows)
	ys := make([]float64, mc*d)
	rs := make([]float64, mc)
	for i0 := 0; i0 < mc; i0 += projSampleChunk {
		cnt := min(projSampleChunk, mc-i0)
		rows := buf[:cnt*dim]
		if !p.readSample(n, mc, i0, rows) {
			return nil, false
		}
		for i := range cnt {
			u := rows[i*dim : (i+1)*dim]
			var y2 float64
			for j := range d {
				x := dotF64F32(basis[j*dim:(j+1)*dim], u)
				ys[(i0+i)*d+j] = x
				y2 += x * x
			}
			rs[i0+i] = math.Sqrt(max(0, 1-y2))
		}
	}
	ks := max(1, int(math.Ceil(float64(ivfCalibK)*float64(mc)/float64(n))))
	const queries = 16
	lo := make([]float64, mc)
	sorted := make([]float64, mc)
	var share float64
	for qi := range queries {
		q := (qi*mc + mc/2) / queries
		zq, rq := ys[q*d:(q+1)*d], rs[q]
		for i := range mc {
			lo[i] = dotF64(zq, ys[i*d:(i+1)*d]) - rq*rs[i]
		}
		copy(sorted, lo)
		slices.Sort(sorted)
		tau := sorted[mc-ks]
		kept := 0
		for i := range mc {
			if lo[i]+2*rq*rs[i] >= tau {
				kept++
			}
		}
		share += float64(kept) / float64(mc*queries)
	}
	if share > projMaxSurvivors {
		return nil, true
	}
	return pj, true
}

// projAssignChunk is how many rows the trainer projects under one read
// lock.
const projAssignChunk = 8192

// projectAll projects rows [0, n) into pj, in chunks under short read
// locks, and sets pj.gen. It reports false when a row moved meanwhile or
// the partition shrank below n rows.
func (p *Partition) projectAll(pj *proj, n int) bool {
	pj.chunks, pj.rows, pj.residSum = nil, 0, 0
	p.mu.RLock()
	pj.gen = p.rowGen
	p.mu.RUnlock()
	for a := 0; a < n; a += projAssignChunk {
		b := min(n, a+projAssignChunk)
		p.mu.RLock()
		ok := p.rowGen == pj.gen && p.rows >= n
		if ok {
			for r := a; r < b; r++ {
				pj.add(p.vec(r), p.normOf(r))
			}
		}
		p.mu.RUnlock()
		if !ok {
			return false
		}
	}
	return true
}

// installProj makes pj, holding rows [0, n) projected at the current row
// generation, the partition's projection. Under the write lock.
func (p *Partition) installProj(pj *proj, n int) {
	for r := n; r < p.rows; r++ {
		pj.add(p.vec(r), p.normOf(r))
	}
	pj.trained = p.rows
	pj.trainedResid = pj.residSum / float64(max(1, pj.rows))
	p.dropProj()
	p.proj = pj
	p.bytes += pj.bytes(p.dim)
}

// projCalibrate times searches of projCalibQueries rows on the projected
// path against the exact scan, interleaved, each under its own read lock,
// and reports whether the projection pays.
func (p *Partition) projCalibrate(pj *proj, n int) bool {
	if p.cfg.projectForce {
		return true
	}
	sc := getScratch()
	defer putScratch(sc)
	now := time.Now().UnixMicro()
	cf := compiled{anyAgent: true, anyConv: true, kinds: 0xff, sources: 0xff, restrictedOK: true, asOf: now, expiredAt: now}
	ratios := make([]float64, 0, projCalibQueries)
	for i := range projCalibQueries {
		p.mu.RLock()
		if p.rowGen != pj.gen || p.rows < n {
			p.mu.RUnlock()
			return false
		}
		r := int((int64(i)*int64(n) + int64(n)/2) / projCalibQueries)
		qv := prepareQuery(p.vec(r), p.normOf(r), p.stride, sc.qcodes)
		sc.qcodes = qv.codes
		var te, tp time.Duration
		for j := range 2 { // alternate which runs first
			if (i+j)%2 == 0 {
				t := time.Now()
				p.exactTopK(&qv, &cf, ivfCalibK, sc)
				te = time.Since(t)
			} else {
				t := time.Now()
				p.projTopK(pj, &qv, &cf, ivfCalibK, sc)
				tp = time.Since(t)
			}
		}
		p.mu.RUnlock()
		ratios = append(ratios, float64(tp)/float64(max(te, 1)))
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2] <= projMaxTimeShare
}

// projQuery is a query prepared for the projected pass.
type projQuery struct {
	codes              []int8 // d values
	t                  float64
	alpha, beta, gamma float64 // the bound: s·α + rᵤ·β + γ
}

// prepare projects and quantizes the query qv for the first pass, in sc's
// storage.
func (pj *proj) prepare(qv *qvec, sc *scratch) projQuery {
	d := pj.d
	if cap(sc.pz) < d {
		sc.pz = make([]float64, d)
		sc.planes = make([]float64, 4*d)
		sc.pcodes = make([]int8, d)
	}
	z, codes := sc.pz[:d], sc.pcodes[:d]
	dots64(qv.vec, pj.bptrs, z, sc.planes[:4*d])
	var z2, maxAbs float64
	for j, x := range z {
		x /= qv.norm
		z[j] = x
		z2 += x * x
		maxAbs = max(maxAbs, math.Abs(x))
	}
	const emax = codeMax // int8 query codes (projDots)
	t := maxAbs / emax
	var r2 float64
	for j, x := range z {
		var c float64
		if t > 0 {
			c = max(-emax, min(emax, math.Round(x/t)))
		}
		codes[j] = int8(c)
		e := x - t*c
		r2 += e * e
	}
	rho := math.Sqrt(r2) * (1 + 1e-9)
	zn := math.Sqrt(z2) * (1 + 1e-9)
	rq := math.Sqrt(max(0, 1-z2+pj.eps+1e-12)) * (1 + 1e-9)
	return projQuery{
		codes: codes, t: t,
		alpha: (zn + rho) * pj.halfSD,
		beta:  rq,
		gamma: rho*(1+pj.eps) + pj.eps + roundingMargin,
	}
}

// projKernels are the kernels of the projected first pass. Searches use
// the ones the CPU runs (projInUse); a test hands the generic ones in
// (projDotsGeneric and a nil mask: what a CPU without AVX2, or another
// architecture, runs) rather than swap the ones in use.
type projKernels struct {
	dots func(q []int8, codes []uint8, d int, out []int32)
	mask func(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64) // nil: projScan's loop
}

// projInUse is the projected pass's kernels searches use.
func projInUse() projKernels { return projKernels{dots: projDots, mask: projMask} }

// projTopK is vectorTopK through the projection pj (rows [0, pj.rows) of
// the partition): the exact top k and how many rows were re-scored.
func (p *Partition) projTopK(pj *proj, qv *qvec, f *compiled, k int, sc *scratch) ([]hit, int) {
	return p.projTopKWith(projInUse(), pj, qv, f, k, sc)
}

// projTopKWith is projTopK with the given kernels.
func (p *Partition) projTopKWith(kern projKernels, pj *proj, qv *qvec, f *compiled, k int, sc *scratch) ([]hit, int) {
	pq := pj.prepare(qv, sc)
	n := pj.rows
	parts := 1
	if minRows := p.cfg.ParallelMinRows; n >= 2*minRows {
		maxp := p.cfg.MaxParallel
		if maxp == 0 {
			maxp = parallelism(p.cfg)
		}
		parts = max(1, min(n/minRows, maxp))
	}
	ws := sc.workers(parts)
	if parts == 1 {
		p.projScan(kern, pj, &pq, f, k, 0, n, ws[0])
	} else {
		chunk := (n + parts - 1) / parts
		chunk = (chunk + blockRows - 1) / blockRows * blockRows
		var wg sync.WaitGroup
		for i := 1; i < parts; i++ {
			from, to := min(i*chunk, n), min((i+1)*chunk, n)
			w := ws[i]
			wg.Go(func() { p.projScan(kern, pj, &pq, f, k, from, to, w) })
		}
		p.projScan(kern, pj, &pq, f, k, 0, min(chunk, n), ws[0])
		wg.Wait()
	}
	// τ of the first pass, and its survivors.
	tau := kthLow(ws, k, sc)
	ptrs, ents := sc.ptrs[:0], sc.ents[:0]
	for _, w := range ws {
		for _, c := range w.cands {
			if c.hi >= tau {
				ch, i := p.row(int(c.row))
				ptrs = append(ptrs, &ch.codes[i*p.stride])
				ents = append(ents, ivfRow{c.row, ch.scales[i], ch.resid[i]})
			}
		}
	}
	nrows := len(ents)
	if nrows == 0 {
		sc.ptrs, sc.ents = ptrs, ents
		return nil, 0
	}
	for range (4-nrows%4)%4 + gatherAhead {
		ptrs = append(ptrs, ptrs[0])
	}
	sc.ptrs, sc.ents = ptrs, ents
	defer clear(ptrs)
	// The int8 pass over the survivors (they passed the filter; it is
	// checked again, cheaply), then the exact re-scoring.
	w := ws[0]
	p.scanGathered(qv, f, k, ptrs, ents, 0, nrows, w)
	return p.rescore(qv, ws[:1], k, sc)
}

// projGroup is how many rows the projected codes interleave. A chunk keeps
// each code c as the byte c + 128 (unsigned, for VPDPBUSD) in groups of
// projGroup rows, each group four dimensions at a time (the codes of
// dimensions 4j..4j+3 of every row of the group, 4·projGroup bytes), so
// that a kernel adds four products into 16 rows' lanes at once, with no
// horizontal sums (projDotsAsm). A chunk's codes are allocated whole, so a
// kernel may read whole groups past the last row.
const projGroup = 16

// projOffset is the byte of dimension j of row i of a chunk (d dimensions).
func projOffset(i, j, d int) int {
	return i/projGroup*projGroup*d + j/4*4*projGroup + i%projGroup*4 + j%4
}

// projDots sets out[i] to the dot product of the query codes q (d values)
// with the codes of row i of codes, laid out as above; len(out) is a
// multiple of 64. The kernel the CPU runs, or projDotsGeneric.
var projDots = projDotsGeneric

// namedProjDots is a projected pass's kernel and its name, for tests.
type namedProjDots struct {
	name string
	fn   func(q []int8, codes []uint8, d int, out []int32)
}

// projDotsKernels lists the assembly kernels of the projected pass this CPU
// runs, slowest first; the last is projDots.
var projDotsKernels []namedProjDots

// projDotsGeneric is projDots in Go, the reference the kernels are held to.
func projDotsGeneric(q []int8, codes []uint8, d int, out []int32) {
	for i := range out {
		var s int32
		for j, x := range q[:d] {
			s += int32(x) * (int32(codes[projOffset(i, j, d)]) - 128)
		}
		out[i] = s
	}
}

// setCodes and getCodes write and read the codes of row i of a chunk.
func (c *projChunk) setCodes(i, d int, codes []int8) {
	for j := 0; j < d; j += 4 {
		o := projOffset(i, j, d)
		for m := range 4 {
			c.codes[o+m] = uint8(int(codes[j+m]) + 128)
		}
	}
}

func (c *projChunk) getCodes(i, d int, codes []int8) {
	for j := 0; j < d; j += 4 {
		o := projOffset(i, j, d)
		for m := range 4 {
			codes[j+m] = int8(int(c.codes[o+m]) - 128)
		}
	}
}

// projMask, where the CPU has a SIMD version, sets bit i of mask when row
// i of a block may be in the top k by the projected bound:
// a+e ≥ tau with a = (float64(scale[i])·t)·float64(d[i]) and
// e = (float64(scale[i])·alpha + float64(resid[i])·beta) + gamma, in that
// order, as projScan's loop computes them. len(d) is a multiple of 64.
var projMask func(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64)

// namedProjMask is a SIMD projMask and its name, for tests.
type namedProjMask struct {
	name string
	fn   func(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64)
}

// projMasks lists the SIMD projected bound checks this CPU runs, slowest
// first; the last is projMask. Tests hold each to projMaskGeneric.
var projMasks []namedProjMask

// projBound is a row's bound: its cosine with the query is within e of a
// (see the comment at the top; the conversions keep every operation
// rounded on its own, as projMask computes it).
func projBound(scale, resid float32, d int32, t, alpha, beta, gamma float64) (a, e float64) {
	s := float64(scale)
	a = float64(s*t) * float64(d)
	e = float64(float64(s*alpha)+float64(float64(resid)*beta)) + gamma
	return a, e
}

// projScan is the first pass over rows [from, to) (from a multiple of
// blockRows). The filter is evaluated only for the rows whose lower bound
// would raise τ (τ must be the k-th largest among rows that pass it; while
// fewer than k did, that is every row); the other rows it keeps are
// filtered by the int8 pass over the survivors, so that the first pass,
// which keeps a few thousand rows early on, does not read their entries.
func (p *Partition) projScan(kern projKernels, pj *proj, pq *projQuery, f *compiled, k, from, to int, w *worker) {
	w.reset()
	tau := math.Inf(-1)
	d := pj.d
	t, alpha, beta, gamma := pq.t, pq.alpha, pq.beta, pq.gamma
	prune := max(4*k, 256)
	for r0 := from; r0 < to; r0 += blockRows {
		nb := min(blockRows, to-r0)
		buf := w.buf[:nb]
		c, i0 := pj.row(r0)
		kern.dots(pq.codes, c.codes[i0*d:], d, w.buf[:(nb+63)&^63])
		scale := c.scale[i0 : i0+nb]
		resid := c.resid[i0 : i0+nb]
		rc, ri := p.row(r0)
		rowSlot := rc.rowSlot[ri : ri+nb]
		if kern.mask != nil && nb == blockRows {
			kern.mask(buf, scale, resid, t, alpha, beta, gamma, tau, w.mask[:])
			for mi, m := range w.mask {
				for ; m != 0; m &= m - 1 {
					i := mi*64 + bits.TrailingZeros64(m)
					a, e := projBound(scale[i], resid[i], buf[i], t, alpha, beta, gamma)
					if a+e < tau {
						continue
					}
					if a-e > tau { // it would raise τ: only then the filter
						sl := p.sl(rowSlot[i])
						if !f.pass(&sl.m, sl.id) {
							continue
						}
						tau = w.pushLow(a-e, k)
					}
					w.cands = append(w.cands, vcand{int32(r0 + i), a - e, a + e})
				}
			}
		} else {
			for i, x := range buf {
				a, e := projBound(scale[i], resid[i], x, t, alpha, beta, gamma)
				if a+e < tau {
					continue
				}
				if a-e > tau {
					sl := p.sl(rowSlot[i])
					if !f.pass(&sl.m, sl.id) {
						continue
					}
					tau = w.pushLow(a-e, k)
				}
				w.cands = append(w.cands, vcand{int32(r0 + i), a - e, a + e})
			}
		}
		if len(w.cands) >= prune {
			w.cands = slices.DeleteFunc(w.cands, func(c vcand) bool { return c.hi < tau })
			prune = max(prune, 2*len(w.cands))
		}
	}
}

// projMaskGeneric is projMask in Go (tests hold the SIMD version to it).
func projMaskGeneric(d []int32, scale, resid []float32, t, alpha, beta, gamma, tau float64, mask []uint64) {
	clear(mask[:len(d)/64])
	for i, x := range d {
		if a, e := projBound(scale[i], resid[i], x, t, alpha, beta, gamma); a+e >= tau {
			mask[i/64] |= 1 << (i % 64)
		}
	}
}

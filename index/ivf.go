package index

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Approximate search of large partitions (IVF)
//
// The exact scan reads every row's int8 codes: at 100k × 384 that is 38 MB
// a query, bound by memory bandwidth. From Config.ApproxMinRows vectors on,
// a partition also keeps an inverted file: its directions are clustered
// (spherical k-means, about √n clusters, on the int8 codes with the scan's
// kernel), every row is in the list of its nearest centroid, and a search
// scores the query against the centroids, then runs the scan's quantized
// pass, bound and exact re-scoring over the rows of the nearest lists
// only. Within those rows the result is the exact top k; rows of lists not
// probed are never seen, so the result is approximate (recall@10 is
// measured against float64 ground truth in BENCHMARKS.md). When the probed
// rows hold fewer than k that pass the filter, the search falls back to the
// exact scan, so a selective filter never loses results for want of rows.
//
// The lists are kept current on every write (a new row goes to its nearest
// centroid; a removal updates the list of the row that moves), and the
// centroids are trained again whenever the partition has doubled since they
// were, so the cost of training is amortized over the rows added. Below
// half the threshold the inverted file is dropped.

// DefaultApproxMinRows is the default Config.ApproxMinRows.
const DefaultApproxMinRows = 50000

// ivf is the inverted file of a partition.
type ivf struct {
	nlist   int
	probes  int     // lists a search probes (see calibrate)
	trained int     // rows when the centroids were trained
	gen     uint64  // the partition's rowGen its lists were assigned at (training)
	cent16  []int16 // nlist × stride: centroids quantized as queries, to assign rows
	cent8   []int8  // nlist × stride: centroids quantized as rows, to score queries
	cscale  []float32
	lists   [][]ivfRow // rows by list
	// By row: its list and its position in it.
	list, pos []int32
}

// ivfTrainPerList is how many rows per list train the centroids.
const ivfTrainPerList = 64

// ivfIterations is the number of k-means iterations.
const ivfIterations = 6

func (p *Partition) approxMinRows() int {
	return p.cfg.ApproxMinRows
}

// ivfAdded keeps the inverted file current after row r was added: trains
// it when the partition reaches the threshold or has doubled, else assigns
// the row to its list.
func (p *Partition) ivfAdded(r int) {
	min := p.approxMinRows()
	f := p.ivf
	if min <= 0 || f == nil && (p.rows < min || p.rows < p.ivfRetry) {
		return
	}
	if f == nil || p.rows >= 2*f.trained {
		p.startTrain()
		if f == nil {
			return
		}
	}
	l := p.nearestList(r)
	c := cap(f.list) + cap(f.pos)
	p.bytes -= ivfRowSize * int64(cap(f.lists[l]))
	f.list = append(f.list, int32(l))
	f.pos = append(f.pos, int32(len(f.lists[l])))
	f.lists[l] = append(f.lists[l], p.ivfRowOf(r))
	p.bytes += 4*int64(cap(f.list)+cap(f.pos)-c) + ivfRowSize*int64(cap(f.lists[l]))
}

// ivfRemoved keeps the inverted file current after row r was removed and
// the last row (last) moved into its place.
func (p *Partition) ivfRemoved(r, last int) {
	f := p.ivf
	if f == nil {
		return
	}
	if p.rows < p.approxMinRows()/2 || p.rows == 0 {
		p.bytes -= f.bytes(p.stride)
		p.ivf = nil
		return
	}
	// Take r out of its list: the list's last entry takes its place.
	l, i := f.list[r], f.pos[r]
	ls := f.lists[l]
	if moved := ls[len(ls)-1]; int(i) != len(ls)-1 {
		ls[i] = moved
		f.pos[moved.row] = i
	}
	f.lists[l] = ls[:len(ls)-1]
	// Row last is now row r.
	if r != last {
		l, i := f.list[last], f.pos[last]
		f.lists[l][i].row = int32(r)
		f.list[r], f.pos[r] = l, i
	}
	f.list, f.pos = f.list[:last], f.pos[:last]
}

// bytes is the memory of the inverted file, counted by capacity: the
// centroids, the lists and the by-row arrays. (Removals keep capacity.)
// ivfRow is a row in a list, with what the quantized pass needs of it, so
// that the pass reads the list in order and only the codes are scattered.
type ivfRow struct {
	row          int32
	scale, resid float32
}

const ivfRowSize = 12

func (p *Partition) ivfRowOf(r int) ivfRow {
	c, i := p.row(r)
	return ivfRow{int32(r), c.scales[i], c.resid[i]}
}

func (f *ivf) bytes(stride int) int64 {
	n := int64(f.nlist)*int64(3*stride+4+24) + 4*int64(cap(f.list)+cap(f.pos))
	for _, l := range f.lists {
		n += ivfRowSize * int64(cap(l))
	}
	return n
}

// nearestList returns the list whose centroid is nearest row r's direction.
func (p *Partition) nearestList(r int) int { return p.nearestListOf(p.ivf, r) }

// nearestListOf is nearestList with the centroids of f.
func (p *Partition) nearestListOf(f *ivf, r int) int {
	c, i := p.row(r)
	codes := c.codes[i*p.stride : (i+1)*p.stride]
	best, bestScore := 0, math.Inf(-1)
	var one [1]int32
	for l := range f.nlist {
		dots(f.cent16[l*p.stride:(l+1)*p.stride], codes, p.stride, one[:])
		// The centroid's grid step is folded into cent16 (see
		// trainIVF): the integer dot products compare as they are.
		if s := float64(one[0]); s > bestScore {
			best, bestScore = l, s
		}
	}
	return best
}

// Training runs in the background, so that the write that crosses the
// threshold (or doubles the partition) does not hold the partition for the
// whole clustering: at 100k × 384 that is about a second, at 800k tens of
// seconds on a loaded machine. The trainer copies the training rows' codes
// under a read lock, clusters the copy with no lock held, calibrates with
// one short read lock a query, assigns every row in chunks of
// ivfAssignChunk rows under short read locks, and installs the lists under
// the write lock, assigning there only the rows added meanwhile. A removal
// moves rows (rowGen counts them): one during the assignment makes the
// trainer assign again. Meanwhile searches use the previous inverted file,
// kept current, or the exact scan.

// ivfAssignChunk is how many rows the trainer assigns under one read lock.
const ivfAssignChunk = 8192

// startTrain starts the background trainer, unless it runs. Under the
// write lock.
func (p *Partition) startTrain() {
	if p.training {
		return
	}
	if p.loading {
		p.trainDeferred = true // the load starts it once (endLoad)
		return
	}
	p.training = true
	p.trainWG.Add(1)
	go func() {
		defer p.trainWG.Done()
		p.train()
	}()
}

// endLoad ends a bulk load (Index.loadInto): it gives back spare capacity
// and starts the training the load deferred, once for all its rows rather
// than at every doubling on the way (and so without an old inverted file
// or projection beside the new one at the end of the load). Under the
// write lock.
func (p *Partition) endLoad() {
	p.loading = false
	p.trim()
	if p.trainDeferred {
		p.trainDeferred = false
		p.startTrain()
	}
}

// Settle waits until background work on the partition (training its
// inverted file, see Config.ApproxMinRows) is done: for benchmarks and
// tests that time searches of a partition just built.
func (p *Partition) Settle() { p.trainWG.Wait() }

// train is the background trainer: the inverted file when it is due, else
// the projected first pass (proj.go) when that is due.
func (p *Partition) train() {
	p.mu.RLock()
	ivfDue := p.ivfDue()
	p.mu.RUnlock()
	if !p.trainIVF() {
		if ivfDue {
			// The inverted file's trainer left some 10 MB of garbage at
			// 100k rows (its copy of the training rows' codes): collect it
			// so that the projection's trainer reuses that memory rather
			// than adding to the partition's peak. Once a doubling.
			runtime.GC()
		}
		p.trainProj()
	}
	p.mu.Lock()
	p.training = false
	p.bgChanged.Store(true)
	p.mu.Unlock()
}

// ivfDue reports whether the inverted file should be trained (again).
// Under a lock.
func (p *Partition) ivfDue() bool {
	min := p.approxMinRows()
	if min <= 0 || p.rows < min {
		return false
	}
	if f := p.ivf; f != nil {
		return p.rows >= 2*f.trained
	}
	return p.rows >= p.ivfRetry
}

// trainIVF trains the inverted file if it is due, and reports whether the
// partition has one.
func (p *Partition) trainIVF() bool {
	p.mu.RLock()
	due, has := p.ivfDue(), p.ivf != nil
	p.mu.RUnlock()
	if !due {
		return has
	}
	f, n := p.trainCentroids()
	if f != nil && !p.calibrate(f) {
		// Not worth it (or no longer): exact until the partition doubles.
		p.mu.Lock()
		defer p.mu.Unlock()
		if old := p.ivf; old != nil {
			p.bytes -= old.bytes(p.stride)
			p.ivf = nil
		}
		p.ivfRetry = 2 * n
		return false
	}
	for attempt := 0; f != nil && attempt < 4; attempt++ {
		if !p.assignAll(f, n) {
			if p.Stats().Vectors < n {
				break // the partition shrank: give up
			}
			continue // rows moved: again
		}
		p.mu.Lock()
		if p.rowGen == f.gen && p.rows >= n && p.rows >= p.approxMinRows()/2 {
			p.install(f, n)
			p.mu.Unlock()
			return true
		}
		p.mu.Unlock()
	}
	// Given up: a later write starts another training.
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.ivf != nil
}

// trainCentroids clusters a copy of the training rows' codes; nil when the
// partition no longer has enough rows. It returns the rows counted.
func (p *Partition) trainCentroids() (*ivf, int) {
	p.mu.RLock()
	n, dim, stride := p.rows, p.dim, p.stride
	if p.approxMinRows() <= 0 || n < p.approxMinRows() {
		p.mu.RUnlock()
		return nil, n
	}
	nlist := max(1, int(math.Round(math.Sqrt(float64(n)))))
	// Training rows, evenly spaced: deterministic.
	m := min(n, nlist*ivfTrainPerList)
	codes := make([]int8, m*stride)
	scales := make([]float64, m)
	for i := range m {
		c, o := p.row(int(int64(i) * int64(n) / int64(m)))
		copy(codes[i*stride:(i+1)*stride], c.codes[o*stride:(o+1)*stride])
		scales[i] = float64(c.scales[o])
	}
	p.mu.RUnlock()

	f := &ivf{nlist: nlist, trained: n, cent16: make([]int16, nlist*stride)}
	// Initial centroids: evenly spaced training rows; then spherical
	// k-means on the dequantized directions s·c.
	cent := make([]float64, nlist*dim)
	for l := range nlist {
		i := int(int64(l) * int64(m) / int64(nlist))
		for j := range dim {
			cent[l*dim+j] = scales[i] * float64(codes[i*stride+j])
		}
	}
	assign := make([]int32, m)
	sums := make([]float64, nlist*dim)
	counts := make([]int, nlist)
	for it := 0; ; it++ {
		f.setCentroids(cent, dim, stride)
		f.assignCodes(codes, stride, assign, parallelism(p.cfg))
		if it == ivfIterations {
			break
		}
		clear(sums)
		clear(counts)
		for i, l := range assign {
			s := sums[int(l)*dim : int(l+1)*dim]
			row := codes[i*stride : i*stride+dim]
			for j, c := range row {
				s[j] += scales[i] * float64(c)
			}
			counts[l]++
		}
		for l := range nlist {
			if counts[l] == 0 {
				continue // keep the old centroid
			}
			s := sums[l*dim : (l+1)*dim]
			var n2 float64
			for _, x := range s {
				n2 += x * x
			}
			if n2 == 0 {
				continue
			}
			inv := 1 / math.Sqrt(n2)
			for j, x := range s {
				cent[l*dim+j] = x * inv
			}
		}
	}
	return f, n
}

// assignCodes sets out[i] to the list nearest the i-th row of codes
// (contiguous rows of stride codes): each block of rows is scored against
// every centroid while it is in cache.
func (f *ivf) assignCodes(codes []int8, stride int, out []int32, parts int) {
	n := len(out)
	parts = max(1, min(parts, n/blockRows))
	chunk := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for w := range parts {
		from, to := min(w*chunk, n), min((w+1)*chunk, n)
		wg.Go(func() {
			dst := make([]int32, blockRows)
			best := make([]int32, blockRows)
			for b0 := from; b0 < to; b0 += blockRows {
				nb := min(blockRows, to-b0)
				for i := range nb {
					best[i] = math.MinInt32
				}
				block := codes[b0*stride : (b0+nb)*stride]
				for l := range f.nlist {
					// One grid for every centroid (see setCentroids): the
					// integer dot products compare as they are.
					dots(f.cent16[l*stride:(l+1)*stride], block, stride, dst[:nb])
					for i, d := range dst[:nb] {
						if d > best[i] {
							best[i], out[b0+i] = d, int32(l)
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

// assignAll fills f.list for rows [0, n), in chunks under short read
// locks, and sets f.gen. It reports false when a row moved meanwhile or the
// partition shrank below n rows.
func (p *Partition) assignAll(f *ivf, n int) bool {
	f.list = make([]int32, n)
	rows := make([]int32, ivfAssignChunk)
	p.mu.RLock()
	f.gen = p.rowGen
	p.mu.RUnlock()
	for a := 0; a < n; a += ivfAssignChunk {
		b := min(n, a+ivfAssignChunk)
		rs := rows[:b-a]
		for i := range rs {
			rs[i] = int32(a + i)
		}
		p.mu.RLock()
		ok := p.rowGen == f.gen && p.rows >= n
		if ok {
			p.assignRows(f, rs, f.list[a:b])
		}
		p.mu.RUnlock()
		if !ok {
			return false
		}
	}
	return true
}

// install makes f the partition's inverted file: f.list holds the lists of
// rows [0, n), assigned at the current row generation. Under the write
// lock.
func (p *Partition) install(f *ivf, n int) {
	// The rows added since, in blocks.
	if extra := p.rows - n; extra > 0 {
		rows := make([]int32, extra)
		for i := range rows {
			rows[i] = int32(n + i)
		}
		f.list = slices.Grow(f.list, extra)[:p.rows]
		p.assignRows(f, rows, f.list[n:])
	}
	counts := make([]int, f.nlist)
	for _, l := range f.list {
		counts[l]++
	}
	f.lists = make([][]ivfRow, f.nlist)
	for l := range f.nlist {
		f.lists[l] = make([]ivfRow, 0, counts[l]+counts[l]/4+4)
	}
	f.pos = make([]int32, len(f.list))
	for r, l := range f.list {
		f.pos[r] = int32(len(f.lists[l]))
		f.lists[l] = append(f.lists[l], p.ivfRowOf(r))
	}
	if old := p.ivf; old != nil {
		p.bytes -= old.bytes(p.stride)
	}
	p.ivf = f
	p.bytes += f.bytes(p.stride)
	p.dropProj() // the inverted file answers instead
}

// Calibration. A fixed number of probes gives very different recall on
// different data: on well-separated topics 1/16 of the lists finds the
// exact top 10 every time; on 2,000 topics it finds 85 % of it, on a
// low-rank continuum 54 %. So the number of probes is chosen on the
// partition's own vectors when the lists are made: ivfCalibQueries rows,
// evenly spaced, are searched exactly (their own row excluded), and the
// probes are the fewest lists, in the order of their centroid's score, that
// hold ivfCalibRecall of those true neighbours, plus a quarter, and at
// least ivfMinProbes. When that
// is more than 1/ivfMaxProbeShare of the lists, probing would not be
// clearly faster than the exact scan (a gathered row costs several times a
// scanned one), and the partition stays exact.
const (
	ivfCalibQueries  = 100
	ivfCalibK        = 10
	ivfCalibRecall   = 0.995
	ivfMaxProbeShare = 8
	// ivfMinProbes is the fewest lists probed: on well-separated topics
	// calibration asks for 1 or 2 of 100 lists, and a query that is not a
	// row then fell to recall@10 0.983–0.990 in 2 of 18 builds of one 20k
	// partition (TestIVFRecall); with 8, 30 of 30 builds gave 0.993–1.
	ivfMinProbes = 8
)

// calibrate sets f.probes and reports whether the inverted file is worth
// keeping. Each query holds the read lock for one exact search.
func (p *Partition) calibrate(f *ivf) bool {
	sc := getScratch()
	defer putScratch(sc)
	// Every active row passes, restricted or not.
	now := time.Now().UnixMicro()
	cf := compiled{anyAgent: true, anyConv: true, kinds: 0xff, sources: 0xff, restrictedOK: true, asOf: now, expiredAt: now}
	hist := make([]float64, f.nlist) // share of the neighbours by the rank of their list
	cs := make([]int32, f.nlist)
	order := make([]ivfScore, f.nlist)
	rank := make([]int32, f.nlist)
	nbRows := make([]int32, 0, ivfCalibK+1)
	nbLists := make([]int32, ivfCalibK+1)
	m := ivfCalibQueries
	for i := range m {
		p.mu.RLock()
		n, stride := p.rows, p.stride
		if n == 0 {
			p.mu.RUnlock()
			return false
		}
		r := int((int64(i)*int64(n) + int64(n)/2) / int64(m))
		qv := prepareQuery(p.vec(r), p.normOf(r), stride, sc.qcodes)
		sc.qcodes = qv.codes
		hits, _ := p.exactTopK(&qv, &cf, ivfCalibK+1, sc)
		self := p.slotOfRow(r)
		nbRows = nbRows[:0]
		for _, h := range hits {
			if h.slot != self && len(nbRows) < ivfCalibK {
				nbRows = append(nbRows, p.sl(h.slot).row)
			}
		}
		p.assignRows(f, nbRows, nbLists[:len(nbRows)])
		dots(qv.codes, f.cent8, stride, cs)
		p.mu.RUnlock()
		for l := range order {
			order[l] = ivfScore{int32(l), float64(f.cscale[l]) * float64(cs[l])}
		}
		slices.SortFunc(order, func(a, b ivfScore) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return int(a.list - b.list)
		})
		for j, o := range order {
			rank[o.list] = int32(j)
		}
		for _, l := range nbLists[:len(nbRows)] {
			hist[rank[l]] += 1 / float64(len(nbRows)*m)
		}
	}
	probes, sum := f.nlist, 0.0
	for j, h := range hist {
		if sum += h; sum >= ivfCalibRecall {
			probes = j + 1
			break
		}
	}
	probes = min(f.nlist, max(probes+(probes+3)/4, ivfMinProbes))
	f.probes = probes
	if p.cfg.probeAll {
		f.probes = f.nlist
		return true
	}
	return probes*ivfMaxProbeShare <= f.nlist
}

// setCentroids quantizes the unit centroids cent (nlist × dim) both ways.
func (f *ivf) setCentroids(cent []float64, dim, stride int) {
	f.cent8 = slices.Grow(f.cent8[:0], f.nlist*stride)[:f.nlist*stride]
	f.cscale = slices.Grow(f.cscale[:0], f.nlist)[:f.nlist]
	v := make([]float32, dim)
	emax := float64(queryCodeMax(stride))
	for l := range f.nlist {
		c := cent[l*dim : (l+1)*dim]
		for j, x := range c {
			v[j] = float32(x)
		}
		norm := norm64(v)
		if norm == 0 {
			v[0], norm = 1, 1
		}
		f.cscale[l], _ = quantize(v, norm, f.cent8[l*stride:(l+1)*stride])
		// As a query, on one grid shared by every centroid (unit
		// vectors, components in [-1, 1]), so that the integer dot
		// products of a row with every centroid compare directly.
		q := f.cent16[l*stride : (l+1)*stride]
		for j, x := range v {
			q[j] = int16(math.Round(float64(x) / norm * emax))
		}
		clear(q[dim:])
	}
}

// assignRows sets out[i] to the list of the centroid nearest rows[i], with
// the kernel: each block of rows is scored against every centroid while it
// is in cache.
func (p *Partition) assignRows(f *ivf, rows []int32, out []int32) {
	stride := p.stride
	var wg sync.WaitGroup
	parts := 1
	if len(rows) >= 4*blockRows {
		parts = max(1, min(len(rows)/blockRows, parallelism(p.cfg)))
	}
	chunk := (len(rows) + parts - 1) / parts
	for w := range parts {
		from, to := min(w*chunk, len(rows)), min((w+1)*chunk, len(rows))
		wg.Go(func() {
			buf := make([]int8, blockRows*stride)
			dst := make([]int32, blockRows)
			best := make([]int32, blockRows)
			for b0 := from; b0 < to; b0 += blockRows {
				nb := min(blockRows, to-b0)
				for i, r := range rows[b0 : b0+nb] {
					c, o := p.row(int(r))
					copy(buf[i*stride:(i+1)*stride], c.codes[o*stride:(o+1)*stride])
				}
				for i := range nb {
					best[i] = math.MinInt32
				}
				for l := range f.nlist {
					dots(f.cent16[l*stride:(l+1)*stride], buf[:nb*stride], stride, dst[:nb])
					for i, d := range dst[:nb] {
						if d > best[i] {
							best[i], out[b0+i] = d, int32(l)
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

func parallelism(cfg Config) int {
	if cfg.MaxParallel > 0 {
		return cfg.MaxParallel
	}
	return runtime.GOMAXPROCS(0)
}

// ivfTopK is vectorTopK over the rows of the lists nearest q. It reports
// ok false when those rows hold fewer than k that pass f: the caller then
// scans them all.
func (p *Partition) ivfTopK(qv *qvec, f *compiled, k int, sc *scratch) (hits []hit, rescored int, ok bool) {
	iv := p.ivf
	stride := p.stride
	// Score the centroids (their codes are rows to the kernel).
	if cap(sc.cscores) < iv.nlist {
		sc.cscores = make([]int32, iv.nlist)
	}
	cs := sc.cscores[:iv.nlist]
	dots(qv.codes, iv.cent8, stride, cs)
	order := sc.order[:0]
	for l := range iv.nlist {
		order = append(order, ivfScore{int32(l), float64(iv.cscale[l]) * float64(cs[l])})
	}
	np := iv.probes
	// The np best lists, by a partial sort.
	if np < len(order) {
		selectTop(order, np)
		order = order[:np]
	}
	sc.order = order

	// The probed rows, flat, and pointers to their codes.
	ptrs, ents := sc.ptrs[:0], sc.ents[:0]
	for _, o := range order {
		for _, e := range iv.lists[o.list] {
			c, i := p.row(int(e.row))
			ptrs = append(ptrs, &c.codes[i*stride])
			ents = append(ents, e)
		}
	}
	nrows := len(ents)
	if nrows == 0 {
		sc.ptrs, sc.ents = ptrs, ents
		return nil, 0, false
	}
	// Pad to a multiple of 4, plus the rows the kernel may prefetch.
	for range (4-nrows%4)%4 + gatherAhead {
		ptrs = append(ptrs, ptrs[0])
	}
	sc.ptrs, sc.ents = ptrs, ents
	// The pointers must not keep the partition reachable from the pool.
	defer clear(ptrs)

	parts := 1
	if nrows >= 2*ivfParallelMinRows {
		parts = max(1, min(nrows/ivfParallelMinRows, parallelism(p.cfg)))
	}
	ws := sc.workers(parts)
	chunk := (nrows + parts - 1) / parts
	chunk = (chunk + blockRows - 1) / blockRows * blockRows
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		from, to := min(i*chunk, nrows), min((i+1)*chunk, nrows)
		w := ws[i]
		wg.Go(func() { p.scanGathered(qv, f, k, ptrs, ents, from, to, w) })
	}
	p.scanGathered(qv, f, k, ptrs, ents, 0, min(chunk, nrows), ws[0])
	wg.Wait()
	passed := 0
	for _, w := range ws {
		passed += len(w.lows)
	}
	if passed < k {
		return nil, 0, false
	}
	hits, rescored = p.rescore(qv, ws, k, sc)
	return hits, rescored, true
}

// ivfParallelMinRows is the least number of probed rows each goroutine of an
// inverted-file search gets.
const ivfParallelMinRows = 2048

// scanGathered is scan over the probed rows ents[from:to] (from a multiple
// of blockRows), whose codes ptrs point to.
func (p *Partition) scanGathered(qv *qvec, f *compiled, k int, ptrs []*int8, ents []ivfRow, from, to int, w *worker) {
	w.reset()
	tau := math.Inf(-1)
	t, rho := qv.t, qv.rho
	prune := max(4*k, 256)
	buf := w.buf[:]
	for b0 := from; b0 < to; b0 += blockRows {
		nb := min(blockRows, to-b0)
		nk := (nb + 3) &^ 3
		gatherDots(qv.codes, ptrs[b0:b0+nk+gatherAhead], p.stride, buf[:nk])
		for i, d := range buf[:nb] {
			e := &ents[b0+i]
			a := float64(e.scale) * t * float64(d)
			r := float64(e.resid)
			err := r + (1+r)*rho + roundingMargin
			if a+err < tau {
				continue
			}
			s := p.sl(p.slotOfRow(int(e.row)))
			if !f.pass(&s.m, s.id) {
				continue
			}
			w.cands = append(w.cands, vcand{e.row, a - err, a + err})
			tau = w.pushLow(a-err, k)
		}
		if len(w.cands) >= prune {
			w.cands = slices.DeleteFunc(w.cands, func(c vcand) bool { return c.hi < tau })
			prune = max(prune, 2*len(w.cands))
		}
	}
}

// ivfScore is a list and the query's approximate cosine to its centroid.
type ivfScore struct {
	list  int32
	score float64
}

// selectTop moves the n best scores (ties: lower list) to s[:n], in any
// order.
func selectTop(s []ivfScore, n int) {
	better := func(a, b ivfScore) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.list < b.list
	}
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		// Median of three as the pivot, then a Lomuto partition.
		m := lo + (hi-lo)/2
		if better(s[hi-1], s[lo]) {
			s[lo], s[hi-1] = s[hi-1], s[lo]
		}
		if better(s[m], s[lo]) {
			s[lo], s[m] = s[m], s[lo]
		}
		if better(s[hi-1], s[m]) {
			s[m], s[hi-1] = s[hi-1], s[m]
		}
		s[m], s[hi-1] = s[hi-1], s[m]
		pivot := s[hi-1]
		j := lo
		for i := lo; i < hi-1; i++ {
			if better(s[i], pivot) {
				s[i], s[j] = s[j], s[i]
				j++
			}
		}
		s[j], s[hi-1] = s[hi-1], s[j]
		switch {
		case j == n || j+1 == n:
			return
		case j > n:
			hi = j
		default:
			lo = j + 1
		}
	}
}

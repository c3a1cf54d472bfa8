package index

import (
	"math"
	"runtime"
	"slices"
	"sync"
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
	trained int     // rows when the centroids were trained
	cent16  []int16 // nlist × stride: centroids quantized as queries, to assign rows
	cent8   []int8  // nlist × stride: centroids quantized as rows, to score queries
	cscale  []float32
	lists   [][]int32 // rows by list
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
	if min <= 0 || p.rows < min && f == nil {
		return
	}
	if f == nil || p.rows >= 2*f.trained {
		p.trainIVF()
		return
	}
	l := p.nearestList(r)
	c := cap(f.list) + cap(f.pos) + cap(f.lists[l])
	f.list = append(f.list, int32(l))
	f.pos = append(f.pos, int32(len(f.lists[l])))
	f.lists[l] = append(f.lists[l], int32(r))
	p.bytes += 4 * int64(cap(f.list)+cap(f.pos)+cap(f.lists[l])-c)
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
		f.pos[moved] = i
	}
	f.lists[l] = ls[:len(ls)-1]
	// Row last is now row r.
	if r != last {
		l, i := f.list[last], f.pos[last]
		f.lists[l][i] = int32(r)
		f.list[r], f.pos[r] = l, i
	}
	f.list, f.pos = f.list[:last], f.pos[:last]
}

// bytes is the memory of the inverted file, counted by capacity: the
// centroids, the lists and the by-row arrays. (Removals keep capacity.)
func (f *ivf) bytes(stride int) int64 {
	n := int64(f.nlist)*int64(3*stride+4+24) + 4*int64(cap(f.list)+cap(f.pos))
	for _, l := range f.lists {
		n += 4 * int64(cap(l))
	}
	return n
}

// nearestList returns the list whose centroid is nearest row r's direction.
func (p *Partition) nearestList(r int) int {
	f := p.ivf
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

// trainIVF clusters the partition's rows and fills the lists.
func (p *Partition) trainIVF() {
	if f := p.ivf; f != nil {
		p.bytes -= f.bytes(p.stride)
	}
	n, dim, stride := p.rows, p.dim, p.stride
	nlist := max(1, int(math.Round(math.Sqrt(float64(n)))))
	f := &ivf{nlist: nlist, trained: n}
	// Training rows, evenly spaced: deterministic.
	m := min(n, nlist*ivfTrainPerList)
	train := make([]int32, m)
	for i := range train {
		train[i] = int32(int64(i) * int64(n) / int64(m))
	}
	// Initial centroids: evenly spaced training rows.
	cent := make([]float64, nlist*dim)
	for l := range nlist {
		r := int(train[int64(l)*int64(m)/int64(nlist)])
		v, norm := p.vec(r), p.normOf(r)
		for j, x := range v {
			cent[l*dim+j] = float64(x) / norm
		}
	}
	f.cent16 = make([]int16, nlist*stride)
	assign := make([]int32, m)
	sums := make([]float64, nlist*dim)
	counts := make([]int, nlist)
	for it := 0; ; it++ {
		f.setCentroids(cent, dim, stride)
		p.assignRows(f, train, assign)
		if it == ivfIterations {
			break
		}
		clear(sums)
		clear(counts)
		for i, r := range train {
			l := int(assign[i])
			v, norm := p.vec(int(r)), p.normOf(int(r))
			s := sums[l*dim : (l+1)*dim]
			for j, x := range v {
				s[j] += float64(x) / norm
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
	// Every row to its list.
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	f.list = make([]int32, n)
	p.assignRows(f, all, f.list)
	counts = counts[:0]
	counts = append(counts, make([]int, nlist)...)
	for _, l := range f.list {
		counts[l]++
	}
	f.lists = make([][]int32, nlist)
	for l := range nlist {
		f.lists[l] = make([]int32, 0, counts[l]+counts[l]/4+4)
	}
	f.pos = make([]int32, n)
	for r, l := range f.list {
		f.pos[r] = int32(len(f.lists[l]))
		f.lists[l] = append(f.lists[l], int32(r))
	}
	p.ivf = f
	p.bytes += f.bytes(stride)
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

// ivfProbes is how many lists a search probes: a fixed share of the lists,
// at least ivfMinProbes.
func ivfProbes(nlist int) int {
	return min(nlist, max(ivfMinProbes, nlist/ivfProbeDiv))
}

const (
	ivfMinProbes = 12
	ivfProbeDiv  = 16
)

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
	np := ivfProbes(iv.nlist)
	// The np best lists, by a partial sort.
	if np < len(order) {
		selectTop(order, np)
		order = order[:np]
	}
	sc.order = order

	w := sc.workers(1)[0]
	w.reset()
	tau := math.Inf(-1)
	ptrs := sc.ptrs[:0]
	rows := sc.grows[:0]
	for _, o := range order {
		for _, r := range iv.lists[o.list] {
			c, i := p.row(int(r))
			ptrs = append(ptrs, &c.codes[i*stride])
			rows = append(rows, r)
		}
	}
	nrows := len(rows)
	if nrows == 0 {
		sc.ptrs, sc.grows = ptrs, rows
		return nil, 0, false
	}
	// Pad to a multiple of 4, plus the rows the kernel may prefetch.
	pad := (4-nrows%4)%4 + gatherAhead
	for range pad {
		ptrs = append(ptrs, ptrs[0])
	}
	sc.ptrs, sc.grows = ptrs, rows
	// The pointers must not keep the partition reachable from the pool.
	defer clear(ptrs)
	t, rho := qv.t, qv.rho
	prune := max(4*k, 256)
	buf := w.buf[:]
	for b0 := 0; b0 < nrows; b0 += blockRows {
		nb := min(blockRows, nrows-b0)
		nk := (nb + 3) &^ 3
		gatherDots(qv.codes, ptrs[b0:b0+nk+gatherAhead], stride, buf[:nk])
		for i, d := range buf[:nb] {
			r := int(rows[b0+i])
			c, o := p.row(r)
			a := float64(c.scales[o]) * t * float64(d)
			res := float64(c.resid[o])
			e := res + (1+res)*rho + roundingMargin
			if a+e < tau {
				continue
			}
			s := p.sl(c.rowSlot[o])
			if !f.pass(&s.m, s.id) {
				continue
			}
			w.cands = append(w.cands, vcand{int32(r), a - e, a + e})
			tau = w.pushLow(a-e, k)
		}
		if len(w.cands) >= prune {
			w.cands = slices.DeleteFunc(w.cands, func(c vcand) bool { return c.hi < tau })
			prune = max(prune, 2*len(w.cands))
		}
	}
	if len(w.lows) < k {
		return nil, 0, false
	}
	hits = sc.hits[:0]
	for _, c := range w.cands {
		if c.hi < tau {
			continue
		}
		r := int(c.row)
		cos := cosineWithNorms(qv.vec, p.vec(r), qv.norm, p.normOf(r))
		hits = append(hits, hit{p.slotOfRow(r), float64(cos)})
	}
	sc.hits = hits
	rescored = len(hits)
	slices.SortFunc(hits, p.cmpHits)
	if len(hits) > k {
		hits = hits[:k]
	}
	return slices.Clone(hits), rescored, true
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

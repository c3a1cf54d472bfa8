package index

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/memgate/memgate"
)

// Partition is the index of one (tenant, principal): vectors with their
// quantized copies, BM25 postings and statistics, and the filter fields of
// every entry. It is safe for concurrent use: searches share a read lock,
// writes take it exclusively.
type Partition struct {
	mu  sync.RWMutex
	cfg Config

	// Entries, by slot, in chunks (see rows.go). Slots of removed entries
	// go on the free list and are reused; postings refer to slots.
	slotChunks [][]slot
	nslots     int
	docLen     []int32  // by slot, dense: the text channel reads one per posting
	idKey      []uint64 // by slot, dense: the ids' order, for ties (idkey.go)
	idBase     string   // the prefix every id placed in idKey shares (idkey.go)
	free       []int32
	ids        idTable // id → slot
	live       int

	// Vectors, by row, in chunks (see rows.go): dense, in slot-independent
	// order (a removal moves the last row into the hole). The vectors are
	// kept as given, beside their quantized directions.
	dim, stride int
	chunks      []rowChunk
	rows        int

	terms    map[string]*postings
	tfilter  termFilter // of terms (termfilter.go)
	totalLen int64

	// Groups: the entries of each non-empty Entry.Group, in insertion
	// order, as a doubly linked list through the slots. seq is the last
	// sequence number given.
	groups map[string]*group
	seq    int64

	agents, convs map[string]uint32
	refs          []termRef // scratch for upsert, under the write lock

	// refSlab, while the Index loads the partition, is where the entries'
	// term references are cut from, a few thousand at a time instead of
	// one allocation an entry; nil otherwise. What removals free of it
	// stays allocated until the whole slab is unreferenced: at most what
	// the load allocated.
	refSlab []termRef
	idSlab  []byte // likewise for the entries' ids (keep)

	bytes int64

	// ivf is the inverted file of a large partition (ivf.go), or nil;
	// none is made again below ivfRetry rows (calibration found it not
	// worth it).
	ivf      *ivf
	ivfRetry int
	// proj is the projected first pass of a large partition (proj.go), or
	// nil; none is learnt again below projRetry rows.
	proj      *proj
	projRetry int
	// accounted is the part of bytes the Index has been told of: the
	// trainer changes bytes in the background, and the next write reports
	// the difference (Index.write), or the next search, which bgChanged
	// (set by the trainer) sends to Index.reconcile.
	accounted int64
	bgChanged atomic.Bool
	// The background trainer of the inverted file (ivf.go): whether it
	// runs, to wait for it, and a count of row moves (removals), by which
	// it knows whether its assignment is still current.
	training bool
	trainWG  sync.WaitGroup
	rowGen   uint64
	// loading is set while the Index loads the partition (a bulk load):
	// the first row chunk grows four times over, term references come
	// from refSlab, and the trainer is deferred to the load's end
	// (endLoad).
	loading, trainDeferred bool
	// expect is the number of entries a load announced (reserve), 0 when
	// none did: the storage is sized for it as the load goes.
	expect int

	// version is the store version the partition reflects (see Loader):
	// set by the Index when it loads the partition and by Apply. A
	// partition made with NewPartition stays at 0.
	version int64
}

type slot struct {
	id         string
	m          meta
	row        int32 // -1: no vector
	prev, next int32 // the previous and next slots of the group; -1: none
	seq        int64
	group      *group // nil: no group
	terms      []termRef
}

// group is the list of the entries of one group, in insertion order (which
// is ascending seq order): head and tail are slots, -1 when empty.
type group struct {
	name       string
	head, tail int32
	n          int
}

// Memory of a partition. The chunks (rows.go), slots, postings lists and
// term references are counted exactly, by capacity; map entries and small
// strings are estimates (a map slot at its average load, an allocation
// rounded up to its size class), for the budget. bench/indexmem holds the
// sum to the measured RSS.
const (
	mapEntryBytes = 40                 // a map slot at average load (Go swiss tables)
	termBytes     = 40 + mapEntryBytes // postings header and term map entry
	refSize       = 16                 // termRef
	postingSize   = 8                  // posting
	internBytes   = 24 + mapEntryBytes // agent or conversation map entry
	groupBytes    = 48 + mapEntryBytes // group and its map entry
	freeBytes     = 4                  // a free-list entry
	scratchBytes  = 8                  // per-slot BM25 accumulator of a search (pooled, shared)
)

// allocSize is the memory of a small allocation of n bytes: n rounded up to
// its size class, about.
func allocSize(n int) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 16:
		return int64(n+7) &^ 7
	case n <= 128:
		return int64(n+15) &^ 15
	case n <= 1024:
		return int64(n+63) &^ 63
	}
	return int64(n+511) &^ 511
}

// NewPartition returns an empty partition. Only cfg's parallelism settings
// apply to a partition.
func NewPartition(cfg Config) *Partition {
	return &Partition{
		cfg:    cfg.WithDefaults(),
		terms:  make(map[string]*postings),
		agents: make(map[string]uint32),
		convs:  make(map[string]uint32),
		groups: make(map[string]*group),
	}
}

// PartitionStats describes a partition.
type PartitionStats struct {
	Entries   int     // N for BM25
	Vectors   int     // entries with a vector
	Dim       int     // dimension of the vectors, 0 when there are none
	Terms     int     // distinct terms
	Groups    int     // non-empty groups
	TotalLen  int64   // Σ entry lengths
	AvgDocLen float64 // TotalLen / Entries
	Bytes     int64   // estimated memory
	// Projection is the dimension of the projected first pass (proj.go),
	// 0 when the partition has none.
	Projection int
}

// Stats returns the partition's statistics.
func (p *Partition) Stats() PartitionStats {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return PartitionStats{
		Entries:   p.live,
		Vectors:   p.rows,
		Dim:       p.dim,
		Terms:     len(p.terms),
		Groups:    len(p.groups),
		TotalLen:  p.totalLen,
		AvgDocLen: p.avgDocLen(),
		Bytes:     p.bytes,
		Projection: func() int {
			if p.proj == nil {
				return 0
			}
			return p.proj.d
		}(),
	}
}

// DF returns the number of entries that contain term.
func (p *Partition) DF(term string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if pl := p.terms[term]; pl != nil {
		return len(pl.list)
	}
	return 0
}

// DFs returns the number of entries and the number that contain each of
// terms, in one read of the partition.
func (p *Partition) DFs(terms []string) (n int, df []int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	df = make([]int, len(terms))
	for i, t := range terms {
		if pl := p.terms[t]; pl != nil {
			df[i] = len(pl.list)
		}
	}
	return p.live, df
}

// Holds reports, for each of terms, whether an entry of the partition
// contains it, in one read of the partition; hashes[i] is
// analysis.TermHash(terms[i]) (relate.Word.TermHash), which lets most
// absent terms be answered by the term filter (termfilter.go) without a
// map lookup. It panics unless there is a hash for every term.
func (p *Partition) Holds(terms []string, hashes []uint64) []bool {
	if len(hashes) != len(terms) {
		panic("index: Holds: a hash for every term")
	}
	out := make([]bool, len(terms))
	p.mu.RLock()
	defer p.mu.RUnlock()
	for i, t := range terms {
		if p.tfilter.mayHold(hashes[i]) {
			_, out[i] = p.terms[t]
		}
	}
	return out
}

// Bytes returns the estimated memory of the partition.
func (p *Partition) Bytes() int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.bytes
}

func (p *Partition) avgDocLen() float64 {
	if p.live == 0 {
		return 0
	}
	return float64(p.totalLen) / float64(p.live)
}

// Upsert adds e, or replaces the entry with e's ID. A vector whose dimension
// differs from the partition's other vectors is refused (invalid_argument):
// the engine passes nil for vectors of another model, so a mismatch is a bug
// upstream, not something to paper over.
//
// A new entry gets the next sequence number of the partition and goes to
// the end of its group: the groups are in insertion order (a load inserts
// the store's entries in the order it is given them). A replaced entry keeps
// its sequence number and its place in its group, unless its group changes:
// then it gets a new sequence number and goes to the end of the new group,
// as if inserted now, so that Seq order is group order.
func (p *Partition) Upsert(e Entry) error {
	norm, err := e.check()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.upsert(&e, norm)
	return err
}

// Remove removes the entry with id and reports whether it was there.
func (p *Partition) Remove(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.remove(id)
	return ok
}

// upsert runs under the write lock; it returns the change in bytes.
func (p *Partition) upsert(e *Entry, norm float64) (int64, error) {
	before := p.bytes
	old, exists := p.findID(e.ID)
	if e.Vector != nil {
		rows := p.rows
		if exists && p.sl(old).row >= 0 {
			rows--
		}
		if rows > 0 && len(e.Vector) != p.dim {
			return 0, memgate.FieldError("vector", "has %d dimensions, the partition's vectors have %d (id %s)", len(e.Vector), p.dim, e.ID)
		}
	}
	pl := place{after: -1}
	if exists {
		if s := p.sl(old); s.groupName() == e.Group {
			pl = place{seq: s.seq, after: s.prev, keep: true}
		}
		p.removeSlot(old)
	}
	p.add(e, norm, pl)
	return p.bytes - before, nil
}

// place is where add puts an entry: a replaced entry that stays in its group
// keeps its sequence number and goes back after the slot that preceded it
// (at the head when after is -1); any other entry gets the next sequence
// number and goes to the end of its group.
type place struct {
	seq   int64
	after int32
	keep  bool
}

func (s *slot) groupName() string {
	if s.group == nil {
		return ""
	}
	return s.group.name
}

// link inserts slot sl into group g after slot after, or at the head when
// after is -1.
func (p *Partition) link(g *group, sl, after int32) {
	s := p.sl(sl)
	s.group, s.prev = g, after
	if after < 0 {
		s.next = g.head
		g.head = sl
	} else {
		a := p.sl(after)
		s.next = a.next
		a.next = sl
	}
	if s.next >= 0 {
		p.sl(s.next).prev = sl
	} else {
		g.tail = sl
	}
	g.n++
}

// unlink removes slot sl from its group, and an emptied group from the
// partition.
func (p *Partition) unlink(sl int32) {
	s := p.sl(sl)
	g := s.group
	if g == nil {
		return
	}
	if s.prev >= 0 {
		p.sl(s.prev).next = s.next
	} else {
		g.head = s.next
	}
	if s.next >= 0 {
		p.sl(s.next).prev = s.prev
	} else {
		g.tail = s.prev
	}
	s.group, s.prev, s.next = nil, -1, -1
	if g.n--; g.n == 0 {
		delete(p.groups, g.name)
		p.bytes -= groupBytes + allocSize(len(g.name))
	}
}

func (p *Partition) remove(id string) (int64, bool) {
	sl, ok := p.findID(id)
	if !ok {
		return 0, false
	}
	before := p.bytes
	p.removeSlot(sl)
	return p.bytes - before, true
}

func (p *Partition) intern(m map[string]uint32, s string) uint32 {
	if s == "" {
		return 0
	}
	id, ok := m[s]
	if !ok {
		id = uint32(len(m) + 1)
		m[strings.Clone(s)] = id
		p.bytes += internBytes + allocSize(len(s))
	}
	return id
}

func (p *Partition) lookup(m map[string]uint32, s string) uint32 {
	if id, ok := m[s]; ok {
		return id
	}
	return noMatch
}

func (p *Partition) metaOf(e *Entry) meta {
	m := meta{
		agent:      p.intern(p.agents, e.Agent),
		conv:       p.intern(p.convs, e.Conversation),
		kind:       kindBit(e.Kind),
		source:     sourceBit(e.Source),
		created:    e.CreatedAt,
		expires:    e.ExpiresAt,
		validFrom:  e.ValidFrom,
		validUntil: e.ValidUntil,
	}
	if e.Status == memgate.StatusActive {
		m.flags |= flagActive
	}
	switch e.Sensitivity {
	case "", memgate.SensitivityStandard:
	default:
		m.flags |= flagRestricted // restricted, or unknown: fail closed
	}
	if e.ExpiresAt != 0 || e.ValidFrom != 0 || e.ValidUntil != 0 {
		m.flags |= flagTimed
	}
	return m
}

func (p *Partition) add(e *Entry, norm float64, pl place) {
	var sl int32
	if n := len(p.free); n > 0 {
		sl = p.free[n-1]
		p.free = p.free[:n-1]
		p.bytes -= freeBytes
	} else {
		var grown int
		sl, grown = p.newSlot()
		p.bytes += int64(grown) * slotSize
	}
	id := p.keep(e.ID)
	s := p.sl(sl)
	*s = slot{id: id, m: p.metaOf(e), row: -1, prev: -1, next: -1, seq: pl.seq}
	if !pl.keep {
		p.seq++
		s.seq = p.seq
	}
	if e.Group != "" {
		g := p.groups[e.Group]
		if g == nil {
			g = &group{name: strings.Clone(e.Group), head: -1, tail: -1}
			p.groups[g.name] = g
			p.bytes += groupBytes + allocSize(len(g.name))
		}
		after := g.tail
		if pl.keep {
			after = pl.after
		}
		p.link(g, sl, after)
	}
	p.bytes += p.insertID(id, sl)
	p.live++
	p.bytes += scratchBytes + allocSize(len(id))

	if e.Vector != nil {
		p.addRow(sl, e.Vector, norm)
	}

	if len(e.Terms) > 0 {
		// No posting refers to sl yet (removeSlot took the previous
		// occupant's out), so a term the entry already holds is the one
		// whose list ends with sl: a repeat costs no second map, and a
		// run of repeats (stored terms come grouped) no lookup at all.
		refs := p.refs[:0]
		var pl *postings
		prev := ""
		for i, t := range e.Terms {
			if i == 0 || t != prev {
				prev = t
				if pl = p.terms[t]; pl == nil {
					pl = &postings{term: strings.Clone(t)}
					p.terms[pl.term] = pl
					p.bytes += termBytes + allocSize(len(t)) + p.tfilter.addTerm(pl.term, p.terms)
				}
			}
			if n := len(pl.list); n > 0 && pl.list[n-1].slot == sl {
				pl.list[n-1].tf++
				continue
			}
			refs = append(refs, termRef{p: pl, pos: int32(len(pl.list))})
			c := cap(pl.list)
			pl.list = append(pl.list, posting{slot: sl, tf: 1})
			p.bytes += int64(cap(pl.list)-c) * postingSize
		}
		for i := range refs {
			r := &refs[i]
			r.tf = r.p.list[r.pos].tf
		}
		p.refs = refs[:0]
		if p.loading {
			s.terms = p.slabRefs(refs)
		} else {
			s.terms = slices.Clone(refs)
		}
		p.bytes += allocSize(refSize * len(refs))
	}
	p.docLen[sl] = int32(len(e.Terms))
	p.totalLen += int64(len(e.Terms))
	p.placeKey(sl, id)
}

// keep returns a copy of id, cut from the load's id slab while the
// partition loads (one allocation for many ids instead of one an id); what
// a removal frees of a slab stays allocated until all its ids are
// unreferenced, as with refSlab.
func (p *Partition) keep(id string) string {
	if !p.loading || len(id) > idSlabLen/8 {
		return strings.Clone(id)
	}
	if len(id) > cap(p.idSlab)-len(p.idSlab) {
		p.idSlab = make([]byte, 0, idSlabLen)
	}
	n := len(p.idSlab)
	p.idSlab = append(p.idSlab, id...)
	return unsafe.String(&p.idSlab[n], len(id))
}

// idSlabLen is the size of an id slab, in bytes.
const idSlabLen = 16 << 10

// refSlabLen is the number of term references a slab holds.
const refSlabLen = 4096

// slabRefs returns a copy of refs cut from the load's slab.
func (p *Partition) slabRefs(refs []termRef) []termRef {
	if len(refs) > cap(p.refSlab)-len(p.refSlab) {
		p.refSlab = make([]termRef, 0, max(refSlabLen, len(refs)))
	}
	n := len(p.refSlab)
	p.refSlab = append(p.refSlab, refs...)
	return p.refSlab[n:len(p.refSlab):len(p.refSlab)]
}

// addRow appends the vector v (of norm norm) of the entry at slot sl as the
// last row.
func (p *Partition) addRow(sl int32, v []float32, norm float64) {
	if p.rows == 0 {
		p.dim, p.stride = len(v), alignStride(len(v))
	}
	r := p.rows
	if r%chunkRows == 0 && r/chunkRows == len(p.chunks) {
		p.chunks = append(p.chunks, rowChunk{})
	}
	c := &p.chunks[r/chunkRows]
	p.bytes += int64(c.grow(r/chunkRows, p.dim, p.stride, p.loading, p.expect)) * rowBytesOf(p.dim, p.stride)
	i := c.rows()
	c.vecs = append(c.vecs, v...)
	c.codes = c.codes[:(i+1)*p.stride]
	scale, resid := quantize(v, norm, c.codes[i*p.stride:(i+1)*p.stride])
	c.norms = append(c.norms, norm)
	c.scales = append(c.scales, scale)
	c.resid = append(c.resid, resid)
	c.rowSlot = append(c.rowSlot, sl)
	p.sl(sl).row = int32(r)
	p.rows++
	p.ivfAdded(r)
	p.projAdded(v, norm)
}

func (p *Partition) removeSlot(sl int32) {
	s := p.sl(sl)
	for _, ref := range s.terms {
		pl := ref.p
		last := int32(len(pl.list) - 1)
		if ref.pos != last {
			moved := pl.list[last]
			pl.list[ref.pos] = moved
			ms := p.sl(moved.slot).terms
			for i := range ms {
				if ms[i].p == pl {
					ms[i].pos = ref.pos
					break
				}
			}
		}
		pl.list = pl.list[:last]
		if last == 0 {
			delete(p.terms, pl.term)
			p.bytes -= termBytes + allocSize(len(pl.term)) + int64(cap(pl.list))*postingSize
			p.bytes += p.tfilter.removed(p.terms)
		} else if cap(pl.list) > 64 && cap(pl.list) > 4*len(pl.list) {
			c := cap(pl.list)
			pl.list = slices.Clone(pl.list)
			p.bytes -= int64(c-cap(pl.list)) * postingSize
		}
	}
	p.bytes -= allocSize(refSize * len(s.terms))
	if s.row >= 0 {
		p.removeRow(int(s.row))
	}
	p.unlink(sl)
	p.totalLen -= int64(p.docLen[sl])
	p.docLen[sl] = 0
	p.deleteID(s.id, sl)
	p.bytes -= scratchBytes + allocSize(len(s.id))
	*s = slot{row: -1, prev: -1, next: -1}
	p.free = append(p.free, sl)
	p.bytes += freeBytes
	p.live--
}

// removeRow removes row r, moving the last row into its place.
func (p *Partition) removeRow(r int) {
	last := p.rows - 1
	d, st := p.dim, p.stride
	lc, li := p.row(last)
	if r != last {
		c, i := p.row(r)
		copy(c.vecs[i*d:(i+1)*d], lc.vecs[li*d:])
		copy(c.codes[i*st:(i+1)*st], lc.codes[li*st:])
		c.norms[i] = lc.norms[li]
		c.scales[i] = lc.scales[li]
		c.resid[i] = lc.resid[li]
		c.rowSlot[i] = lc.rowSlot[li]
		p.sl(c.rowSlot[i]).row = int32(r)
	}
	lc.vecs = lc.vecs[:li*d]
	lc.codes = lc.codes[:li*st]
	lc.norms = lc.norms[:li]
	lc.scales = lc.scales[:li]
	lc.resid = lc.resid[:li]
	lc.rowSlot = lc.rowSlot[:li]
	p.rows--
	p.rowGen++
	p.ivfRemoved(r, last)
	p.projRemoved(r)
	if li == 0 {
		// The last chunk is empty: give it back. With no vectors left, the
		// next one may have another dimension.
		p.bytes -= int64(cap(lc.rowSlot)) * rowBytesOf(d, st)
		p.chunks[len(p.chunks)-1] = rowChunk{}
		p.chunks = p.chunks[:len(p.chunks)-1]
		if p.rows == 0 {
			p.dim, p.stride, p.chunks = 0, 0, nil
		}
	}
}

// Search proposes candidates for q: the exact top q.K by cosine (in a
// partition with an inverted file, the exact top q.K of the rows of the
// lists nearest q, Result.Approximate; see Config.ApproxMinRows) and the
// top q.K by BM25 among the entries that pass q.Filter, each with both
// scores, and the group neighbours of those that q.Neighbors asks for.
//
// A query vector whose dimension differs from the partition's vectors is
// refused (invalid_argument); a partition without vectors simply has no
// vector channel.
func (p *Partition) Search(q Query) (*Result, error) {
	if q.K < 1 || q.K > MaxK {
		return nil, memgate.FieldError("k", "must be between 1 and %d", MaxK)
	}
	if err := q.Neighbors.check(); err != nil {
		return nil, err
	}
	if len(q.Related) > MaxRelated {
		return nil, memgate.FieldError("related", "must have at most %d words", MaxRelated)
	}
	var qnorm, cnorm float64
	if len(q.Vector) == 0 {
		q.Vector = nil // empty is none
	} else {
		var ok bool
		if len(q.Vector) > MaxDim {
			return nil, memgate.FieldError("vector", "must have at most %d values", MaxDim)
		}
		if qnorm, ok = checkVector(q.Vector); !ok {
			return nil, memgate.FieldError("vector", "must be finite with a non-zero norm")
		}
	}
	if len(q.ContentVector) == 0 || q.Vector == nil {
		q.ContentVector = nil
	} else {
		var ok bool
		if len(q.ContentVector) != len(q.Vector) {
			return nil, memgate.FieldError("content_vector", "must have the query vector's %d dimensions", len(q.Vector))
		}
		if cnorm, ok = checkVector(q.ContentVector); !ok {
			return nil, memgate.FieldError("content_vector", "must be finite with a non-zero norm")
		}
	}

	p.mu.RLock()
	defer p.mu.RUnlock()

	f, err := q.Filter.compile(p)
	if err != nil {
		return nil, err
	}
	if q.Vector != nil && p.dim != 0 && len(q.Vector) != p.dim {
		return nil, memgate.FieldError("vector", "has %d dimensions, the partition's vectors have %d", len(q.Vector), p.dim)
	}

	sc := getScratch()
	defer putScratch(sc)

	res := &Result{N: p.live, AvgDocLen: p.avgDocLen(), Version: p.version}

	// Text: BM25 over the postings of the query terms and their related
	// words.
	sc.qterms = distinctTerms(q.Terms, sc.qterms)
	res.QueryTerms = len(sc.qterms)
	res.Terms = make([]TermStat, len(sc.qterms))
	qts := sc.qts[:0]
	for j, t := range sc.qterms {
		df := 0
		pl := p.terms[t]
		if pl != nil {
			df = len(pl.list)
		}
		idf := IDF(p.live, df)
		res.IDFSum += idf
		excluded := slices.Contains(q.Exclude, t)
		if !excluded {
			res.ContentIDFSum += idf
		}
		res.Terms[j] = TermStat{Term: t, DF: df, IDF: idf, Excluded: excluded}
		if pl != nil {
			qts = append(qts, qterm{pl: pl, idf: idf, excluded: excluded, of: j, weight: 1})
		}
	}
	for i, r := range q.Related {
		if !(r.Weight > 0) {
			continue
		}
		j := slices.Index(sc.qterms, r.Of)
		if j < 0 || res.Terms[j].Excluded || r.Term == r.Of {
			continue
		}
		if pl := p.terms[r.Term]; pl != nil {
			w := min(r.Weight, 1)
			qts = append(qts, qterm{pl: pl, idf: res.Terms[j].IDF * w, of: j, related: i + 1, weight: w})
		}
	}
	sc.qts = qts
	haveText := len(qts) > 0
	if haveText {
		sc.grow(p.nslots)
		defer sc.resetText()
		res.Postings = p.accumulate(qts, &f, q.K, res.AvgDocLen, sc)
	}

	var vtop []hit
	if q.Vector != nil && p.rows > 0 {
		sc.qv = prepareQuery(q.Vector, qnorm, p.stride, sc.qcodes)
		sc.qcodes = sc.qv.codes
		vtop, res.Rescored, res.Approximate = p.vectorTopK(&sc.qv, &f, q.K, sc)
	}
	var ttop []hit
	if haveText {
		ttop = p.textTopK(&f, q.K, sc)
	}

	// The slots of the candidates, in result order: the vector channel's,
	// the text channel's that the vector channel lacks (dup[i] is the
	// vector candidate text candidate i is, or -1), then the neighbours,
	// found first so that the candidates are allocated once.
	cslots := sc.cslots[:0]
	for _, h := range vtop {
		cslots = append(cslots, h.slot)
	}
	dup := sc.dup[:0]
	if len(ttop) > 0 {
		// Index the vector candidates by slot to merge the text channel in.
		vi := &sc.slots
		vi.reset(len(vtop))
		for i, h := range vtop {
			vi.add(h.slot, int32(i))
		}
		for _, h := range ttop {
			if j, ok := vi.get(h.slot); ok {
				dup = append(dup, j)
				continue
			}
			dup = append(dup, -1)
			cslots = append(cslots, h.slot)
		}
	}
	sc.cslots, sc.dup = cslots, dup
	var nbs []int32
	if q.Neighbors != (Neighbors{}) {
		nbs = p.neighbors(cslots, q.Neighbors, &f, sc)
	}

	res.Candidates = make([]Candidate, 0, len(cslots)+len(nbs))
	sc.cosReqs = sc.cosReqs[:0]
	sc.cqm, sc.cqmEnd = sc.cqm[:0], sc.cqmEnd[:0]
	for i, h := range vtop {
		c := p.candidate(h.slot)
		c.Cosine, c.HasVector, c.VectorRank = float32(h.score), true, i+1
		if haveText {
			c.BM25, c.Matched = p.bm25Of(h.slot, p.candidateMatches(h.slot, qts, sc), qts, res.AvgDocLen, sc)
		}
		res.Candidates = append(res.Candidates, c)
	}
	for i, h := range ttop {
		if dup[i] >= 0 {
			res.Candidates[dup[i]].TextRank = i + 1
			continue
		}
		c := p.candidate(h.slot)
		c.BM25, c.Matched, c.TextRank = h.score, distinctOf(p.candidateMatches(h.slot, qts, sc), qts), i+1
		p.wantCosine(&c, len(res.Candidates), q.Vector, sc)
		res.Candidates = append(res.Candidates, c)
	}
	for _, sl := range nbs {
		c := p.candidate(sl)
		c.Neighbor = true
		if haveText {
			c.BM25, c.Matched = p.bm25Of(sl, p.candidateMatches(sl, qts, sc), qts, res.AvgDocLen, sc)
		}
		p.wantCosine(&c, len(res.Candidates), q.Vector, sc)
		res.Candidates = append(res.Candidates, c)
	}
	p.cosines(res.Candidates, q.Vector, qnorm, sc)
	p.content(res, len(q.Exclude) > 0, qts, q.ContentVector, cnorm, sc)
	return res, nil
}

// cosReq asks cosines for the exact cosine of candidate i with the query.
type cosReq struct{ i, row int32 }

// wantCosine marks candidate c, to be the i-th, as having a vector if the
// query and its entry both have one, and asks cosines for their cosine.
func (p *Partition) wantCosine(c *Candidate, i int, qv []float32, sc *scratch) {
	r := p.sl(c.slot).row
	if qv == nil || r < 0 {
		return
	}
	c.HasVector = true
	sc.cosReqs = append(sc.cosReqs, cosReq{int32(i), r})
}

// cosines sets the exact cosine (Cosine) with the query vector qv, of norm
// qnorm, of the candidates wantCosine asked for, several at a time.
func (p *Partition) cosines(cands []Candidate, qv []float32, qnorm float64, sc *scratch) {
	reqs := sc.cosReqs
	sc.cosReqs = reqs[:0]
	if len(reqs) == 0 {
		return
	}
	rows := sc.rows[:0]
	for _, rq := range reqs {
		rows = append(rows, rq.row)
	}
	sc.rows = rows
	ds := p.dotsOfRows(qv, rows, sc)
	for j, rq := range reqs {
		cands[rq.i].Cosine = cosineOfDot(ds[j], qnorm, p.normOf(int(rq.row)))
	}
}

// content sets the content query's scores of every candidate (see
// Query.Exclude and Query.ContentVector) and how it holds each query term
// (Candidate.Matches). It runs once the candidates are final, as the
// search's last step, so it costs one pass over them.
func (p *Partition) content(res *Result, exclude bool, qts []qterm, cv []float32, cnorm float64, sc *scratch) {
	nt := len(res.Terms)
	matches := make([]TermMatch, nt*len(res.Candidates))
	for i := range res.Candidates {
		c := &res.Candidates[i]
		sl := c.slot
		c.DocLen = int(p.docLen[sl])
		c.Matches = matches[i*nt : (i+1)*nt : (i+1)*nt]
		for j := range c.Matches {
			c.Matches[j].Related = -1
		}
		c.ContentBM25, c.ContentCosine = c.BM25, c.Cosine
		if c.BM25 > 0 {
			// A candidate with text has its matches from candidateMatches.
			from := int32(0)
			if i > 0 {
				from = sc.cqmEnd[i-1]
			}
			var content float64
			for _, mt := range sc.cqm[from:sc.cqmEnd[i]] {
				qt := &qts[mt.qt]
				if m := &c.Matches[qt.of]; qt.weight > m.Weight {
					*m = TermMatch{Related: qt.related, TF: int(mt.tf), Weight: qt.weight}
				}
				if exclude && !qt.excluded {
					content += BM25Term(int(mt.tf), c.DocLen, res.AvgDocLen, qt.idf)
				}
			}
			if exclude {
				c.ContentBM25 = content
			}
		}
		if cv != nil && c.HasVector {
			r := int(p.sl(c.slot).row)
			c.ContentCosine = float32(dot32(cv, p.vec(r)) / (cnorm * p.normOf(r)))
		}
		c.slot = 0 // meaningless once the search lets go of the partition
	}
}

// candidate returns the Candidate of the entry at slot sl, without scores.
func (p *Partition) candidate(sl int32) Candidate {
	s := p.sl(sl)
	return Candidate{ID: s.id, CreatedAt: s.m.created, Group: s.groupName(), Seq: s.seq, slot: sl}
}

// neighbors returns the slots of the group neighbours (see Neighbors) of
// the candidates at slots cands, in result order, that pass f and are not
// candidates themselves: each once, in the order they are found, for each
// candidate its previous neighbours nearest first, then its next ones.
// The cost is O(len(cands)·nb.steps()) steps through the group lists; the
// partition is never scanned.
func (p *Partition) neighbors(cands []int32, nb Neighbors, f *compiled, sc *scratch) []int32 {
	steps := nb.steps()
	found := sc.found[:0]
	for _, sl := range cands {
		s := p.sl(sl)
		if s.group == nil {
			continue
		}
		found = p.walk(found, s.prev, nb.Prev, steps, f, true)
		found = p.walk(found, s.next, nb.Next, steps, f, false)
	}
	sc.found = found
	if len(found) == 0 {
		return nil
	}
	// A neighbour stays the first time it is found, unless it is a
	// candidate.
	seen := &sc.slots
	seen.reset(len(cands) + len(found))
	for _, sl := range cands {
		seen.add(sl, 0)
	}
	out := found[:0] // in place: writes never overtake reads
	for _, sl := range found {
		if seen.add(sl, 0) {
			out = append(out, sl)
		}
	}
	return out
}

// walk follows the group list from slot sl (backward to previous entries
// when back, forward otherwise) for at most steps entries, and appends to
// out the first want of them that pass f.
func (p *Partition) walk(out []int32, sl int32, want, steps int, f *compiled, back bool) []int32 {
	for ; want > 0 && steps > 0 && sl >= 0; steps-- {
		s := p.sl(sl)
		if f.pass(&s.m, s.id) {
			out = append(out, sl)
			want--
		}
		if back {
			sl = s.prev
		} else {
			sl = s.next
		}
	}
	return out
}

// hit is a scored slot; hits order by score, descending, then ID.
type hit struct {
	slot  int32
	score float64
}

// better reports whether a ranks before b.
func (p *Partition) better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return p.cmpIDs(a.slot, b.slot) < 0
}

func (p *Partition) cmpHits(a, b hit) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	}
	return p.cmpIDs(a.slot, b.slot)
}

// textTopK selects the top k touched entries by BM25 with a bounded heap,
// in order, in sc's storage; the filter is evaluated only for entries
// that would enter it.
func (p *Partition) textTopK(f *compiled, k int, sc *scratch) []hit {
	h := p.textHeap(f, k, sc)
	out := append(sc.ttop[:0], h...)
	slices.SortFunc(out, p.cmpHits)
	sc.ttop = out
	return out
}

// textHeap fills sc.heap with the top k touched entries that pass f, as a
// heap whose root is the k-th best.
func (p *Partition) textHeap(f *compiled, k int, sc *scratch) []hit {
	h := sc.heap[:0]
	// An entry that ties with the root (common where short memories score
	// alike) is compared with it by the ids' keys (idkey.go), read from
	// one dense array; their ids only where the keys are equal.
	for _, sl := range sc.touched {
		c := hit{sl, sc.acc[sl]}
		full := len(h) == k
		if full && !(c.score >= h[0].score) { // as !better: a NaN never enters
			continue
		}
		if full && c.score == h[0].score && p.cmpIDs(sl, h[0].slot) >= 0 {
			continue
		}
		s := p.sl(sl)
		if !f.pass(&s.m, s.id) {
			continue
		}
		if len(h) < k {
			h = append(h, c)
			p.siftUp(h, len(h)-1)
		} else {
			h[0] = c
			p.siftDown(h, 0)
		}
	}
	sc.heap = h
	return h
}

// siftUp and siftDown maintain h as a heap whose root is the worst hit.
func (p *Partition) siftUp(h []hit, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !p.better(h[parent], h[i]) {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (p *Partition) siftDown(h []hit, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && p.better(h[l], h[r]) {
			w = r
		}
		if !p.better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// blockRows is how many rows the kernel scores per call: enough to amortize
// the call, few enough that the results stay in L1.
const blockRows = 256

// vcand is a vector that may be in the top k: its score interval.
type vcand struct {
	row    int32
	lo, hi float64
}

// worker is the state of one goroutine of the scan.
type worker struct {
	cands []vcand
	lows  []float64 // min-heap of the k largest lo seen among passing rows
	buf   [blockRows]int32
	mask  [blockRows / 64]uint64 // rows of buf that may be in the top k (boundMask)
}

func (w *worker) reset() {
	w.cands = w.cands[:0]
	w.lows = w.lows[:0]
}

// pushLow records lo and returns the current threshold τ: the k-th largest
// lo so far, or −∞ while fewer than k rows passed.
func (w *worker) pushLow(lo float64, k int) float64 {
	h := w.lows
	if len(h) < k {
		h = append(h, lo)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if h[parent] <= h[i] {
				break
			}
			h[parent], h[i] = h[i], h[parent]
			i = parent
		}
		w.lows = h
		if len(h) < k {
			return math.Inf(-1)
		}
		return h[0]
	}
	if lo > h[0] {
		h[0] = lo
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if r := l + 1; r < len(h) && h[r] < h[l] {
				m = r
			}
			if h[i] <= h[m] {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	return h[0]
}

// scan runs the quantized pass over rows [from, to).
func (p *Partition) scan(qv *qvec, f *compiled, k, from, to int, w *worker) {
	w.reset()
	tau := math.Inf(-1)
	stride := p.stride
	prune := max(4*k, 256)
	for r0 := from; r0 < to; r0 += blockRows {
		nb := min(blockRows, to-r0)
		buf := w.buf[:nb]
		// A block lies in one chunk (chunkRows is a multiple of
		// blockRows, and so is every part's start).
		c, i0 := p.row(r0)
		dots(qv.codes, c.codes[i0*stride:(i0+nb)*stride], stride, buf)
		scales := c.scales[i0 : i0+nb]
		resid := c.resid[i0 : i0+nb]
		rowSlot := c.rowSlot[i0 : i0+nb]
		t, rho := qv.t, qv.rho
		if boundMask != nil && nb == blockRows {
			// The bound in SIMD with the τ of the block's start (τ only
			// grows, so the mask keeps every row the loop below would),
			// then the loop over the rows it keeps.
			boundMask(buf, scales, resid, t, rho, tau, w.mask[:])
			for mi, m := range w.mask {
				for ; m != 0; m &= m - 1 {
					i := mi*64 + bits.TrailingZeros64(m)
					d := buf[i]
					a := float64(scales[i]) * t * float64(d)
					r := float64(resid[i])
					e := r + (1+r)*rho + roundingMargin
					if a+e < tau {
						continue
					}
					s := p.sl(rowSlot[i])
					if !f.pass(&s.m, s.id) {
						continue
					}
					w.cands = append(w.cands, vcand{int32(r0 + i), a - e, a + e})
					tau = w.pushLow(a-e, k)
				}
			}
		} else {
			for i, d := range buf {
				a := float64(scales[i]) * t * float64(d)
				r := float64(resid[i])
				e := r + (1+r)*rho + roundingMargin
				if a+e < tau {
					continue
				}
				row := r0 + i
				s := p.sl(rowSlot[i])
				if !f.pass(&s.m, s.id) {
					continue
				}
				w.cands = append(w.cands, vcand{int32(row), a - e, a + e})
				tau = w.pushLow(a-e, k)
			}
		}
		if len(w.cands) >= prune {
			w.cands = slices.DeleteFunc(w.cands, func(c vcand) bool { return c.hi < tau })
			prune = max(prune, 2*len(w.cands))
		}
	}
}

// vectorTopK returns the exact top k rows by cosine (see the comment on
// exactness in vector.go) and how many rows were re-scored; or, for a
// partition with an inverted file, the exact top k of the rows it probes
// (approximate true; see ivf.go).
func (p *Partition) vectorTopK(qv *qvec, f *compiled, k int, sc *scratch) (top []hit, rescored int, approximate bool) {
	if p.ivf != nil {
		if hits, rescored, ok := p.ivfTopK(qv, f, k, sc); ok {
			return hits, rescored, true
		}
	}
	if pj := p.proj; pj != nil && pj.rows == p.rows {
		top, rescored = p.projTopK(pj, qv, f, k, sc)
		return top, rescored, false
	}
	top, rescored = p.exactTopK(qv, f, k, sc)
	return top, rescored, false
}

// exactTopK is the exact scan of every row: the exact top k rows by cosine
// and how many rows were re-scored.
func (p *Partition) exactTopK(qv *qvec, f *compiled, k int, sc *scratch) ([]hit, int) {
	n := p.rows
	parts := 1
	if minRows := p.cfg.ParallelMinRows; n >= 2*minRows {
		maxp := p.cfg.MaxParallel
		if maxp == 0 {
			maxp = runtime.GOMAXPROCS(0)
		}
		parts = max(1, min(n/minRows, maxp))
	}
	ws := sc.workers(parts)
	if parts == 1 {
		p.scan(qv, f, k, 0, n, ws[0])
	} else {
		chunk := (n + parts - 1) / parts
		chunk = (chunk + blockRows - 1) / blockRows * blockRows
		var wg sync.WaitGroup
		for i := 1; i < parts; i++ {
			from, to := min(i*chunk, n), min((i+1)*chunk, n)
			w := ws[i]
			wg.Go(func() { p.scan(qv, f, k, from, to, w) })
		}
		p.scan(qv, f, k, 0, min(chunk, n), ws[0])
		wg.Wait()
	}

	return p.rescore(qv, ws, k, sc)
}

// kthLow returns τ: the k-th largest lower bound the workers ws kept over
// the rows they passed (-Inf below k of them), gathered in sc's storage.
// A row whose upper bound is below τ cannot be in the top k.
func kthLow(ws []*worker, k int, sc *scratch) float64 {
	lows := sc.lows[:0]
	for _, w := range ws {
		lows = append(lows, w.lows...)
	}
	sc.lows = lows
	if len(lows) < k {
		return math.Inf(-1)
	}
	slices.Sort(lows)
	return lows[len(lows)-k]
}

// rescore returns the exact top k of the candidates the workers ws
// collected, in sc's storage, and how many it re-scored.
func (p *Partition) rescore(qv *qvec, ws []*worker, k int, sc *scratch) ([]hit, int) {
	tau := kthLow(ws, k, sc)

	// Exact pass over every row whose upper bound reaches τ, several rows
	// at a time (dots64).
	rows := sc.rows[:0]
	for _, w := range ws {
		for _, c := range w.cands {
			if c.hi >= tau {
				rows = append(rows, c.row)
			}
		}
	}
	sc.rows = rows
	ds := p.dotsOfRows(qv.vec, rows, sc)
	hits := sc.hits[:0]
	for i, r := range rows {
		cos := cosineOfDot(ds[i], qv.norm, p.normOf(int(r)))
		hits = append(hits, hit{p.slotOfRow(int(r)), float64(cos)})
	}
	sc.hits = hits
	return p.selectTop(hits, k), len(hits)
}

// dotsOfRows returns dot64(q, vector of row r) for each of rows, in sc's
// storage.
func (p *Partition) dotsOfRows(q []float32, rows []int32, sc *scratch) []float64 {
	ptrs := sc.vptrs[:0]
	for _, r := range rows {
		c, i := p.row(int(r))
		ptrs = append(ptrs, &c.vecs[i*p.dim])
	}
	sc.vptrs = ptrs
	n := len(rows)
	if cap(sc.dots) < n {
		sc.dots = make([]float64, n+n/2)
		sc.lanes = make([]float64, 4*cap(sc.dots))
	}
	ds := sc.dots[:n]
	dots64(q, ptrs, ds, sc.lanes)
	clear(ptrs) // the pooled scratch must not keep the partition reachable
	return ds
}

// selectTop returns the best k of hits, in order (cmpHits), in hits'
// storage: a heap of the k best so far, whose root, the worst of them, is
// all most hits are compared with, then a sort of the k.
func (p *Partition) selectTop(hits []hit, k int) []hit {
	if len(hits) > k {
		h := hits[:k]
		for i := k/2 - 1; i >= 0; i-- {
			p.siftDown(h, i)
		}
		for _, c := range hits[k:] {
			if p.better(c, h[0]) {
				h[0] = c
				p.siftDown(h, 0)
			}
		}
		hits = h
	}
	slices.SortFunc(hits, p.cmpHits)
	return hits
}

// scratch is the reusable working memory of a search.
type scratch struct {
	acc     []float64 // BM25 by slot; zero outside touched
	touched []int32
	qterms  []string
	qts     []qterm
	qcodes  []int16
	qv      qvec // the query vector prepared (its vec is cleared after the search)
	heap    []hit
	hits    []hit // the vector channel's hits, then its top k (rescore)
	ttop    []hit // the text channel's top k (textTopK)
	lows    []float64
	slots   slotMap // by slot: the vector candidates (Search), what neighbors found
	cslots  []int32
	dup     []int32
	found   []int32
	ws      []*worker
	// The query terms each candidate holds (candidateMatches): those of
	// candidate i end at cqmEnd[i].
	cqm    []qmatch
	cqmEnd []int32
	// Exact cosines, several rows at a time (dotsOfRows).
	rows    []int32
	vptrs   []*float32
	dots    []float64
	lanes   []float64
	cosReqs []cosReq
	// The inverted file's search (ivf.go).
	cscores []int32
	order   []ivfScore
	ptrs    []*int8
	ents    []ivfRow
	// The projected pass's query (proj.go).
	pz, planes []float64
	pcodes     []int8
	qtab       qtable // for matchesOf
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	// A search of a huge partition must not pin its accumulators forever.
	if cap(sc.acc) > 1<<20 {
		sc.acc = nil
	}
	// Nor keep a partition's postings reachable.
	sc.qtab.reset()
	sc.qv.vec = nil
	scratchPool.Put(sc)
}

func (sc *scratch) grow(n int) {
	if len(sc.acc) < n {
		sc.acc = make([]float64, n)
	}
}

func (sc *scratch) resetText() {
	for _, s := range sc.touched {
		sc.acc[s] = 0
	}
	sc.touched = sc.touched[:0]
}

func (sc *scratch) workers(n int) []*worker {
	for len(sc.ws) < n {
		sc.ws = append(sc.ws, new(worker))
	}
	return sc.ws[:n]
}

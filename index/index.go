// Package index is the in-memory partition index of memgate: for each
// (tenant, principal) it keeps the memories' vectors (with int8-quantized
// copies for a fast exact scan, and for large partitions an inverted file
// that restricts the scan to the clusters nearest the query, see ivf.go),
// BM25 term statistics with postings, and the lifecycle and scope fields
// searches pre-filter on.
//
// The index proposes, the store disposes: Search returns candidate ids with
// their scores, and the engine re-reads the final top k from the store with
// the full read-gate predicate. The index must therefore never be the only
// gate (a stale index may omit a memory, the store query keeps a stale one
// from leaking), and it must never hold anything the store does not: it is a
// cache, rebuilt from the store by a loader. It keeps no content, logs
// nothing and never mixes partitions.
package index

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memgate/memgate"
)

// Defaults for Config.
const (
	DefaultMaxBytes         = 1 << 30 // 1 GiB
	DefaultParallelMinRows  = 10000
	DefaultMaxPendingWrites = 4096
	DefaultRetryTooLarge    = time.Minute
)

// Config configures an Index. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// MaxBytes bounds the estimated memory of the resident partitions;
	// least recently used partitions are evicted beyond it. A partition
	// larger than MaxBytes on its own is refused: its load stops as soon as
	// it passes the budget, and its searches fail with ErrTooLarge (code
	// unavailable) without loading it again for RetryTooLarge, so it is
	// never loaded per search and the budget stays a bound. A partition
	// counts once loaded: until the others are evicted for it, the cached
	// partitions and the one loading can hold up to twice the budget.
	// Default DefaultMaxBytes.
	MaxBytes int64
	// RetryTooLarge is how long a partition found larger than MaxBytes is
	// refused before a search loads it again (it may have shrunk). A
	// removal from the partition, Drop or Invalidate ends the refusal at
	// once. Default DefaultRetryTooLarge.
	RetryTooLarge time.Duration
	// ParallelMinRows is the least number of vectors each goroutine of a
	// scan gets: a partition is scanned by min(vectors/ParallelMinRows,
	// MaxParallel) goroutines, so one goroutine below 2·ParallelMinRows.
	// Default DefaultParallelMinRows.
	ParallelMinRows int
	// MaxParallel caps the goroutines of one scan. Default 0: GOMAXPROCS.
	MaxParallel int
	// MaxPendingWrites bounds the writes buffered for a partition while it
	// loads (they are replayed on the loaded data so it is current). Beyond
	// it, the loaded partition serves the searches waiting for it and is not
	// cached. Default DefaultMaxPendingWrites.
	MaxPendingWrites int
	// ApproxMinRows is the number of vectors from which a partition's
	// vector channel is approximate: it keeps an inverted file and searches
	// the rows of the lists nearest the query, exactly, instead of every
	// row (see ivf.go; Result.Approximate says which path answered). Below
	// it the vector channel is exact. Default DefaultApproxMinRows;
	// negative: always exact.
	ApproxMinRows int
	// ProjectMinRows is the number of vectors from which a partition
	// without an inverted file may learn a projected first pass: exact,
	// it reads a projection of each row onto the partition's principal
	// directions before the int8 codes of the few rows it cannot rule out
	// (see proj.go). It is kept only where it is measured faster than the
	// exact scan. Default DefaultProjectMinRows; negative: never.
	ProjectMinRows int

	// probeAll makes an inverted file probe every list (tests).
	probeAll bool
	// projectForce keeps a learnt projection whatever its pruning and
	// speed; projectDims, when positive, sets its dimension (tests).
	projectForce bool
	projectDims  int
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.ParallelMinRows == 0 {
		c.ParallelMinRows = DefaultParallelMinRows
	}
	if c.MaxPendingWrites == 0 {
		c.MaxPendingWrites = DefaultMaxPendingWrites
	}
	if c.RetryTooLarge == 0 {
		c.RetryTooLarge = DefaultRetryTooLarge
	}
	if c.ApproxMinRows == 0 {
		c.ApproxMinRows = DefaultApproxMinRows
	}
	if c.ProjectMinRows == 0 {
		c.ProjectMinRows = DefaultProjectMinRows
	}
	return c
}

// Validate reports the first invalid field of c (after defaults).
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.MaxBytes < 0:
		return memgate.FieldError("index.max_bytes", "must not be negative")
	case c.ParallelMinRows < 0:
		return memgate.FieldError("index.parallel_min_rows", "must not be negative")
	case c.MaxParallel < 0:
		return memgate.FieldError("index.max_parallel", "must not be negative")
	case c.MaxPendingWrites < 0:
		return memgate.FieldError("index.max_pending_writes", "must not be negative")
	case c.RetryTooLarge < 0:
		return memgate.FieldError("index.retry_too_large", "must not be negative")
	}
	return nil
}

// Loader reads every entry of a partition from the store and hands each to
// l.Add, in the store's insertion order: the entries are inserted in the
// order given, and that order is the order of each group (see
// Entry.Group). Add copies what it keeps, so the loader may reuse the
// entry and its slices; when Add returns an error the loader must stop and
// return it (wrapped or not). Streaming keeps a load's memory that of the
// partition: no second copy of every vector is ever held. A loader that
// knows about how many entries it will add says so first (l.Expect), so
// that the partition is allocated once at its size. The loader returns the
// version of the store the entries reflect at least (for memgate, the
// partition's change sequence, read before the entries): the partition
// starts at that version, Apply moves it on, and every Result reports it.
// The index calls it at most once at a time per partition (concurrent
// first searches share one call) with the context of the search that
// started the load.
type Loader func(ctx context.Context, tenant, principal string, l *Load) (version int64, err error)

// Load is a partition being loaded, as its Loader sees it. Its methods
// must be called from one goroutine at a time.
type Load struct {
	x      *Index
	p      *Partition
	tooBig error
}

// Expect says the load will add about n entries, before the first Add:
// the partition's storage is then allocated for n at once rather than
// grown and copied as entries arrive. It is a hint, never a bound: a load
// may add more entries (the storage grows past n) or fewer (what was not
// used is given back at the end). Called after an Add, or with n ≤ 0, it
// does nothing.
func (l *Load) Expect(n int) {
	l.p.mu.Lock()
	l.p.reserve(n)
	l.p.mu.Unlock()
}

// Add inserts e into the partition, copying what it keeps. An invalid
// entry, or one that takes the partition past the index's budget, fails
// the load: the loader must stop and return the error.
func (l *Load) Add(e *Entry) error {
	if l.tooBig != nil {
		return l.tooBig
	}
	p := l.p
	norm, err := e.check()
	p.mu.Lock() // the background trainer may run during the load
	if err == nil {
		_, err = p.upsert(e, norm)
	}
	bytes := p.bytes
	p.mu.Unlock()
	if budget := l.x.cfg.MaxBytes; err == nil && bytes > budget {
		// Stop here: loading the rest would only pass the budget by more.
		l.tooBig = tooLargeError(bytes, budget)
		err = l.tooBig
	}
	return err
}

// ErrTooLarge is returned (wrapped, with code unavailable) by a search of a
// partition whose estimated memory alone exceeds Config.MaxBytes.
var ErrTooLarge = errors.New("index: partition larger than the index budget")

// tooLargeError is ErrTooLarge with the figures and the code the engine's
// callers see.
func tooLargeError(bytes, budget int64) error {
	return &tooLarge{bytes: bytes, budget: budget}
}

type tooLarge struct{ bytes, budget int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("partition is larger than the index budget of %d MiB (its load passed %d MiB): raise index.max_bytes (memgate serve --index-max-bytes) to serve it",
		e.budget>>20, e.bytes>>20)
}

func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge }

// As lets memgate.ErrorCode see the code: unavailable, since the partition
// is fine and the server's configuration is what refuses it.
func (e *tooLarge) As(target any) bool {
	if t, ok := target.(**memgate.Error); ok {
		*t = memgate.Errorf(memgate.EUNAVAILABLE, "%s", e.Error())
		return true
	}
	return false
}

// Stats describes an Index.
type Stats struct {
	Partitions int   // partitions resident (cached, or in use and uncacheable)
	Entries    int64 // entries in those partitions
	Bytes      int64 // their estimated memory
	MaxBytes   int64 // the budget
	Hits       int64 // searches served by a resident partition
	Misses     int64 // searches that loaded or waited for a load
	Loads      int64 // successful loader calls
	LoadErrors int64 // failed loader calls
	Evictions  int64 // partitions evicted for the budget
	TooLarge   int64 // loads stopped because the partition alone passed the budget
	Refused    int64 // searches refused without a load, the partition known too large
}

type pkey struct{ tenant, principal string }

// handle is the Index's record of a partition, resident or loading.
type handle struct {
	key  pkey
	p    *Partition    // nil while loading, and after release
	done chan struct{} // closed when the load ends
	err  error         // the load's error, set before done closes

	pins    int           // searches and writes using p
	elem    *list.Element // in the LRU list when cached
	bytes   int64         // as counted in Index.bytes
	entries int64         // as counted in Index.entries
	mapped  bool          // in Index.parts

	pending []pendingWrite // writes received while loading
	dirty   bool           // must not be cached when the load ends
}

type pendingWrite struct {
	entry  Entry // when remove is false
	norm   float64
	id     string
	remove bool
}

// Index holds partitions keyed by (tenant, principal), loaded lazily through
// a Loader, kept current by Upsert and Remove, bounded by a memory budget.
// It is safe for concurrent use.
type Index struct {
	cfg  Config
	load Loader

	mu      sync.Mutex
	parts   map[pkey]*handle
	lru     list.List // cached handles, most recently used first
	bytes   int64     // resident partitions
	cached  int64     // cached partitions only: what the budget bounds
	entries int64
	// resident counts partitions in memory: cached, or uncached and still
	// in use.
	resident int
	stats    Stats
	// refused holds the partitions found larger than the budget, with the
	// time the refusal ends and the bytes the load reached.
	refused map[pkey]refusal
}

type refusal struct {
	until time.Time
	bytes int64
}

// New returns an Index that loads partitions with load.
func New(cfg Config, load Loader) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if load == nil {
		return nil, errors.New("index: a loader is required")
	}
	return &Index{cfg: cfg.WithDefaults(), load: load, parts: make(map[pkey]*handle), refused: make(map[pkey]refusal)}, nil
}

// Search proposes candidates for q in the partition of (tenant, principal),
// loading it first if it is not resident. See Partition.Search.
func (x *Index) Search(ctx context.Context, tenant, principal string, q Query) (*Result, error) {
	if err := checkKey(tenant, principal); err != nil {
		return nil, err
	}
	h, err := x.acquire(ctx, pkey{tenant, principal})
	if err != nil {
		return nil, err
	}
	defer x.release(h)
	res, err := h.p.Search(q)
	if h.p.bgChanged.Load() {
		x.reconcile(h)
	}
	return res, err
}

// reconcile counts the memory the background trainer of h's partition
// (pinned) changed since the Index was last told: its inverted file or
// projection, made after the write that started it.
func (x *Index) reconcile(h *handle) {
	p := h.p
	p.mu.Lock()
	p.bgChanged.Store(false)
	bytes := p.bytes - p.accounted
	p.accounted = p.bytes
	p.mu.Unlock()
	if bytes == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.account(h, bytes, 0)
	if h.elem != nil && h.bytes > x.cfg.MaxBytes {
		x.unmapLocked(h)
		x.stats.Evictions++
	}
}

// Settle waits until the background work of every resident partition is
// done, and counts its memory: for benchmarks and tests.
func (x *Index) Settle() {
	x.mu.Lock()
	var hs []*handle
	for _, h := range x.parts {
		if h.p != nil {
			x.pinLocked(h)
			hs = append(hs, h)
		}
	}
	x.mu.Unlock()
	for _, h := range hs {
		h.p.Settle()
		x.reconcile(h)
		x.release(h)
	}
}

// DFs returns the number of entries of the partition of (tenant, principal)
// and the number that contain each of terms, loading the partition first
// if it is not resident. See Partition.DFs.
func (x *Index) DFs(ctx context.Context, tenant, principal string, terms []string) (n int, df []int, err error) {
	if err := checkKey(tenant, principal); err != nil {
		return 0, nil, err
	}
	h, err := x.acquire(ctx, pkey{tenant, principal})
	if err != nil {
		return 0, nil, err
	}
	defer x.release(h)
	n, df = h.p.DFs(terms)
	return n, df, nil
}

// Holds is Partition.Holds of the partition of (tenant, principal),
// loading it if needed. hashes must hold a hash for every term
// (invalid_argument otherwise).
func (x *Index) Holds(ctx context.Context, tenant, principal string, terms []string, hashes []uint64) ([]bool, error) {
	if err := checkKey(tenant, principal); err != nil {
		return nil, err
	}
	if len(hashes) != len(terms) {
		return nil, memgate.FieldError("hashes", "must hold one hash per term (%d terms, %d hashes)", len(terms), len(hashes))
	}
	h, err := x.acquire(ctx, pkey{tenant, principal})
	if err != nil {
		return nil, err
	}
	defer x.release(h)
	return h.p.Holds(terms, hashes), nil
}

// checkKey fails closed on an empty tenant or principal: the index never
// loads a partition that no scope could name.
func checkKey(tenant, principal string) error {
	if tenant == "" {
		return memgate.FieldError("tenant", "is required")
	}
	if principal == "" {
		return memgate.FieldError("principal", "is required")
	}
	return nil
}

// acquire returns the partition of k pinned, loading it if needed.
func (x *Index) acquire(ctx context.Context, k pkey) (*handle, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x.mu.Lock()
		h := x.parts[k]
		if h != nil && h.p != nil {
			x.pinLocked(h)
			x.stats.Hits++
			x.mu.Unlock()
			return h, nil
		}
		if r, ok := x.refused[k]; ok && h == nil {
			if time.Now().Before(r.until) {
				x.stats.Refused++
				x.mu.Unlock()
				return nil, tooLargeError(r.bytes, x.cfg.MaxBytes)
			}
			delete(x.refused, k)
		}
		x.stats.Misses++
		if h != nil {
			// Another search is loading it: wait and share its result.
			x.mu.Unlock()
			select {
			case <-h.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if h.err != nil {
				if isContextErr(h.err) && ctx.Err() == nil {
					continue // the loading search gave up; this one has not
				}
				return nil, h.err
			}
			x.mu.Lock()
			if h.p != nil {
				x.pinLocked(h)
				x.mu.Unlock()
				return h, nil
			}
			x.mu.Unlock()
			continue // released already: load again
		}
		h = &handle{key: k, done: make(chan struct{}), mapped: true}
		x.parts[k] = h
		x.mu.Unlock()
		return x.loadInto(ctx, h)
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// loadInto runs the loader for h, installs the result and returns h pinned.
func (x *Index) loadInto(ctx context.Context, h *handle) (_ *handle, err error) {
	var p *Partition
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("index: load partition %s/%s: panic: %v", h.key.tenant, h.key.principal, r)
			p = nil
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		defer close(h.done)
		if err != nil {
			h.err = err
			x.unmapLocked(h)
			x.stats.LoadErrors++
			if errors.Is(err, ErrTooLarge) {
				x.stats.TooLarge++
				x.refused[h.key] = refusal{until: time.Now().Add(x.cfg.RetryTooLarge), bytes: p.Bytes()}
			}
			return
		}
		// The partition's background trainer may run already: writes and
		// reads of the partition take its lock.
		p.mu.Lock()
		for _, w := range h.pending {
			if w.remove {
				p.remove(w.id)
			} else if _, werr := p.upsert(&w.entry, w.norm); werr != nil {
				h.dirty = true // the write was refused; the next load sees the store
			}
		}
		p.accounted = p.bytes
		bytes, live := p.bytes, p.live
		p.mu.Unlock()
		h.pending = nil
		h.p = p
		h.pins = 1
		x.resident++
		x.stats.Loads++
		x.account(h, bytes, int64(live))
		if !h.mapped || h.dirty {
			x.unmapLocked(h) // serve the waiting searches, do not cache
		} else {
			h.elem = x.lru.PushFront(h)
			x.cached += h.bytes
			x.evictLocked()
		}
	}()
	p = NewPartition(x.cfg)
	p.loading = true // bulk allocation; training waits for the end of the load
	l := &Load{x: x, p: p}
	version, err := x.load(ctx, h.key.tenant, h.key.principal, l)
	if l.tooBig != nil {
		err = l.tooBig // whatever the loader made of it
	}
	if err != nil {
		return nil, fmt.Errorf("index: load partition %s/%s: %w", h.key.tenant, h.key.principal, err)
	}
	p.mu.Lock()
	p.version = version
	p.endLoad()
	p.mu.Unlock()
	return h, nil
}

// account adds a change of h's partition (measured under its lock) to h and
// to the Index totals. Changes are deltas so concurrent writes commute.
func (x *Index) account(h *handle, bytes, entries int64) {
	h.bytes += bytes
	h.entries += entries
	x.bytes += bytes
	x.entries += entries
	if h.elem != nil {
		x.cached += bytes
	}
}

func (x *Index) pinLocked(h *handle) {
	h.pins++
	if h.elem != nil {
		x.lru.MoveToFront(h.elem)
	}
}

// release unpins h; an uncached partition is forgotten with its last user.
func (x *Index) release(h *handle) {
	x.mu.Lock()
	defer x.mu.Unlock()
	h.pins--
	if h.pins > 0 {
		return
	}
	if h.elem == nil {
		x.forgetLocked(h)
		return
	}
	x.evictLocked()
}

// unmapLocked removes h from the map and the LRU; its partition stays
// usable by the searches that pinned it, and is forgotten with the last.
func (x *Index) unmapLocked(h *handle) {
	if h.mapped && x.parts[h.key] == h {
		delete(x.parts, h.key)
	}
	h.mapped = false
	if h.elem != nil {
		x.lru.Remove(h.elem)
		h.elem = nil
		x.cached -= h.bytes
	}
	if h.pins == 0 {
		x.forgetLocked(h)
	}
}

func (x *Index) forgetLocked(h *handle) {
	if h.p == nil {
		return
	}
	x.bytes -= h.bytes
	x.entries -= h.entries
	h.bytes, h.entries = 0, 0
	h.p = nil
	x.resident--
}

// evictLocked evicts unpinned partitions, least recently used first, until
// the cached partitions fit the budget. A partition that alone exceeds the
// budget stops being cached.
func (x *Index) evictLocked() {
	for e := x.lru.Back(); e != nil && x.cached > x.cfg.MaxBytes; {
		h := e.Value.(*handle)
		e = e.Prev()
		if h.bytes > x.cfg.MaxBytes {
			x.unmapLocked(h) // uncacheable: forgotten now or with its last user
			x.stats.Evictions++
			continue
		}
		if h.pins > 0 {
			continue
		}
		x.unmapLocked(h)
		x.stats.Evictions++
	}
}

// write applies one write to the partition of k if it is resident or
// loading; it is a no-op otherwise.
func (x *Index) write(k pkey, w pendingWrite) error {
	x.mu.Lock()
	h := x.parts[k]
	if h == nil {
		if w.remove {
			delete(x.refused, k) // it may fit now
		}
		x.mu.Unlock()
		return nil
	}
	if h.p == nil { // loading
		if !h.dirty {
			if len(h.pending) < x.cfg.MaxPendingWrites {
				// The caller may reuse its slices once Upsert returns.
				w.entry.Vector = slices.Clone(w.entry.Vector)
				w.entry.Terms = slices.Clone(w.entry.Terms)
				h.pending = append(h.pending, w)
			} else {
				h.dirty, h.pending = true, nil
			}
		}
		x.mu.Unlock()
		return nil
	}
	h.pins++ // keep it resident (and its accounting live) during the write
	x.mu.Unlock()

	var err error
	p := h.p
	p.mu.Lock()
	live := p.live
	if w.remove {
		p.remove(w.id)
	} else {
		_, err = p.upsert(&w.entry, w.norm)
	}
	// The change since the Index was last told, the background trainer's
	// included.
	bytes := p.bytes - p.accounted
	p.accounted = p.bytes
	live = p.live - live
	p.mu.Unlock()

	x.mu.Lock()
	x.account(h, bytes, int64(live))
	if h.elem != nil && h.bytes > x.cfg.MaxBytes {
		x.unmapLocked(h)
		x.stats.Evictions++
	}
	x.mu.Unlock()
	x.release(h)
	return err
}

// Upsert adds or replaces e in the partition of (tenant, principal) if that
// partition is resident or loading; otherwise it does nothing (the next load
// reads the store). e is validated either way, so an invalid entry fails the
// same whether or not the partition is cached; a vector of another
// dimension than the partition's is refused when the partition is resident.
// Callers apply it after the store has committed the change. It does not
// change the partition's version: a caller that follows the store's
// changes by version uses Apply.
func (x *Index) Upsert(tenant, principal string, e Entry) error {
	if err := checkKey(tenant, principal); err != nil {
		return err
	}
	norm, err := e.check()
	if err != nil {
		return err
	}
	return x.write(pkey{tenant, principal}, pendingWrite{entry: e, norm: norm})
}

// Remove removes the entry id from the partition of (tenant, principal) if
// that partition is resident or loading; otherwise it does nothing.
func (x *Index) Remove(tenant, principal, id string) {
	_ = x.write(pkey{tenant, principal}, pendingWrite{id: id, remove: true})
}

// Resident returns the version of the partition of (tenant, principal)
// (see Loader and Apply), the entries it holds and true, if the partition
// is resident; 0, 0 and false if it is not (or still loading): then the
// next search loads it anew. The entries are what a caller weighs against
// the changes it would apply, to decide whether to Drop the partition and
// have it loaded anew instead.
func (x *Index) Resident(tenant, principal string) (version int64, entries int, ok bool) {
	x.mu.Lock()
	h := x.parts[pkey{tenant, principal}]
	if h == nil || h.p == nil {
		x.mu.Unlock()
		return 0, 0, false
	}
	p := h.p
	x.mu.Unlock()
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.version, p.live, true
}

// Apply moves the resident partition of (tenant, principal) from version
// from to version to: it removes the entries removes names (absent ones
// are skipped), upserts upserts in order, and sets the version to to, all
// under the partition's write lock, so a search sees the partition before
// or after the whole batch and concurrent Apply calls take turns. It
// changes nothing and reports false when the partition is not resident or
// is not at version from (another caller moved it first: read Resident
// again). The caller must hand it changes read from the store after
// version from, so that applying them in any interleaving with other
// Apply calls leaves each entry as the store had it at the version
// reached.
//
// Entries are validated first: an invalid one fails the call before
// anything changes. An upsert the partition refuses (a vector of another
// dimension) is returned after the rest are applied, and the partition is
// dropped, so the next search reloads it from the store.
func (x *Index) Apply(tenant, principal string, from, to int64, upserts []Entry, removes []string) (bool, error) {
	if err := checkKey(tenant, principal); err != nil {
		return false, err
	}
	if to < from {
		return false, memgate.FieldError("version", "cannot go back from %d to %d", from, to)
	}
	norms := make([]float64, len(upserts))
	for i := range upserts {
		n, err := upserts[i].check()
		if err != nil {
			return false, err
		}
		norms[i] = n
	}
	x.mu.Lock()
	h := x.parts[pkey{tenant, principal}]
	if h == nil || h.p == nil {
		x.mu.Unlock()
		return false, nil
	}
	h.pins++ // keep it resident (and its accounting live) during the batch
	p := h.p
	x.mu.Unlock()

	p.mu.Lock()
	if p.version != from {
		p.mu.Unlock()
		x.release(h)
		return false, nil
	}
	live := p.live
	var err error
	for _, id := range removes {
		p.remove(id)
	}
	for i := range upserts {
		if _, uerr := p.upsert(&upserts[i], norms[i]); uerr != nil && err == nil {
			err = uerr
		}
	}
	p.version = to
	bytes := p.bytes - p.accounted
	p.accounted = p.bytes
	live = p.live - live
	p.mu.Unlock()

	x.mu.Lock()
	x.account(h, bytes, int64(live))
	switch {
	case err != nil:
		x.dropLocked(h)
	case h.elem != nil && h.bytes > x.cfg.MaxBytes:
		x.unmapLocked(h)
		x.stats.Evictions++
	}
	x.mu.Unlock()
	x.release(h)
	return true, err
}

// Drop forgets the partition of (tenant, principal), e.g. after the
// principal was forgotten or when the engine finds it stale. Searches
// already using it finish on it; a load in progress serves its waiting
// searches and is not cached. The next search loads afresh.
func (x *Index) Drop(tenant, principal string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.refused, pkey{tenant, principal})
	if h := x.parts[pkey{tenant, principal}]; h != nil {
		x.dropLocked(h)
	}
}

func (x *Index) dropLocked(h *handle) {
	if h.p == nil {
		h.dirty, h.pending = true, nil
	}
	x.unmapLocked(h)
}

// Invalidate forgets every partition, as Drop does for one: after a bulk
// change the index cannot follow (an import, a restore, a failed
// consistency check).
func (x *Index) Invalidate() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, h := range x.parts {
		x.dropLocked(h)
	}
	clear(x.refused)
}

// Stats returns the index's counters.
func (x *Index) Stats() Stats {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.stats
	s.Bytes, s.Entries, s.MaxBytes = x.bytes, x.entries, x.cfg.MaxBytes
	s.Partitions = x.resident
	return s
}

package index

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// fakeStore is a loader over in-memory partitions that counts its calls
// and can hold them.
type fakeStore struct {
	mu    sync.Mutex
	parts map[string][]Entry // "tenant/principal" → entries
	calls map[string]int
	added map[string]int // entries the index accepted, over all loads
	gate  chan struct{}  // when set, loads wait for it to close
	fail  error
	// expect, when set, is the count a load announces (Load.Expect) for
	// the number of entries it holds.
	expect func(n int) int
}

func newFakeStore() *fakeStore {
	return &fakeStore{parts: map[string][]Entry{}, calls: map[string]int{}, added: map[string]int{}}
}

func (s *fakeStore) put(tenant, principal string, es ...Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts[tenant+"/"+principal] = append(s.parts[tenant+"/"+principal], es...)
}

// load reports the number of entries the partition was ever given as its
// version.
func (s *fakeStore) load(ctx context.Context, tenant, principal string, l *Load) (int64, error) {
	s.mu.Lock()
	s.calls[tenant+"/"+principal]++
	gate, fail, expect := s.gate, s.fail, s.expect
	es := slices.Clone(s.parts[tenant+"/"+principal])
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if fail != nil {
		return 0, fail
	}
	if expect != nil {
		l.Expect(expect(len(es)))
	}
	for i := range es {
		if err := l.Add(&es[i]); err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.added[tenant+"/"+principal]++
		s.mu.Unlock()
	}
	return int64(len(es)), nil
}

func (s *fakeStore) loads(tenant, principal string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tenant+"/"+principal]
}

func entryN(i, dim int) Entry {
	v := make([]float32, dim)
	v[i%dim] = 1
	v[(i+1)%dim] = float32(i%7) / 10
	return Entry{ID: fmt.Sprintf("e%04d", i), Vector: v, Terms: []string{"alpha", fmt.Sprintf("t%d", i%5)}, Status: memgate.StatusActive, Kind: memgate.KindFact, Source: memgate.SourceUser}
}

func fill(s *fakeStore, tenant, principal string, n, dim int) {
	for i := range n {
		s.put(tenant, principal, entryN(i, dim))
	}
}

func ids(res *Result) []string {
	var out []string
	for _, c := range res.Candidates {
		out = append(out, c.ID)
	}
	slices.Sort(out)
	return out
}

func search(t *testing.T, x *Index, tenant, principal string) *Result {
	t.Helper()
	res, err := x.Search(context.Background(), tenant, principal, Query{Vector: entryN(0, 8).Vector, Terms: []string{"alpha"}, K: 100, Filter: Filter{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkAccounting verifies the index totals against its partitions when no
// search or write is running.
func checkAccounting(t *testing.T, x *Index) {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	var bytes, entries int64
	n := 0
	for e := x.lru.Front(); e != nil; e = e.Next() {
		h := e.Value.(*handle)
		if h.p == nil || h.pins != 0 || x.parts[h.key] != h {
			t.Fatalf("LRU handle %v: p %v pins %d mapped %v", h.key, h.p != nil, h.pins, x.parts[h.key] == h)
		}
		if h.bytes != h.p.Bytes() || h.entries != int64(h.p.Stats().Entries) {
			t.Fatalf("handle %v accounts %d bytes %d entries, partition has %d, %d", h.key, h.bytes, h.entries, h.p.Bytes(), h.p.Stats().Entries)
		}
		bytes += h.bytes
		entries += h.entries
		n++
	}
	if n != len(x.parts) || n != x.resident || bytes != x.bytes || bytes != x.cached || entries != x.entries {
		t.Fatalf("index: %d in LRU, %d mapped, %d resident; bytes %d/%d/%d; entries %d/%d", n, len(x.parts), x.resident, bytes, x.bytes, x.cached, entries, x.entries)
	}
	if x.cached > x.cfg.MaxBytes {
		t.Fatalf("cached %d bytes over the budget %d", x.cached, x.cfg.MaxBytes)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	d := Config{}.WithDefaults()
	if d.MaxBytes != DefaultMaxBytes || d.ParallelMinRows != DefaultParallelMinRows || d.MaxPendingWrites != DefaultMaxPendingWrites || d.MaxParallel != 0 {
		t.Fatalf("defaults: %+v", d)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{MaxBytes: -1}, {ParallelMinRows: -1}, {MaxParallel: -1}, {MaxPendingWrites: -1}} {
		if err := c.Validate(); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%+v: %v", c, err)
		}
		if _, err := New(c, newFakeStore().load); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("New without a loader accepted")
	}
}

func TestSearchLoadsOnceAndStaysCurrent(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t1", "alice", 20, 8)
	fill(s, "t1", "bob", 5, 8)
	x, err := New(Config{}, s.load)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, x, "t1", "alice")); len(got) != 20 {
		t.Fatalf("alice: %d candidates", len(got))
	}
	search(t, x, "t1", "alice")
	if n := s.loads("t1", "alice"); n != 1 {
		t.Fatalf("alice loaded %d times", n)
	}
	// Partitions never mix.
	if got := ids(search(t, x, "t1", "bob")); len(got) != 5 {
		t.Fatalf("bob: %v", got)
	}
	if got := ids(search(t, x, "t2", "alice")); len(got) != 0 {
		t.Fatalf("t2/alice: %v", got)
	}

	// Writes reach a resident partition...
	e := entryN(100, 8)
	e.ID = "new"
	if err := x.Upsert("t1", "alice", e); err != nil {
		t.Fatal(err)
	}
	x.Remove("t1", "alice", "e0003")
	got := ids(search(t, x, "t1", "alice"))
	if !slices.Contains(got, "new") || slices.Contains(got, "e0003") || len(got) != 20 {
		t.Fatalf("after writes: %v", got)
	}
	// ...and are no-ops for a partition that is not loaded.
	if err := x.Upsert("t1", "carol", e); err != nil {
		t.Fatal(err)
	}
	x.Remove("t1", "carol", "x")
	if st := x.Stats(); st.Partitions != 3 || st.Loads != 3 || st.Hits != 2 || st.Misses != 3 {
		t.Fatalf("stats: %+v", st)
	}
	// An empty tenant or principal is refused, never loaded.
	for _, tp := range [][2]string{{"", "alice"}, {"t1", ""}} {
		if _, err := x.Search(context.Background(), tp[0], tp[1], Query{K: 1, Filter: Filter{Now: now}}); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Fatalf("%v: %v", tp, err)
		}
		if err := x.Upsert(tp[0], tp[1], e); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Fatalf("%v: %v", tp, err)
		}
	}
	if n := s.loads("", "alice") + s.loads("t1", ""); n != 0 {
		t.Fatalf("loader called %d times for an empty key", n)
	}
	// Invalid entries fail whether or not the partition is loaded.
	for _, tp := range [][2]string{{"t1", "alice"}, {"t1", "carol"}} {
		if err := x.Upsert(tp[0], tp[1], Entry{ID: "bad", Vector: []float32{0}}); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Fatalf("%v: invalid entry: %v", tp, err)
		}
	}
	// A vector of another dimension is refused by a resident partition.
	if err := x.Upsert("t1", "alice", Entry{ID: "x", Vector: []float32{1, 2}}); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("other dimension: %v", err)
	}
	checkAccounting(t, x)

	// Drop forgets one partition; Invalidate forgets all.
	x.Drop("t1", "alice")
	search(t, x, "t1", "alice")
	if n := s.loads("t1", "alice"); n != 2 {
		t.Fatalf("alice loaded %d times after Drop", n)
	}
	search(t, x, "t1", "bob")
	if n := s.loads("t1", "bob"); n != 1 {
		t.Fatalf("bob reloaded after dropping alice")
	}
	x.Invalidate()
	if st := x.Stats(); st.Partitions != 0 || st.Bytes != 0 || st.Entries != 0 {
		t.Fatalf("after Invalidate: %+v", st)
	}
	search(t, x, "t1", "bob")
	if n := s.loads("t1", "bob"); n != 2 {
		t.Fatalf("bob loaded %d times after Invalidate", n)
	}
	checkAccounting(t, x)
}

func TestSingleFlightLoad(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 10, 8)
	s.gate = make(chan struct{})
	x, _ := New(Config{}, s.load)
	const n = 16
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range n {
		wg.Go(func() {
			res, err := x.Search(context.Background(), "t", "p", Query{Terms: []string{"alpha"}, K: 5, Filter: Filter{Now: now}})
			if err != nil || len(res.Candidates) != 5 {
				failed.Add(1)
			}
		})
	}
	// Wait until every search is waiting, then let the one load finish.
	for {
		x.mu.Lock()
		misses := x.stats.Misses
		x.mu.Unlock()
		if misses == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(s.gate)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d searches failed", failed.Load())
	}
	if got := s.loads("t", "p"); got != 1 {
		t.Fatalf("loader called %d times for %d concurrent searches", got, n)
	}
	if st := x.Stats(); st.Loads != 1 || st.Misses != n || st.Partitions != 1 {
		t.Fatalf("stats %+v", st)
	}
	checkAccounting(t, x)
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 3, 8)
	boom := errors.New("database is down")
	s.fail = boom
	x, _ := New(Config{}, s.load)
	q := Query{K: 1, Terms: []string{"alpha"}, Filter: Filter{Now: now}}
	if _, err := x.Search(context.Background(), "t", "p", q); !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if st := x.Stats(); st.Partitions != 0 || st.LoadErrors != 1 {
		t.Fatalf("failed load cached: %+v", st)
	}
	s.mu.Lock()
	s.fail = nil
	s.mu.Unlock()
	if _, err := x.Search(context.Background(), "t", "p", q); err != nil {
		t.Fatalf("retry: %v", err)
	}
	// An invalid entry from the store fails the load, naming it.
	s.put("t", "bad", Entry{ID: "nan-vector", Vector: []float32{0, 0}})
	if _, err := x.Search(context.Background(), "t", "bad", q); memgate.ErrorCode(err) != memgate.EINVALID {
		t.Fatalf("invalid stored entry: %v", err)
	}
	// A panicking loader fails the search instead of hanging its waiters.
	y, _ := New(Config{}, func(context.Context, string, string, *Load) (int64, error) { panic("loader bug") })
	if _, err := y.Search(context.Background(), "t", "p", q); err == nil {
		t.Fatal("panicking loader: no error")
	}
	checkAccounting(t, x)
}

// TestCanceledLoaderHandsOver: when the search that started a load gives up,
// the searches waiting for it load again instead of failing.
func TestCanceledLoaderHandsOver(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 3, 8)
	s.gate = make(chan struct{})
	x, _ := New(Config{}, s.load)
	q := Query{K: 1, Terms: []string{"alpha"}, Filter: Filter{Now: now}}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := x.Search(ctx, "t", "p", q)
		first <- err
	}()
	for s.loads("t", "p") == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() {
		_, err := x.Search(context.Background(), "t", "p", q)
		second <- err
	}()
	for {
		x.mu.Lock()
		m := x.stats.Misses
		x.mu.Unlock()
		if m == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first: %v", err)
	}
	close(s.gate)
	if err := <-second; err != nil {
		t.Fatalf("second: %v", err)
	}
	if n := s.loads("t", "p"); n != 2 {
		t.Fatalf("loads %d, want 2", n)
	}
}

// TestWritesDuringLoad: writes that arrive while a partition loads are
// replayed on the loaded data, so a snapshot taken before them is not stale.
func TestWritesDuringLoad(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 5, 8)
	s.gate = make(chan struct{})
	x, _ := New(Config{}, s.load)
	done := make(chan *Result, 1)
	go func() {
		res, err := x.Search(context.Background(), "t", "p", Query{Terms: []string{"alpha"}, K: 50, Filter: Filter{Now: now}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for s.loads("t", "p") == 0 {
		time.Sleep(time.Millisecond)
	}
	added := entryN(50, 8)
	added.ID = "added"
	vec := added.Vector
	if err := x.Upsert("t", "p", added); err != nil {
		t.Fatal(err)
	}
	vec[0] = 99 // the caller's slice is its own again once Upsert returns
	x.Remove("t", "p", "e0001")
	close(s.gate)
	res := <-done
	got := ids(res)
	if !slices.Contains(got, "added") || slices.Contains(got, "e0001") || len(got) != 5 {
		t.Fatalf("candidates %v", got)
	}
	res = search(t, x, "t", "p")
	if got := ids(res); !slices.Contains(got, "added") || slices.Contains(got, "e0001") {
		t.Fatalf("cached partition: %v", got)
	}
	for _, c := range res.Candidates {
		if c.ID == "added" && c.Cosine != Cosine(entryN(0, 8).Vector, entryN(50, 8).Vector) {
			t.Fatalf("pending vector aliased the caller's slice: cosine %v", c.Cosine)
		}
	}
	checkAccounting(t, x)
}

// TestDropDuringLoad: the searches waiting for the load are served, the
// result is not cached.
func TestDropDuringLoad(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "p", 5, 8)
	s.gate = make(chan struct{})
	x, _ := New(Config{}, s.load)
	done := make(chan error, 1)
	go func() {
		_, err := x.Search(context.Background(), "t", "p", Query{K: 5, Terms: []string{"alpha"}, Filter: Filter{Now: now}})
		done <- err
	}()
	for s.loads("t", "p") == 0 {
		time.Sleep(time.Millisecond)
	}
	x.Drop("t", "p")
	s.mu.Lock()
	gate := s.gate
	s.gate = nil // later loads do not wait
	s.mu.Unlock()
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := x.Stats(); st.Partitions != 0 {
		t.Fatalf("dropped load cached: %+v", st)
	}
	search(t, x, "t", "p")
	if n := s.loads("t", "p"); n != 2 {
		t.Fatalf("loads %d, want 2", n)
	}
	checkAccounting(t, x)
}

func TestEvictionUnderBudget(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	for _, p := range []string{"a", "b", "c", "d"} {
		fill(s, "t", p, 50, 8)
	}
	one := buildPartition(t, Config{}, s.parts["t/a"]).Bytes()
	// Room for two partitions and a half.
	x, _ := New(Config{MaxBytes: one*5/2 + 1}, s.load)
	search(t, x, "t", "a")
	search(t, x, "t", "b")
	search(t, x, "t", "a") // a is now the most recent
	search(t, x, "t", "c") // evicts b
	if st := x.Stats(); st.Partitions != 2 || st.Evictions != 1 || st.Bytes > st.MaxBytes {
		t.Fatalf("stats %+v", st)
	}
	search(t, x, "t", "a")
	search(t, x, "t", "c")
	if s.loads("t", "a") != 1 || s.loads("t", "c") != 1 {
		t.Fatal("a recently used partition was evicted")
	}
	search(t, x, "t", "b")
	if s.loads("t", "b") != 2 {
		t.Fatal("the least recently used partition was not the one evicted")
	}
	checkAccounting(t, x)

	// Growing a partition by writes evicts others.
	for i := range 60 {
		e := entryN(200+i, 8)
		if err := x.Upsert("t", "b", e); err != nil {
			t.Fatal(err)
		}
	}
	if st := x.Stats(); st.Bytes > st.MaxBytes {
		t.Fatalf("over budget after writes: %+v", st)
	}
	checkAccounting(t, x)
}

// TestNoEvictionWhileSearched: a partition in use is skipped by eviction.
func TestNoEvictionWhileSearched(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "a", 50, 8)
	fill(s, "t", "b", 50, 8)
	one := buildPartition(t, Config{}, s.parts["t/a"]).Bytes()
	x, _ := New(Config{MaxBytes: one * 3 / 2}, s.load) // room for one
	inside, leave := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := x.Search(context.Background(), "t", "a", Query{K: 5, Terms: []string{"alpha"}, Filter: Filter{Now: now, Allow: func(string) bool {
			once.Do(func() { close(inside); <-leave })
			return true
		}}})
		done <- err
	}()
	<-inside
	search(t, x, "t", "b") // over budget with a pinned: b goes instead
	close(leave)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	search(t, x, "t", "a")
	if s.loads("t", "a") != 1 {
		t.Fatal("the partition being searched was evicted")
	}
	if st := x.Stats(); st.Partitions != 1 || st.Evictions != 1 {
		t.Fatalf("stats %+v", st)
	}
	checkAccounting(t, x)
}

// TestPartitionOverBudget: a partition larger than the whole budget is
// refused with a clear error, its load stopped once it passed the budget;
// later searches are refused without loading it again, the small partition
// beside it stays cached and served, and a removal, Drop or the retry
// delay lets the next search try again.
func TestPartitionOverBudget(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "small", 5, 8)
	fill(s, "t", "huge", 500, 8)
	small := buildPartition(t, Config{}, s.parts["t/small"]).Bytes()
	x, _ := New(Config{MaxBytes: small * 3, RetryTooLarge: time.Hour}, s.load)
	search(t, x, "t", "small")
	q := Query{Vector: entryN(0, 8).Vector, K: 10, Filter: Filter{Now: now}}
	refused := func(what string) {
		t.Helper()
		_, err := x.Search(context.Background(), "t", "huge", q)
		if !errors.Is(err, ErrTooLarge) || memgate.ErrorCode(err) != memgate.EUNAVAILABLE {
			t.Fatalf("%s: huge partition: %v (code %s), want ErrTooLarge, unavailable", what, err, memgate.ErrorCode(err))
		}
		if msg := memgate.ErrorMessage(err); !strings.Contains(msg, "index.max_bytes") || strings.Contains(msg, "huge") {
			t.Fatalf("%s: message %q: must name the setting, not the partition", what, msg)
		}
	}
	for i := range 3 {
		refused(fmt.Sprintf("search %d", i))
	}
	if s.loads("t", "huge") != 1 {
		t.Fatalf("huge loaded %d times, want once (then refused without loading)", s.loads("t", "huge"))
	}
	if n := s.added["t/huge"]; n == 0 || n >= 100 {
		t.Fatalf("the refused load took %d of 500 entries: it must stop at the budget", n)
	}
	if st := x.Stats(); st.TooLarge != 1 || st.Refused != 2 || st.Partitions != 1 || st.Entries != 5 || st.Bytes > small {
		t.Fatalf("stats %+v", st)
	}
	// The control: the small partition is still cached and served.
	if got := ids(search(t, x, "t", "small")); len(got) != 5 || s.loads("t", "small") != 1 {
		t.Fatalf("small: %v, %d loads", got, s.loads("t", "small"))
	}

	// A removal may make it fit: the next search loads it again.
	x.Remove("t", "huge", "e0001")
	refused("after a removal")
	if s.loads("t", "huge") != 2 {
		t.Fatalf("after a removal: %d loads, want 2", s.loads("t", "huge"))
	}
	x.Drop("t", "huge")
	refused("after Drop")
	if s.loads("t", "huge") != 3 {
		t.Fatalf("after Drop: %d loads, want 3", s.loads("t", "huge"))
	}

	// Once the retry delay is over, the next search tries again; with a
	// budget that fits, it is served.
	y, _ := New(Config{MaxBytes: small * 3, RetryTooLarge: time.Millisecond}, s.load)
	for range 2 {
		if _, err := y.Search(context.Background(), "t", "huge", q); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("huge: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s.loads("t", "huge") != 5 {
		t.Fatalf("after the retry delay: %d loads, want 5", s.loads("t", "huge"))
	}
	z, _ := New(Config{}, s.load)
	if got := ids(search(t, z, "t", "huge")); len(got) < 100 {
		t.Fatalf("huge within the budget: %d candidates", len(got))
	}
	checkAccounting(t, x)
	checkAccounting(t, y)
	checkAccounting(t, z)
}

// TestPartitionGrowsOverBudget: a cached partition that writes push past
// the budget is evicted, and the next search refuses it.
func TestPartitionGrowsOverBudget(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	fill(s, "t", "a", 5, 8)
	one := buildPartition(t, Config{}, s.parts["t/a"]).Bytes()
	x, _ := New(Config{MaxBytes: one * 3}, s.load)
	search(t, x, "t", "a")
	for i := 5; i < 200; i++ {
		e := entryN(i, 8)
		s.put("t", "a", e)
		if err := x.Upsert("t", "a", e); err != nil {
			t.Fatal(err)
		}
	}
	if st := x.Stats(); st.Partitions != 0 || st.Evictions != 1 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := x.Search(context.Background(), "t", "a", Query{Vector: entryN(0, 8).Vector, K: 10, Filter: Filter{Now: now}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("grown partition: %v, want ErrTooLarge", err)
	}
	checkAccounting(t, x)
}

// TestConcurrentUse runs searches, writes, drops and evictions together
// (under -race in CI), then checks the accounting and the search results
// against the surviving data.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	principals := []string{"p0", "p1", "p2", "p3"}
	for _, p := range principals {
		fill(s, "t", p, 300, 16)
	}
	one := buildPartition(t, Config{}, s.parts["t/p0"]).Bytes()
	x, _ := New(Config{MaxBytes: one * 5 / 2, ParallelMinRows: 64}, s.load)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := newRand(uint64(g))
			for i := range 300 {
				p := principals[r.IntN(len(principals))]
				switch op := r.IntN(20); {
				case op < 12:
					q := Query{Vector: gaussVec(r, 16), Terms: zipfTerms(r, 2), K: 10, Filter: randomFilter(r)}
					q.Filter.Allow = nil
					if _, err := x.Search(context.Background(), "t", p, q); err != nil {
						t.Error(err)
						return
					}
				case op < 16:
					e := entryN(1000+g*1000+i, 16)
					if err := x.Upsert("t", p, e); err != nil {
						t.Error(err)
						return
					}
				case op < 19:
					x.Remove("t", p, fmt.Sprintf("e%04d", r.IntN(300)))
				default:
					x.Drop("t", p)
				}
			}
		})
	}
	wg.Wait()
	checkAccounting(t, x)
	if st := x.Stats(); st.Hits == 0 || st.Loads == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLoadIsUpsert builds one partition through a load (which cuts term
// references from slabs) and one by Upsert, from entries whose terms
// repeat both in runs (as stored terms come) and scattered, and requires
// the same partition of both, then after the same removals and
// replacements, and with the same entries loaded twice over (a duplicate
// id in one load replaces the first).
func TestLoadIsUpsert(t *testing.T) {
	t.Parallel()
	r := newRand(31)
	const dim = 24
	var entries []Entry
	for i := range 3000 {
		e := randomEntry(r, i, gaussVec(r, dim), false)
		if i%2 == 0 { // runs of repeats, as DecodeTerms gives them
			e.Terms = slices.Sorted(slices.Values(e.Terms))
		}
		if i%7 == 0 {
			e.Vector = nil
		}
		e.Group = []string{"", "g1", "g2"}[i%3]
		entries = append(entries, e)
	}
	for _, twice := range []bool{false, true} {
		given := entries
		if twice {
			given = append(slices.Clone(entries[:500]), entries...)
		}
		s := newFakeStore()
		s.put("t", "p", given...)
		x, err := New(Config{}, s.load)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := x.DFs(t.Context(), "t", "p", nil); err != nil {
			t.Fatal(err)
		}
		x.mu.Lock()
		loaded := x.parts[pkey{"t", "p"}].p
		x.mu.Unlock()
		upserted := buildPartition(t, Config{}, given)
		upserted.trim() // as the load does
		same := func(what string) {
			t.Helper()
			checkInvariants(t, loaded)
			checkInvariants(t, upserted)
			if got, want := loaded.Stats(), upserted.Stats(); got != want {
				t.Fatalf("%s: loaded %+v, upserted %+v", what, got, want)
			}
			for _, w := range vocabulary {
				if loaded.DF(w) != upserted.DF(w) {
					t.Fatalf("%s: df(%s) = %d loaded, %d upserted", what, w, loaded.DF(w), upserted.DF(w))
				}
			}
			for i := range 20 {
				q := Query{Vector: gaussVec(r, dim), Terms: zipfTerms(r, 4), K: 20, Filter: Filter{Now: now}, Neighbors: Neighbors{Prev: 1, Next: 1}}
				if i%4 == 0 {
					q.Filter = randomFilter(r)
				}
				got, err := loaded.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				want, err := upserted.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				got.Version = want.Version // the load's, which Upsert does not set
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: query %d: results differ:\nloaded   %+v\nupserted %+v", what, i, got.Candidates[:min(3, len(got.Candidates))], want.Candidates[:min(3, len(want.Candidates))])
				}
			}
		}
		same(fmt.Sprintf("loaded (duplicates %v)", twice))
		for i := range 1500 {
			id := entries[r.IntN(len(entries))].ID
			if i%3 == 0 {
				e := randomEntry(r, 0, gaussVec(r, dim), false)
				e.ID = id
				if err := loaded.Upsert(e); err != nil {
					t.Fatal(err)
				}
				if err := upserted.Upsert(e); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if loaded.Remove(id) != upserted.Remove(id) {
				t.Fatalf("Remove(%s) differs", id)
			}
		}
		same(fmt.Sprintf("mutated (duplicates %v)", twice))
	}
}

// TestLoadExpect: a load that announces its size (Load.Expect) builds the
// partition a load without one does, whether the count is right, short,
// long or absurd, with writes arriving during the load; only the memory
// of an id table sized for a long count may differ, and the accounting
// holds either way.
func TestLoadExpect(t *testing.T) {
	t.Parallel()
	const n = 2*chunkRows + 452 // three row chunks, the last one part full
	control := newFakeStore()
	fill(control, "t", "p", n, 8)
	cases := []struct {
		name   string
		expect func(int) int
		spare  int64 // memory the partition may hold beyond the control's
	}{
		{"none", nil, 0},
		{"exact", func(n int) int { return n }, 0},
		{"one short", func(n int) int { return n - 1 }, 0},
		{"half", func(n int) int { return n / 2 }, 0},
		{"one", func(int) int { return 1 }, 0},
		{"one long", func(n int) int { return n + 1 }, 0},
		{"double", func(n int) int { return 2 * n }, 4 * int64(tableCells(2*n))},
		{"absurd", func(int) int { return 1 << 40 }, 0},
		{"negative", func(int) int { return -5 }, 0},
	}
	// queries exercise both channels, the filters and the neighbours.
	queries := []Query{
		{Vector: entryN(3, 8).Vector, Terms: []string{"alpha", "t2"}, K: 50, Filter: Filter{Now: now}},
		{Vector: entryN(n-1, 8).Vector, K: 20, Filter: Filter{Now: now, Kinds: []memgate.Kind{memgate.KindFact}}},
		{Terms: []string{"t4"}, K: 30, Filter: Filter{Now: now}},
	}
	want := func(x *Index) ([]*Result, PartitionStats) {
		t.Helper()
		var rs []*Result
		for _, q := range queries {
			res, err := x.Search(context.Background(), "t", "p", q)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, res)
		}
		x.mu.Lock()
		p := x.parts[pkey{"t", "p"}].p
		x.mu.Unlock()
		return rs, p.Stats()
	}
	// The control: no count, no writes during the load, the same writes
	// after it.
	cx, _ := New(Config{}, control.load)
	search(t, cx, "t", "p")
	added := entryN(n+7, 8)
	added.ID = "added"
	if err := cx.Upsert("t", "p", added); err != nil {
		t.Fatal(err)
	}
	cx.Remove("t", "p", "e0001")
	wantRes, wantStats := want(cx)
	if wantStats.Entries != n || wantStats.Vectors != n {
		t.Fatalf("control: %+v", wantStats)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeStore()
			fill(s, "t", "p", n, 8)
			s.expect = c.expect
			s.gate = make(chan struct{})
			x, _ := New(Config{}, s.load)
			done := make(chan error, 1)
			go func() {
				_, err := x.Search(context.Background(), "t", "p", queries[0])
				done <- err
			}()
			for s.loads("t", "p") == 0 {
				time.Sleep(time.Millisecond)
			}
			// Writes during the load are replayed on the loaded partition.
			if err := x.Upsert("t", "p", added); err != nil {
				t.Fatal(err)
			}
			x.Remove("t", "p", "e0001")
			close(s.gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			gotRes, gotStats := want(x)
			if !reflect.DeepEqual(gotRes, wantRes) {
				t.Fatalf("results differ from the control's:\n%+v\n%+v", gotRes, wantRes)
			}
			bytes := gotStats.Bytes
			gotStats.Bytes = wantStats.Bytes
			if gotStats != wantStats {
				t.Fatalf("stats %+v, control %+v", gotStats, wantStats)
			}
			if bytes < wantStats.Bytes || bytes > wantStats.Bytes+c.spare {
				t.Fatalf("%d bytes, control %d (+%d allowed)", bytes, wantStats.Bytes, c.spare)
			}
			checkAccounting(t, x)
		})
	}
}

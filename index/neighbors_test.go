package index

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// neighbourIDs returns the ids of the neighbours of res, in result order.
func neighbourIDs(res *Result) []string {
	var out []string
	for _, c := range res.Candidates {
		if c.Neighbor {
			out = append(out, c.ID)
		}
	}
	return out
}

// seqOf returns the sequence number of the entry id of p.
func seqOf(p *Partition, id string) int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	sl, ok := p.findID(id)
	if !ok {
		return -1
	}
	return p.sl(sl).seq
}

// TestNeighborsExact holds the neighbours of random searches (random
// groups, filters, k and neighbour counts) to the brute-force reference:
// the same ids in the same order, the exact cosine, BM25 bit-identical with
// the text channel's, sequence numbers, and nothing proposed twice.
func TestNeighborsExact(t *testing.T) {
	t.Parallel()
	for _, groups := range []int{1, 3, 40} {
		t.Run(fmt.Sprintf("groups=%d", groups), func(t *testing.T) {
			t.Parallel()
			r := newRand(uint64(100 + groups))
			const n, dim = 600, 12
			entries := make([]Entry, n)
			for i := range entries {
				var v []float32
				if i%9 != 4 {
					v = gaussVec(r, dim)
				}
				entries[i] = randomEntry(r, i, v, i%4 == 0)
				if r.IntN(5) > 0 { // some entries stand alone
					entries[i].Group = fmt.Sprintf("conv-%d", r.IntN(groups))
				}
			}
			seqs := denseSeqs(entries)
			neighbours, skipped := 0, 0
			for _, cfg := range []Config{{}, {ParallelMinRows: 64, MaxParallel: 3}} {
				p := buildPartition(t, cfg, entries)
				checkInvariants(t, p)
				for qi := range 60 {
					q := Query{Terms: zipfTerms(r, 1+r.IntN(4)), K: []int{1, 3, 10, 40}[qi%4], Filter: Filter{Now: now}}
					if qi%3 != 2 {
						q.Vector = gaussVec(r, dim)
					}
					if qi%2 == 1 {
						q.Filter = randomFilter(r)
					}
					q.Neighbors = []Neighbors{{2, 1}, {1, 0}, {0, 3}, {MaxNeighbors, MaxNeighbors}, {}}[qi%5]
					res, err := p.Search(q)
					if err != nil {
						t.Fatal(err)
					}
					label := fmt.Sprintf("cfg %+v query %d", cfg, qi)
					checkResult(t, label, entries, q, res)
					neighbours += checkNeighbors(t, label, p, entries, seqs, q, res)
					skipped += skippedNeighbours(entries, q, res)
				}
			}
			// The controls: the searches did return neighbours, some of them
			// found past a turn the filter refused.
			if neighbours < 100 || skipped < 5 {
				t.Fatalf("%d neighbours, %d past a refused turn: the test proves little", neighbours, skipped)
			}
		})
	}
}

// skippedNeighbours counts the neighbours of res that are not adjacent to
// any channel candidate of their group: found past a refused entry (or past
// another candidate).
func skippedNeighbours(entries []Entry, q Query, res *Result) int {
	at := map[string]int{}
	group := map[string]string{}
	count := map[string]int{}
	for _, e := range entries {
		if e.Group != "" {
			at[e.ID] = count[e.Group]
			count[e.Group]++
			group[e.ID] = e.Group
		}
	}
	n := 0
next:
	for _, c := range res.Candidates {
		if !c.Neighbor {
			continue
		}
		for _, d := range res.Candidates {
			if !d.Neighbor && group[d.ID] == group[c.ID] && (at[d.ID]-at[c.ID] == 1 || at[c.ID]-at[d.ID] == 1) {
				continue next
			}
		}
		n++
	}
	return n
}

// turns is a conversation t1..t7 in group "c", each with its own vector
// and a shared word; t4 alone says "needle". Other entries surround it.
func turns() []Entry {
	r := newRand(77)
	var es []Entry
	for i := 1; i <= 7; i++ {
		e := Entry{
			ID: fmt.Sprintf("t%d", i), Group: "c", Vector: gaussVec(r, 8),
			Terms:  []string{"talk", fmt.Sprintf("word%d", i)},
			Status: memgate.StatusActive, Kind: memgate.KindMessage, Source: memgate.SourceUser,
			CreatedAt: micros(now.Add(time.Duration(i-10) * time.Minute)),
		}
		if i == 4 {
			e.Terms = append(e.Terms, "needle", "talk")
		}
		es = append(es, e)
		other := randomEntry(r, i, gaussVec(r, 8), true)
		other.Group = "elsewhere"
		es = append(es, other)
	}
	return es
}

// TestNeighborsSkipFiltered: a neighbour the filter refuses (revoked,
// expired, another agent's, restricted, refused by Allow) is skipped and
// the next passing turn is returned instead; each case has a control that
// returns the turn the refusal skips.
func TestNeighborsSkipFiltered(t *testing.T) {
	t.Parallel()
	hour := time.Hour
	type tc struct {
		name   string
		nb     Neighbors
		change func(es map[string]*Entry, f *Filter)
		want   []string
	}
	nop := func(map[string]*Entry, *Filter) {}
	cases := []tc{
		{"control", Neighbors{2, 1}, nop, []string{"t3", "t2", "t5"}},
		{"control 3 back 3 ahead", Neighbors{3, 3}, nop, []string{"t3", "t2", "t1", "t5", "t6", "t7"}},
		{"revoked previous", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { es["t3"].Status = memgate.StatusRevoked }, []string{"t2", "t1", "t5"}},
		{"expired next", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { es["t5"].ExpiresAt = micros(now.Add(-hour)) }, []string{"t3", "t2", "t6"}},
		{"expired next, earlier now", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) {
			es["t5"].ExpiresAt = micros(now.Add(-hour))
			f.Now = now.Add(-2 * hour)
		}, []string{"t3", "t2", "t5"}},
		{"other agent", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { es["t3"].Agent, f.Agent = "other", "me" }, []string{"t2", "t1", "t5"}},
		{"same agent", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { es["t3"].Agent, f.Agent = "me", "me" }, []string{"t3", "t2", "t5"}},
		{"restricted", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { es["t5"].Sensitivity = memgate.SensitivityRestricted }, []string{"t3", "t2", "t6"}},
		{"restricted included", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) {
			es["t5"].Sensitivity, f.IncludeRestricted = memgate.SensitivityRestricted, true
		}, []string{"t3", "t2", "t5"}},
		{"allow hook", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) { f.Allow = func(id string) bool { return id != "t2" } }, []string{"t3", "t1", "t5"}},
		{"two refused in a row", Neighbors{1, 1}, func(es map[string]*Entry, f *Filter) {
			es["t3"].Status, es["t2"].Status = memgate.StatusPending, memgate.StatusSuperseded
		}, []string{"t1", "t5"}},
		// The walk visits at most 2·(Prev+Next) turns each way: with
		// Neighbors{1, 0}, two refused turns end it...
		{"walk bound", Neighbors{1, 0}, func(es map[string]*Entry, f *Filter) {
			es["t3"].Status, es["t2"].Status = memgate.StatusRevoked, memgate.StatusRevoked
		}, nil},
		// ...one does not.
		{"walk bound control", Neighbors{1, 0}, func(es map[string]*Entry, f *Filter) { es["t3"].Status = memgate.StatusRevoked }, []string{"t2"}},
		{"kinds", Neighbors{2, 1}, func(es map[string]*Entry, f *Filter) {
			es["t5"].Kind, f.Kinds = memgate.KindFact, []memgate.Kind{memgate.KindMessage}
		}, []string{"t3", "t2", "t6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			entries := turns()
			byID := map[string]*Entry{}
			for i := range entries {
				byID[entries[i].ID] = &entries[i]
			}
			q := Query{Vector: byID["t4"].Vector, Terms: []string{"needle", "talk"}, K: 1, Filter: Filter{Now: now}, Neighbors: c.nb}
			c.change(byID, &q.Filter)
			p := buildPartition(t, Config{}, entries)
			res, err := p.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) == 0 || res.Candidates[0].ID != "t4" || res.Candidates[0].VectorRank != 1 || res.Candidates[0].TextRank != 1 {
				t.Fatalf("t4 is not the only channel candidate: %+v", res.Candidates)
			}
			if got := neighbourIDs(res); !slices.Equal(got, c.want) {
				t.Fatalf("neighbours %v, want %v", got, c.want)
			}
			checkResult(t, c.name, entries, q, res)
			checkNeighbors(t, c.name, p, entries, denseSeqs(entries), q, res)
			for _, cd := range res.Candidates[1:] {
				if cd.BM25 == 0 || !cd.HasVector || cd.Matched != 1 || cd.Group != "c" {
					t.Fatalf("neighbour without its scores: %+v", cd)
				}
			}
		})
	}
}

// TestNeighborsGroupsAndDuplicates: neighbours never cross groups, entries
// without a group have none, a neighbour shared by two candidates or that is
// a candidate itself is proposed once, and group ends stop the walk.
func TestNeighborsGroupsAndDuplicates(t *testing.T) {
	t.Parallel()
	// a1 b1 x1 a2 b2 x2 ...: two interleaved conversations and loose
	// memories (x, no group). Every entry has its own word.
	var entries []Entry
	for i := 1; i <= 5; i++ {
		for _, g := range []string{"a", "b", "x"} {
			e := Entry{ID: fmt.Sprintf("%s%d", g, i), Terms: []string{fmt.Sprintf("w%s%d", g, i), "common"}, Status: memgate.StatusActive}
			if g != "x" {
				e.Group = g
			}
			entries = append(entries, e)
		}
	}
	p := buildPartition(t, Config{}, entries)
	seqs := denseSeqs(entries)
	cases := []struct {
		terms []string
		nb    Neighbors
		want  []string
	}{
		{[]string{"wa3"}, Neighbors{2, 1}, []string{"a2", "a1", "a4"}},
		{[]string{"wb2"}, Neighbors{2, 1}, []string{"b1", "b3"}}, // b2 has one previous turn
		{[]string{"wx2"}, Neighbors{2, 1}, nil},                  // no group, no neighbours
		{[]string{"wx2", "wa5"}, Neighbors{2, 1}, []string{"a4", "a3"}},
		{[]string{"wa1"}, Neighbors{3, 0}, nil}, // the head has no previous turn
		{[]string{"wa5"}, Neighbors{0, 3}, nil}, // the tail has no next one
		// a2 and a3 share a1 and a4; a3 is a2's next and a2 is a3's
		// previous: candidates count as found and are not repeated.
		{[]string{"wa2", "wa3"}, Neighbors{2, 1}, []string{"a1", "a4"}},
		{[]string{"wa2", "wb4"}, Neighbors{1, 1}, []string{"a1", "a3", "b3", "b5"}},
		{[]string{"wa1", "wa2", "wa3", "wa4", "wa5"}, Neighbors{2, 1}, nil},
		{[]string{"wa3"}, Neighbors{}, nil},
	}
	for _, c := range cases {
		q := Query{Terms: c.terms, K: len(c.terms), Filter: Filter{Now: now}, Neighbors: c.nb}
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("%v %+v", c.terms, c.nb)
		if got := neighbourIDs(res); !slices.Equal(got, c.want) {
			t.Fatalf("%s: neighbours %v, want %v", label, got, c.want)
		}
		checkResult(t, label, entries, q, res)
		checkNeighbors(t, label, p, entries, seqs, q, res)
	}
}

// TestSequenceOrder: the order of a group and the sequence numbers across
// replacements, group changes, removals and re-insertions.
func TestSequenceOrder(t *testing.T) {
	t.Parallel()
	p := NewPartition(Config{})
	m := newSeqModel()
	put := func(id, group string, terms ...string) {
		t.Helper()
		e := Entry{ID: id, Group: group, Terms: terms, Status: memgate.StatusActive}
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
		m.upsert(e)
	}
	check := func(step string, want map[string][]string) {
		t.Helper()
		checkInvariants(t, p)
		for g, ids := range want {
			if got := groupIDs(p, g); !slices.Equal(got, ids) {
				t.Fatalf("%s: group %s is %v, want %v", step, g, got, ids)
			}
			if got := modelGroup(m.ordered(), g); !slices.Equal(got, ids) {
				t.Fatalf("%s: the model's group %s is %v, want %v", step, g, got, ids)
			}
		}
		for id, s := range m.seq {
			if seqOf(p, id) != s {
				t.Fatalf("%s: %s has seq %d, want %d", step, id, seqOf(p, id), s)
			}
		}
		if p.Stats().Groups != len(want) {
			t.Fatalf("%s: %d groups, want %d", step, p.Stats().Groups, len(want))
		}
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		put(id, "g", "x")
	}
	put("loose", "", "x")
	check("inserted", map[string][]string{"g": {"a", "b", "c", "d"}})
	if seqOf(p, "a") >= seqOf(p, "b") || seqOf(p, "d") >= seqOf(p, "loose") {
		t.Fatal("sequence numbers do not follow insertion")
	}

	// Replacing keeps the place and the number, for the head, the middle
	// and the tail, and for an entry without a group.
	before := seqOf(p, "b")
	for _, id := range []string{"b", "a", "d"} {
		put(id, "g", "y", "z")
	}
	put("loose", "", "y")
	check("replaced", map[string][]string{"g": {"a", "b", "c", "d"}})
	if seqOf(p, "b") != before {
		t.Fatal("replacement changed the sequence number")
	}

	// A group change moves the entry to the end of the new group with a new
	// number (the control: it did move).
	put("b", "h")
	check("moved to h", map[string][]string{"g": {"a", "c", "d"}, "h": {"b"}})
	put("e", "h")
	put("b", "g")
	check("moved back", map[string][]string{"g": {"a", "c", "d", "b"}, "h": {"e"}})
	if seqOf(p, "b") <= seqOf(p, "e") {
		t.Fatal("a moved entry did not get a new, larger sequence number")
	}
	put("loose", "h")
	put("a", "")
	check("group set and cleared", map[string][]string{"g": {"c", "d", "b"}, "h": {"e", "loose"}})

	// Removal drops the entry from its group; an emptied group goes.
	p.Remove("d")
	m.remove("d")
	check("removed d", map[string][]string{"g": {"c", "b"}, "h": {"e", "loose"}})
	for _, id := range []string{"e", "loose"} {
		p.Remove(id)
		m.remove(id)
	}
	check("emptied h", map[string][]string{"g": {"c", "b"}})
	// A removed id inserted again is new: the end of its group.
	put("d", "g")
	put("h1", "h")
	check("reinserted", map[string][]string{"g": {"c", "b", "d"}, "h": {"h1"}})

	// The sole member of a group, replaced, stays its sole member.
	put("h1", "h", "again")
	check("sole member replaced", map[string][]string{"g": {"c", "b", "d"}, "h": {"h1"}})

	// A replacement refused for its vector changes nothing.
	if err := p.Upsert(Entry{ID: "v1", Group: "g", Vector: []float32{1, 2}, Status: memgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	m.upsert(Entry{ID: "v1", Group: "g"})
	if err := p.Upsert(Entry{ID: "c", Group: "h", Vector: []float32{1, 2, 3}, Status: memgate.StatusActive}); err == nil {
		t.Fatal("a vector of another dimension was accepted")
	}
	check("refused", map[string][]string{"g": {"c", "b", "d", "v1"}, "h": {"h1"}})
}

// TestNeighborsRemoval: a removed turn is no neighbour (the next one is),
// and removing a whole group returns its bytes.
func TestNeighborsRemoval(t *testing.T) {
	t.Parallel()
	entries := turns()
	p := buildPartition(t, Config{}, entries[:0])
	empty := p.Bytes()
	p = buildPartition(t, Config{}, entries)
	q := Query{Terms: []string{"needle"}, K: 1, Filter: Filter{Now: now}, Neighbors: Neighbors{2, 1}}
	search := func() []string {
		t.Helper()
		res, err := p.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		return neighbourIDs(res)
	}
	if got := search(); !slices.Equal(got, []string{"t3", "t2", "t5"}) {
		t.Fatalf("control: %v", got)
	}
	p.Remove("t3")
	p.Remove("t5")
	if got := search(); !slices.Equal(got, []string{"t2", "t1", "t6"}) {
		t.Fatalf("after removals: %v", got)
	}
	checkInvariants(t, p)
	groups := p.Stats().Groups
	for _, e := range entries {
		if e.Group == "c" && e.ID != "t4" {
			p.Remove(e.ID)
		}
	}
	if got := search(); len(got) != 0 {
		t.Fatalf("alone in its group: %v", got)
	}
	if p.Stats().Groups != groups {
		t.Fatal("a group with one member left was dropped")
	}
	p.Remove("t4")
	if p.Stats().Groups != groups-1 {
		t.Fatal("an emptied group was kept")
	}
	for _, e := range entries {
		p.Remove(e.ID)
	}
	checkInvariants(t, p)
	if st := p.Stats(); st.Groups != 0 || st.Bytes != empty+want0(p) {
		t.Fatalf("emptied partition: %+v, want %d bytes", st, empty+want0(p))
	}
}

func TestNeighborsValidation(t *testing.T) {
	t.Parallel()
	p := buildPartition(t, Config{}, turns())
	for _, nb := range []Neighbors{{-1, 0}, {0, -1}, {MaxNeighbors + 1, 0}, {0, MaxNeighbors + 1}} {
		if _, err := p.Search(Query{Terms: []string{"needle"}, K: 1, Filter: Filter{Now: now}, Neighbors: nb}); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%+v: %v, want invalid_argument", nb, err)
		}
	}
	res, err := p.Search(Query{Terms: []string{"needle"}, K: 1, Filter: Filter{Now: now}, Neighbors: Neighbors{MaxNeighbors, MaxNeighbors}})
	if err != nil || len(neighbourIDs(res)) != 6 {
		t.Fatalf("control: %+v, %v", res, err)
	}
}

// TestNeighborsThroughIndex: a load inserts the store's entries in the
// order given, writes during the load are replayed after them, and writes
// to the resident partition keep the group order.
func TestNeighborsThroughIndex(t *testing.T) {
	t.Parallel()
	s := newFakeStore()
	entries := turns()
	// The store returns the entries in insertion order, the turns of "c"
	// interleaved with other entries.
	s.put("t", "p", entries...)
	s.gate = make(chan struct{})
	x, _ := New(Config{}, s.load)
	q := Query{Terms: []string{"needle"}, K: 1, Filter: Filter{Now: now}, Neighbors: Neighbors{3, 3}}
	done := make(chan *Result, 1)
	go func() {
		res, err := x.Search(context.Background(), "t", "p", q)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for s.loads("t", "p") == 0 {
		time.Sleep(time.Millisecond)
	}
	// During the load: a new turn, and t6 replaced (it keeps its place).
	t8 := Entry{ID: "t8", Group: "c", Status: memgate.StatusActive}
	if err := x.Upsert("t", "p", t8); err != nil {
		t.Fatal(err)
	}
	t6 := entries[10]
	if t6.ID != "t6" {
		t.Fatalf("entry 10 is %s", t6.ID)
	}
	t6.Terms = []string{"changed"}
	if err := x.Upsert("t", "p", t6); err != nil {
		t.Fatal(err)
	}
	x.Remove("t", "p", "t7")
	close(s.gate)
	res := <-done
	if got := neighbourIDs(res); !slices.Equal(got, []string{"t3", "t2", "t1", "t5", "t6", "t8"}) {
		t.Fatalf("after the load: %v", got)
	}
	// Resident: moving t5 to another group and back puts it at the end.
	for _, g := range []string{"other", "c"} {
		t5 := entries[8]
		t5.Group = g
		if err := x.Upsert("t", "p", t5); err != nil {
			t.Fatal(err)
		}
	}
	res, err := x.Search(context.Background(), "t", "p", q)
	if err != nil {
		t.Fatal(err)
	}
	if got := neighbourIDs(res); !slices.Equal(got, []string{"t3", "t2", "t1", "t6", "t8", "t5"}) {
		t.Fatalf("resident: %v", got)
	}
	last := res.Candidates[len(res.Candidates)-1]
	for _, c := range res.Candidates[:len(res.Candidates)-1] {
		if c.Seq >= last.Seq {
			t.Fatalf("%s has seq %d, the moved t5 %d", c.ID, c.Seq, last.Seq)
		}
	}
	checkAccounting(t, x)
}

// TestNeighborsConcurrent runs searches with neighbours beside writers that
// insert, replace, move between groups and remove (under -race in CI), then
// holds every group to the order its writer produced.
func TestNeighborsConcurrent(t *testing.T) {
	t.Parallel()
	const writers, dim = 4, 8
	p := NewPartition(Config{ParallelMinRows: 32, MaxParallel: 2})
	models := make([]*seqModel, writers)
	var wg sync.WaitGroup
	for w := range writers {
		models[w] = newSeqModel()
		wg.Go(func() {
			r := newRand(uint64(1000 + w))
			m := models[w]
			// Each writer owns its ids and its groups: the order of a group
			// depends on its writer alone.
			groups := []string{fmt.Sprintf("w%d-a", w), fmt.Sprintf("w%d-b", w), ""}
			for i := range 600 {
				id := fmt.Sprintf("w%d-%03d", w, r.IntN(120))
				if r.IntN(5) == 0 {
					p.Remove(id)
					m.remove(id)
					continue
				}
				e := randomEntry(r, i, gaussVec(r, dim), false)
				e.ID = id
				e.Group = groups[r.IntN(len(groups))]
				if old, ok := m.entries[id]; ok && r.IntN(4) > 0 {
					e.Group = old.Group
				}
				if err := p.Upsert(e); err != nil {
					t.Error(err)
					return
				}
				m.upsert(e)
			}
		})
	}
	for g := range 4 {
		wg.Go(func() {
			r := newRand(uint64(2000 + g))
			for range 300 {
				q := Query{Vector: gaussVec(r, dim), Terms: zipfTerms(r, 3), K: 1 + r.IntN(10), Filter: randomFilter(r), Neighbors: Neighbors{2, 1}}
				res, err := p.Search(q)
				if err != nil {
					t.Error(err)
					return
				}
				// A consistent snapshot: no duplicates, neighbours after the
				// channel candidates and in a group of one of them.
				seen := map[string]bool{}
				groups := map[string]bool{}
				for _, c := range res.Candidates {
					if seen[c.ID] {
						t.Errorf("%s proposed twice", c.ID)
						return
					}
					seen[c.ID] = true
					if !c.Neighbor {
						groups[c.Group] = true
					} else if c.Group == "" || !groups[c.Group] {
						t.Errorf("neighbour %s of group %q, no candidate of it", c.ID, c.Group)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, p)
	total := 0
	for w, m := range models {
		es := m.ordered()
		for _, g := range []string{fmt.Sprintf("w%d-a", w), fmt.Sprintf("w%d-b", w)} {
			want := modelGroup(es, g)
			if got := groupIDs(p, g); !slices.Equal(got, want) {
				t.Fatalf("group %s: %v, want %v", g, got, want)
			}
			total += len(want)
		}
	}
	if total < 100 {
		t.Fatalf("only %d grouped entries survive", total)
	}
}

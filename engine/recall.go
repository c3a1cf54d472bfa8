package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unsafe"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/rank"
	"github.com/memgate/memgate/render"
	"github.com/memgate/memgate/store"
)

// Recall limits: the root package's, which callers check against.
const (
	DefaultK       = memgate.DefaultRecallK
	MaxK           = memgate.MaxRecallK
	MaxQueryBytes  = memgate.MaxQueryBytes
	MaxBudgetChars = memgate.MaxBudgetChars
	// minCandidates is the least number of candidates per channel the index
	// proposes, whatever k: rank judges a query's relatedness and each
	// memory's context over the candidates, so it needs more than k. On
	// LoCoMo, recall@10 and silence are identical with 50 and 100 (and the
	// exact scoring of each candidate's neighbours costs time).
	minCandidates = 50
)

// RecallRequest is memgate.RecallRequest (the callers' contract).
type RecallRequest = memgate.RecallRequest

// RecallResult is memgate.RecallResult (the callers' contract).
type RecallResult = memgate.RecallResult

// RecallHit is memgate.RecallHit (the callers' contract).
type RecallHit = memgate.RecallHit

// HitExplain is memgate.HitExplain (the callers' contract).
type HitExplain = memgate.HitExplain

// RecallStats is memgate.RecallStats (the callers' contract).
type RecallStats = memgate.RecallStats

// Calibration is memgate.Calibration (the callers' contract).
type Calibration = memgate.Calibration

// Provenance is memgate.Provenance (the callers' contract).
type Provenance = memgate.Provenance

// model is the embedder provenance vectors must match to be compared.
type model struct {
	provider, name string
	dim            int
}

func (m model) matches(e *memgate.Embedding) bool {
	return e != nil && e.Provider == m.provider && e.Model == m.name && e.Dim == m.dim && len(e.Vector) == m.dim
}

// recaller holds the index, the model its vectors belong to and that
// model's calibration.
type recaller struct {
	idx *index.Index

	mu    sync.RWMutex
	model model             // zero until the embedder has answered once
	cal   *rank.Calibration // of model; nil until calibrated

	calMu sync.Mutex // one calibration at a time
}

func (r *recaller) current() model {
	m, _ := r.state()
	return m
}

// state returns the current model and its calibration (nil if none yet).
func (r *recaller) state() (model, *rank.Calibration) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.model, r.cal
}

// observe records the provenance the embedder just reported. A change of
// model drops the calibration and every cached partition: their vectors
// are of the old model. It reports whether the model changed.
func (r *recaller) observe(e *memgate.Embedding) bool {
	m := model{provider: e.Provider, name: e.Model, dim: e.Dim}
	r.mu.RLock()
	same := r.model == m
	r.mu.RUnlock()
	if same {
		return false
	}
	r.mu.Lock()
	changed := r.model != m
	if changed {
		r.model, r.cal = m, nil
	}
	r.mu.Unlock()
	if changed {
		r.idx.Invalidate()
	}
	return changed
}

// calibrated installs c as the calibration of m, if m is still the current
// model and has none.
func (r *recaller) calibrated(m model, c *rank.Calibration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.model == m && r.cal == nil {
		r.cal = c
	}
}

// entry builds the index entry of m.
func (r *recaller) entry(m *memgate.Memory) index.Entry {
	var vec []float32
	if cur := r.current(); cur.dim > 0 && cur.matches(m.Embedding) {
		vec = m.Embedding.Vector
	}
	e := index.FromMemory(m, analysis.Terms(m.Content), vec)
	e.Group = group(m)
	return e
}

// group is the neighbour group of a memory: conversation turns give each
// other context, other kinds stand alone.
func group(m *memgate.Memory) string { return groupOf(m.Kind, m.Conversation) }

func groupOf(kind memgate.Kind, conversation string) string {
	if kind == memgate.KindMessage && conversation != "" {
		return "c:" + conversation
	}
	return ""
}

// indexed is called after a committed write of ms: a memory that is no
// longer active leaves the index at once. An active one enters (or is
// updated) through the next recall's catch-up, which reads it back from
// the store (see replica.go for why the write does not upsert it).
func (e *Engine) indexed(ms ...*memgate.Memory) {
	for _, m := range ms {
		if m.Status != memgate.StatusActive {
			e.rec.idx.Remove(m.Tenant, m.Principal, m.ID)
		}
	}
}

// load is the index's loader. It reads the partition's head before its
// memories, so the partition starts at a version no later than what it
// holds (see replica.go). It reads only what the index keeps
// (store.Store.LoadIndex: compact columns, terms analysed at write time)
// and gives the index the entries entry would make of the full memories,
// after their number (store.Store.PartitionSize), so that the partition is
// allocated once. Reading and building overlap: a goroutine reads rows
// into batches while this one adds the previous batch to the index.
func (e *Engine) load(ctx context.Context, tenant, principal string, l loadSink) (int64, error) {
	head, err := e.store.PartitionHead(ctx, tenant, principal)
	if err != nil {
		return 0, err
	}
	var model store.EmbeddingModel
	if cur := e.rec.current(); cur.dim > 0 {
		model = store.EmbeddingModel{Provider: cur.provider, Model: cur.name, Dim: cur.dim}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const batches = 3
	full := make(chan *loadBatch, batches)
	free := make(chan *loadBatch, batches)
	for range batches {
		free <- new(loadBatch)
	}
	var readErr error
	go func() {
		defer close(full)
		b := <-free
		// A hint: without it the partition grows as rows come, and an
		// error that matters fails LoadIndex too.
		b.expect, _ = e.store.PartitionSize(ctx, tenant, principal)
		send := func() error {
			b.seal()
			select {
			case full <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case b = <-free:
				b.reset()
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		readErr = e.store.LoadIndex(ctx, tenant, principal, model, func(r *store.IndexRow) error {
			if b.add(r) == loadBatchRows {
				if err := send(); err != nil {
					return err
				}
			}
			b.lend(r, model.Dim)
			return nil
		})
		if readErr == nil && len(b.entries) > 0 {
			b.seal()
			full <- b // never blocks: batches are only ever in free, full or here
		}
	}()
	var addErr error
	for b := range full {
		if b.expect > 0 {
			l.Expect(b.expect)
		}
		for i := range b.entries {
			if addErr != nil {
				break
			}
			if addErr = l.Add(&b.entries[i]); addErr != nil {
				cancel() // stop the reader
			}
		}
		free <- b
	}
	if addErr != nil {
		return 0, addErr
	}
	if readErr != nil {
		return 0, readErr
	}
	return head, nil
}

// loadSink is what load hands the entries to: the index's Load.
type loadSink interface {
	Expect(n int)
	Add(e *index.Entry) error
}

// loadBatchRows is the number of rows load hands over at a time.
const loadBatchRows = 256

// loadBatch is a batch of entries load read, with copies of the vectors
// and terms LoadIndex lends (it reuses them row after row), held in a few
// arrays that later batches reuse.
type loadBatch struct {
	expect  int // the partition's size (PartitionSize), in the first batch
	entries []index.Entry
	spans   []loadSpan
	vecs    []float32
	arena   []byte   // the bytes of every term
	terms   []string // views of arena, once sealed
	ends    []int32  // the end in arena of each term
}

// loadSpan is where an entry's vector and terms are in its batch.
type loadSpan struct {
	vec, dim     int
	term, nterms int
}

func (b *loadBatch) reset() {
	b.expect = 0
	b.entries, b.spans, b.vecs, b.arena, b.terms, b.ends = b.entries[:0], b.spans[:0], b.vecs[:0], b.arena[:0], b.terms[:0], b.ends[:0]
}

// add copies r into b and returns the number of entries in b. A vector
// the store decoded where lend pointed it is in place already.
func (b *loadBatch) add(r *store.IndexRow) int {
	sp := loadSpan{vec: len(b.vecs), dim: len(r.Vector), term: len(b.ends), nterms: len(r.Terms)}
	if n := len(r.Vector); n > 0 && n <= cap(b.vecs)-len(b.vecs) && unsafe.SliceData(r.Vector) == unsafe.SliceData(b.vecs[len(b.vecs):]) {
		b.vecs = b.vecs[:len(b.vecs)+n]
	} else {
		b.vecs = append(b.vecs, r.Vector...)
	}
	for _, t := range r.Terms {
		b.arena = append(b.arena, t...)
		b.ends = append(b.ends, int32(len(b.arena)))
	}
	en := indexEntry(r)
	en.Vector, en.Terms = nil, nil // set by seal, once b's arrays stop moving
	b.entries = append(b.entries, en)
	b.spans = append(b.spans, sp)
	return len(b.entries)
}

// lend points r's vector at b's free room, so that the store decodes the
// next row's vector there (store.Store.LoadIndex) instead of into a buffer
// of its own that add would copy. Without room, it takes back the room
// lent before, which add has filled.
func (b *loadBatch) lend(r *store.IndexRow, dim int) {
	r.Vector = nil
	if dim <= 0 {
		return
	}
	if cap(b.vecs) < loadBatchRows*dim {
		b.vecs = slices.Grow(b.vecs, loadBatchRows*dim-len(b.vecs))
	}
	if n := len(b.vecs); cap(b.vecs)-n >= dim {
		r.Vector = b.vecs[n : n : n+dim]
	}
}

// seal points every entry at its vector and terms.
func (b *loadBatch) seal() {
	start := int32(0)
	for _, end := range b.ends {
		b.terms = append(b.terms, unsafe.String(unsafe.SliceData(b.arena[start:]), int(end-start)))
		start = end
	}
	for i, sp := range b.spans {
		en := &b.entries[i]
		if sp.dim > 0 {
			en.Vector = b.vecs[sp.vec : sp.vec+sp.dim : sp.vec+sp.dim]
		}
		if sp.nterms > 0 {
			en.Terms = b.terms[sp.term : sp.term+sp.nterms : sp.term+sp.nterms]
		}
	}
}

// indexEntry is the Entry of an active memory read by LoadIndex: what
// entry makes of the full memory.
func indexEntry(r *store.IndexRow) index.Entry {
	en := index.Entry{
		ID: r.ID, Vector: r.Vector, Terms: r.Terms,
		Agent: r.Agent, Conversation: r.Conversation,
		Kind: r.Kind, Source: r.Source, Sensitivity: r.Sensitivity, Status: memgate.StatusActive,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, ValidFrom: r.ValidFrom, ValidUntil: r.ValidUntil,
		Group: groupOf(r.Kind, r.Conversation),
	}
	return en
}

// Recall returns the memories of the scope that matter for the query, best
// first, each with its score; nothing when nothing clears the floor. The
// index proposes candidates; the store re-reads them with the full read
// gate (scope, active, not expired, valid at as_of, kinds, sources,
// sensitivity, metadata) in one query, and only what it returns is ranked,
// so a memory revoked, expired or forgotten a moment ago, by this process
// or another over the same store, never comes back. Before searching, the
// index catches up with the changes the store recorded (replica.go), so a
// memory stored by another process is proposed by the next recall.
func (e *Engine) Recall(ctx context.Context, req RecallRequest) (*RecallResult, error) {
	start := time.Now()
	opts, err := e.checkRecall(&req)
	if err != nil {
		return nil, err
	}
	now := e.now()
	asOf := now
	if !req.AsOf.IsZero() {
		asOf = memgate.Now(req.AsOf)
	}
	s := req.Scope

	q := index.Query{
		Terms: analysis.Terms(req.Query),
		K:     max(minCandidates, 4*opts.K),
		Filter: index.Filter{
			Agent: s.Agent, Conversation: s.Conversation,
			Kinds: req.Kinds, Sources: req.Sources, IncludeRestricted: req.IncludeRestricted,
			Now: now, AsOf: asOf,
		},
		Neighbors: index.Neighbors{Prev: 2, Next: 1},
	}
	// The partition's head, read after this recall began: every change
	// committed before, on any replica, is in the index searched.
	head, err := e.store.PartitionHead(ctx, s.Tenant, s.Principal)
	if err != nil {
		return nil, fmt.Errorf("read partition head: %w", err)
	}
	qv, err := e.queryVectors(ctx, s, req.Query, &q, head)
	if err != nil {
		return nil, err
	}
	var holds func(terms []string, hashes []uint64) []bool
	if !e.relateAll {
		holds = e.holds(ctx, s)
	}
	rel := e.related(req.Query, q.Exclude, req.Explain || req.Preview, holds)
	q.Related = rel.words
	res, err := e.search(ctx, s.Tenant, s.Principal, q, head)
	if err != nil {
		return nil, fmt.Errorf("search partition: %w", err)
	}

	// The store disposes: nothing is returned that the store's read gate
	// does not let through now, and ranking never counts a candidate the
	// store refused (relatedness and context are judged over admitted
	// memories only).
	gate := store.ReadGate{Now: now, AsOf: asOf, Kinds: req.Kinds, Sources: req.Sources, IncludeRestricted: req.IncludeRestricted, Metadata: req.Metadata}
	v := verifier{e: e, scope: s, gate: gate, fetched: map[string]*memgate.Memory{}, refused: map[string]bool{}}
	// The index cannot judge metadata, diversity needs every candidate's
	// vector, and a preview shows candidates below the floor, which must
	// have passed the read gate too: then every candidate is read first.
	if len(req.Metadata) > 0 || req.Diversify || req.Preview {
		if err := v.fetch(ctx, res.Candidates, nil); err != nil {
			return nil, err
		}
		v.all = true
	}
	cur := qv.model
	var (
		results []rank.Result
		ex      rank.Explain
		cands   []rank.Candidate
		props   []index.Candidate
	)
	rq, content := rankQuery(res, qv, now, req.Query, s.Principal)
	for round := 0; ; round++ {
		cands, props = v.candidates(res.Candidates, cur, content)
		results, ex, err = rank.Rank(rq, cands, opts)
		if err != nil {
			return nil, fmt.Errorf("rank: %w", err)
		}
		if v.all {
			break
		}
		// Read the results from the store. If it refuses any (a stale
		// index: changed by another process), rank again without them.
		ids := make([]string, 0, len(results))
		for _, r := range results {
			ids = append(ids, r.ID)
		}
		refused := len(v.refused)
		if err := v.fetch(ctx, res.Candidates, ids); err != nil {
			return nil, err
		}
		if len(v.refused) == refused {
			break
		}
		if round == 2 {
			// Much of the index is stale: read every candidate once.
			if err := v.fetch(ctx, res.Candidates, nil); err != nil {
				return nil, err
			}
			v.all = true
		}
	}
	byID := v.fetched
	ranked := len(props)
	out := &RecallResult{
		RecallID:   newRecallID(now),
		Results:    make([]RecallHit, 0, len(results)),
		BelowFloor: ex.BelowFloor,
		MinScore:   ex.Floor,
	}
	items := make([]render.Item, 0, len(results))
	used := 0
	for n, r := range results {
		m, ok := byID[r.ID]
		if !ok {
			continue // refused by the store after the last ranking round
		}
		if req.BudgetChars > 0 {
			if used+len(m.Content) > req.BudgetChars {
				ex.OverBudget = len(results) - n
				break
			}
			used += len(m.Content)
		}
		e.derive(m, now)
		hit := RecallHit{Memory: m, Score: r.Score}
		if req.Explain {
			hit.Explain = explainHit(r, m, props[r.Index], cur, rq, opts.WithDefaults(), res, content, rel)
		}
		out.Results = append(out.Results, hit)
		if req.Render {
			date := m.CreatedAt
			if m.ValidFrom != nil {
				date = *m.ValidFrom
			}
			items = append(items, render.Item{ID: m.ID, Kind: string(m.Kind), Source: string(m.Source), Date: date, Score: r.Score, Content: m.Content})
		}
	}
	action := ActionRecall
	counts := map[string]int64{"proposed": int64(len(res.Candidates)), "ranked": int64(ranked), "below_floor": int64(ex.BelowFloor)}
	if req.Preview {
		action = ActionRecallPreview
		out.BelowFloorResults = e.belowFloor(rq, cands, props, opts, ex.Floor, &v, cur, now, res, content, rel)
		counts["below_floor_results"] = int64(len(out.BelowFloorResults))
	}
	took := time.Since(start)
	ids := make([]string, len(out.Results))
	scores := make([]float64, len(out.Results))
	for i, h := range out.Results {
		ids[i], scores[i] = h.Memory.ID, h.Score
	}
	counts["returned"] = int64(len(ids))
	// The recall answers only once its audit event is committed (group
	// commit, audit.go): a recall whose event cannot be recorded is not
	// answered, so every recall a caller received is in the audit log.
	// The event is queued now and waited for last: the rendering and the
	// explanation are made while its batch commits.
	pending, err := e.submitAudit(ctx, store.AuditEvent{
		Tenant: s.Tenant, Principal: s.Principal, Agent: s.Agent, Action: action, At: now,
		RecallID: out.RecallID, MemoryIDs: ids, Scores: scores, QuerySHA256: QueryHash(req.Query),
		Counts: counts,
	})
	if err != nil {
		return nil, fmt.Errorf("record the recall in the audit log: %w", err)
	}
	if req.Render {
		out.Context = render.Context(items)
	}
	if req.Explain {
		out.Explain = &RecallStats{RankExplain: ex, Proposed: len(res.Candidates), Ranked: ranked, Read: len(v.fetched), QueryTerms: res.QueryTerms,
			IdentifyingTerms: len(q.Exclude), Embedder: qv.provenance, TookMicros: took.Microseconds()}
		if qv.calibrated {
			o := opts.WithDefaults()
			out.Explain.Calibration = &Calibration{ProbeVersion: rank.ProbeVersion, Probes: qv.probes, Background: qv.background,
				NullSamples: qv.null.Samples(), Memories: res.N, VectorLow: o.VectorLow, VectorHigh: o.VectorHigh}
		}
	}
	if err := e.awaitAudit(ctx, pending); err != nil {
		return nil, fmt.Errorf("record the recall in the audit log: %w", err)
	}
	e.log.InfoContext(ctx, "recall", "tenant", s.Tenant, "principal", s.Principal, "recall_id", out.RecallID, "preview", req.Preview,
		"proposed", len(res.Candidates), "refused", len(v.refused), "returned", len(out.Results), "below_floor", ex.BelowFloor, "took", took)
	return out, nil
}

// rankQuery is what rank needs of a search's result: the content terms
// (the indexes of res.Terms that are not excluded, returned too) with
// their weights, and the partition and vector statistics.
func rankQuery(res *index.Result, qv queryVectors, now time.Time, query, principal string) (rank.Query, []int) {
	rq := rank.Query{AvgDocLen: res.AvgDocLen, Memories: res.N, Background: qv.background, Null: qv.null, Now: now}
	var content []int
	words := analysis.AppendWords(nil, query)
	own := analysis.Terms(principal)
	for j, t := range res.Terms {
		if t.Excluded && t.DF > 0 && (slices.Contains(own, t.Term) || !commonNoun(words, t.Term)) {
			rq.Named = true
		}
		if !t.Excluded {
			content = append(content, j)
			spec, modifier := wordWeight(words, t.Term)
			rq.Terms = append(rq.Terms, rank.Term{IDF: t.IDF, Specificity: spec, Modifier: modifier})
		}
	}
	return rq, content
}

// explainHit is the score breakdown of one ranked memory.
func explainHit(r rank.Result, m *memgate.Memory, p index.Candidate, cur model, rq rank.Query, opts rank.Options, res *index.Result, content []int, rel related) *HitExplain {
	h := &HitExplain{
		RankComponents: r.Components,
		StaleEmbedding: m.Embedding != nil && cur.dim > 0 && !cur.matches(m.Embedding),
		VectorRank:     p.VectorRank, TextRank: p.TextRank,
	}
	if p.HasVector && rq.Background.SD > 0 {
		h.VectorZ = rq.Background.Z(float64(p.ContentCosine))
		h.VectorExcess = rq.Null.Excess(h.VectorZ, rq.Memories)
	}
	for k, j := range content {
		if j >= len(p.Matches) || p.Matches[j].Related < 0 {
			continue
		}
		mt := p.Matches[j]
		ev := memgate.TermEvidence{Query: res.Terms[j].Term, Memory: res.Terms[j].Term, Relation: "word", Weight: mt.Weight}
		if mt.Related > 0 {
			ev = rel.evidence(mt.Related-1, ev)
		}
		c := rank.Candidate{Matches: make([]rank.Match, len(rq.Terms)), DocLen: p.DocLen}
		c.Matches[k] = rank.Match{Weight: mt.Weight, TF: mt.TF}
		ev.Share = rank.TextEvidence(rq, c, opts)
		h.Evidence = append(h.Evidence, ev)
	}
	return h
}

// belowFloor returns a preview's best candidates (at most opts.K) whose
// score fell below floor (and above zero), best first (in rank's order: score, then fused
// evidence, then candidate order), each with its explanation. Scores do not
// depend on the floor, k, budget or diversity, so rank.Score over the
// candidates the recall ranked gives each the score it had there. Every
// one of those candidates was read through the store's read gate first (a
// preview reads them all before ranking); one the verifier does not hold
// is skipped, never shown.
func (e *Engine) belowFloor(q rank.Query, cands []rank.Candidate, props []index.Candidate, opts rank.Options, floor float64, v *verifier, cur model, now time.Time, res *index.Result, content []int, rel related) []RecallHit {
	if floor <= 0 || !v.all {
		return nil // the floor is off, or the candidates were not all read
	}
	sc := rank.Score(q, cands, opts)
	var below []int
	for i, s := range sc.Scores {
		// A score of 0 (no evidence at all) is left out: no floor above
		// zero would let it through, and rank never returns it.
		if s > 0 && !sc.Passes(i, floor, opts) {
			below = append(below, i)
		}
	}
	slices.SortFunc(below, func(a, b int) int {
		if c := cmp.Compare(sc.Scores[b], sc.Scores[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(sc.Components[b].Fused, sc.Components[a].Fused); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var out []RecallHit
	for _, i := range below {
		if len(out) == opts.K {
			break
		}
		m, ok := v.fetched[cands[i].ID]
		if !ok {
			continue
		}
		e.derive(m, now)
		r := rank.Result{Index: i, ID: cands[i].ID, Score: sc.Scores[i], Components: sc.Components[i]}
		out = append(out, RecallHit{Memory: m, Score: r.Score, Explain: explainHit(r, m, props[i], cur, q, opts.WithDefaults(), res, content, rel)})
	}
	return out
}

// checkRecall validates a recall request at the edge and returns the rank
// options it asks for.
func (e *Engine) checkRecall(req *RecallRequest) (rank.Options, error) {
	o := e.cfg.Rank
	o.Budget, o.MMR = 0, false
	s := req.Scope
	if s.AllPrincipals {
		return o, memgate.FieldError("principal", "recall is for one principal")
	}
	if err := s.Validate(); err != nil {
		return o, err
	}
	if err := memgate.CheckText("query", req.Query, MaxQueryBytes); err != nil {
		return o, err
	}
	if strings.TrimFunc(req.Query, unicode.IsSpace) == "" {
		return o, memgate.FieldError("query", "must not be blank")
	}
	switch {
	case req.K < 0:
		return o, memgate.FieldError("k", "must not be negative")
	case req.K == 0:
		req.K = DefaultK
	case req.K > MaxK:
		return o, memgate.FieldError("k", "must be at most %d", MaxK)
	}
	o.K = req.K
	switch {
	case req.MinScore == nil:
		o.Floor = rank.DefaultFloor
	case !(*req.MinScore >= 0 && *req.MinScore <= 1):
		return o, memgate.FieldError("min_score", "must be between 0 and 1")
	case *req.MinScore == 0:
		o.Floor = rank.FloorOff
	default:
		o.Floor = *req.MinScore
	}
	if req.IncludeRestricted && s.HideRestricted {
		return o, &memgate.Error{Code: memgate.EFORBIDDEN, Field: "include_restricted", Message: "is not granted to this API key's role"}
	}
	if err := checkKinds("kinds", req.Kinds); err != nil {
		return o, err
	}
	if err := checkSources("sources", req.Sources); err != nil {
		return o, err
	}
	if len(req.Metadata) > 16 {
		return o, memgate.FieldError("metadata", "at most 16 metadata filters")
	}
	for k, v := range req.Metadata {
		if k == "" || len(k) > 128 {
			return o, memgate.FieldError("metadata", "filter keys must have 1 to 128 bytes")
		}
		switch v.(type) {
		case string, bool, float64, int, int64:
		default:
			if _, ok := v.(interface{ Float64() (float64, error) }); !ok {
				return o, memgate.FieldError("metadata."+k, "must be a string, a boolean or a number")
			}
		}
	}
	if req.BudgetChars < 0 || req.BudgetChars > MaxBudgetChars {
		return o, memgate.FieldError("budget_chars", "must be between 0 and %d", MaxBudgetChars)
	}
	o.MMR = req.Diversify
	return o, nil
}

// newRecallID returns an id for a recall, recorded by the audit log.
func newRecallID(t time.Time) string { return "r_" + memgate.NewID(t)[2:] }

// verifier reads candidates from the store with the read gate and remembers
// which it admitted (fetched) and which it refused.
type verifier struct {
	e       *Engine
	scope   memgate.Scope
	gate    store.ReadGate
	fetched map[string]*memgate.Memory
	refused map[string]bool
	all     bool // every candidate has been read
}

// fetch reads ids (every candidate when ids is nil) not read yet.
func (v *verifier) fetch(ctx context.Context, cands []index.Candidate, ids []string) error {
	if ids == nil {
		for _, c := range cands {
			ids = append(ids, c.ID)
		}
	}
	todo := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := v.fetched[id]; !ok && !v.refused[id] {
			todo = append(todo, id)
		}
	}
	for chunk := range slices.Chunk(todo, store.MaxFetch) {
		ms, err := v.e.store.Fetch(ctx, v.scope, chunk, v.gate)
		if err != nil {
			return err
		}
		for _, m := range ms {
			v.fetched[m.ID] = m
		}
		for _, id := range chunk {
			if _, ok := v.fetched[id]; !ok {
				v.refused[id] = true
			}
		}
	}
	return nil
}

// candidates returns the rank candidates: every proposal not refused (when
// every candidate has been read, only those admitted), with the index's
// proposal beside each. content lists the indexes of the search's terms
// that rank scores (see rankQuery). The proposals kept are props itself
// when none is dropped (the usual case: a copy of every proposal was a
// third of a recall's allocation), a copy otherwise; the caller must not
// modify either.
func (v *verifier) candidates(props []index.Candidate, cur model, content []int) ([]rank.Candidate, []index.Candidate) {
	cands := make([]rank.Candidate, 0, len(props))
	var kept []index.Candidate // nil while every proposal so far is kept
	matches := make([]rank.Match, len(content)*len(props))
	for i, c := range props {
		m := v.fetched[c.ID]
		if v.refused[c.ID] || v.all && m == nil {
			if kept == nil {
				kept = make([]index.Candidate, i, len(props))
				copy(kept, props[:i])
			}
			continue
		}
		rc := rank.Candidate{ID: c.ID, DocLen: c.DocLen, Group: c.Group, Seq: c.Seq, Time: time.UnixMicro(c.CreatedAt), Named: c.BM25 > c.ContentBM25}
		rc.Matches, matches = matches[:len(content):len(content)], matches[len(content):]
		for k, j := range content {
			if j < len(c.Matches) && c.Matches[j].Related >= 0 {
				rc.Matches[k] = rank.Match{Weight: c.Matches[j].Weight, TF: c.Matches[j].TF}
			}
		}
		// The index holds vectors of the current model only. A memory
		// read from the store must still be of it (it may have been
		// re-embedded since the index saw it).
		if c.HasVector && (m == nil || cur.matches(m.Embedding)) {
			rc.Cosine, rc.HasVector = float64(c.ContentCosine), true
			if m != nil {
				rc.Vector = m.Embedding.Vector
			}
		}
		if m != nil {
			rc.Chars = len(m.Content)
		}
		cands = append(cands, rc)
		if kept != nil {
			kept = append(kept, c)
		}
	}
	if kept == nil {
		return cands, props
	}
	return cands, kept
}

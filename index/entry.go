package index

import (
	"time"

	"github.com/memgate/memgate"
)

// Entry is what the index keeps of one memory: its id, its vector, the
// analyzed terms of its content and the fields searches pre-filter on.
//
// The index copies what it keeps: the caller may reuse Vector and Terms
// after Upsert returns.
type Entry struct {
	ID string

	// Vector is the memory's embedding, or nil (or empty) when it has none
	// or when it was made by another model than the one queries use (the
	// engine passes nil for those). All vectors of a partition have one
	// dimension.
	Vector []float32

	// Terms are the analyzed tokens of the content, with repeats, in any
	// order: len(Terms) is the document length for BM25.
	Terms []string

	// Group places the entry among its neighbours for context: entries of
	// one non-empty group are kept in insertion order and a search can
	// return an entry's previous and next ones (Query.Neighbors). The
	// engine sets it for conversation turns and leaves it empty otherwise;
	// an entry with an empty group has no neighbours. It is not a filter.
	Group string

	Agent        string
	Conversation string
	Kind         memgate.Kind
	Source       memgate.Source
	Sensitivity  memgate.Sensitivity // "" is standard; an unknown value counts as restricted
	Status       memgate.Status      // only StatusActive is ever proposed; "" is not active

	// Times are Unix microseconds (UTC, the precision every store keeps);
	// 0 means unset. See Micros.
	CreatedAt  int64
	ExpiresAt  int64
	ValidFrom  int64
	ValidUntil int64
}

// Micros converts an optional time to the Entry representation: Unix
// microseconds, 0 for nil or the zero time.
func Micros(t *time.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// FromMemory builds the Entry of m with the given analyzed terms and vector.
// The vector is passed separately because only the engine knows whether m's
// embedding was made by the query model (pass nil when it was not). Group is
// left empty: which memories give each other context is the engine's call.
func FromMemory(m *memgate.Memory, terms []string, vector []float32) Entry {
	return Entry{
		ID:           m.ID,
		Vector:       vector,
		Terms:        terms,
		Agent:        m.Agent,
		Conversation: m.Conversation,
		Kind:         m.Kind,
		Source:       m.Source,
		Sensitivity:  m.Sensitivity,
		Status:       m.Status,
		CreatedAt:    Micros(&m.CreatedAt),
		ExpiresAt:    Micros(m.ExpiresAt),
		ValidFrom:    Micros(m.ValidFrom),
		ValidUntil:   Micros(m.ValidUntil),
	}
}

func (e *Entry) check() (norm float64, err error) {
	if e.ID == "" {
		return 0, memgate.FieldError("id", "is required")
	}
	if len(e.Vector) == 0 {
		e.Vector = nil // empty is none
		return 0, nil
	}
	if len(e.Vector) > MaxDim {
		return 0, memgate.FieldError("vector", "must have at most %d values, not %d", MaxDim, len(e.Vector))
	}
	norm, ok := checkVector(e.Vector)
	if !ok {
		return 0, memgate.FieldError("vector", "must be finite with a non-zero norm (id %s)", e.ID)
	}
	return norm, nil
}

// Query asks a partition for candidates.
type Query struct {
	// Vector is the query embedding, or nil (or empty) for a text-only
	// search. Its dimension must match the partition's vectors.
	Vector []float32
	// Terms are the analyzed tokens of the query text; repeats count once.
	Terms []string
	// Exclude lists terms of Terms that the content query leaves out (the
	// words that identify the partition, for the engine): every candidate
	// also gets ContentBM25, its BM25 without them, and the result
	// ContentIDFSum. Empty means the content query is the query.
	Exclude []string
	// Related lists words related to query terms (a synonym, a derived
	// form, a kind of what the term names: the engine chooses them, with
	// package lexicon): each proposes and matches memories in the place of
	// the term it stands for, its weight times that term's idf. A related
	// word of an excluded term, or of a term not in Terms, is ignored.
	Related []Related
	// ContentVector, when set, is the content query's vector, of Vector's
	// dimension: every candidate with a vector also gets its exact cosine
	// with it (Candidate.ContentCosine). It proposes no candidates of its
	// own. Nil means the content query's vector is Vector.
	ContentVector []float32
	// K is the number of candidates per channel: the top K by cosine and
	// the top K by BM25 are returned together. 1 ≤ K ≤ MaxK.
	K int
	// Filter restricts both channels, and the neighbours.
	Filter Filter
	// Neighbors asks for the group neighbours of the channel candidates.
	// The zero value asks for none.
	Neighbors Neighbors
}

// Related is a word that may stand for a query term (see Query.Related).
type Related struct {
	Term   string  // analyzed, as Terms are
	Of     string  // the query term it stands for
	Weight float64 // in (0, 1]
}

// MaxRelated bounds Query.Related.
const MaxRelated = 4096

// MaxK bounds Query.K.
const MaxK = 10000

// Neighbors asks a search to add, for every channel candidate with a
// non-empty group, up to Prev previous and up to Next next entries of its
// group (in insertion order) that pass the filter. An entry the filter
// refuses is skipped and the walk goes on, so a revoked or expired turn does
// not hide the one behind it; but each direction visits at most 2·(Prev+Next)
// entries of the group, so the work stays bounded. An entry that is already a
// candidate counts as found (it is not added twice). Neighbours get both
// exact scores, as channel candidates do, and are marked Candidate.Neighbor;
// the neighbours of neighbours are not added.
type Neighbors struct {
	Prev, Next int // 0 ≤ Prev, Next ≤ MaxNeighbors
}

// MaxNeighbors bounds Neighbors.Prev and Neighbors.Next.
const MaxNeighbors = 16

// steps is how many entries of its group a search visits in each direction
// from a candidate, passing the filter or not.
func (n Neighbors) steps() int { return 2 * (n.Prev + n.Next) }

func (n Neighbors) check() error {
	if n.Prev < 0 || n.Prev > MaxNeighbors {
		return memgate.FieldError("neighbors.prev", "must be between 0 and %d", MaxNeighbors)
	}
	if n.Next < 0 || n.Next > MaxNeighbors {
		return memgate.FieldError("neighbors.next", "must be between 0 and %d", MaxNeighbors)
	}
	return nil
}

// Filter is the read-gate pre-filter, evaluated inline during the scan. The
// store applies the full predicate again when the engine re-reads the final
// memories; this filter only keeps the index from spending its K slots on
// memories the store would refuse. Only active memories are ever proposed.
type Filter struct {
	// Agent, when set, keeps memories of that agent and memories stored
	// without an agent; empty means no agent filter. Conversation likewise.
	Agent        string
	Conversation string
	// Kinds and Sources, when not empty, keep memories whose kind (source)
	// is listed. A listed value that is not in the vocabulary matches
	// nothing.
	Kinds   []memgate.Kind
	Sources []memgate.Source
	// IncludeRestricted lets restricted memories through.
	IncludeRestricted bool
	// Now is when expiry is judged: a memory with ExpiresAt ≤ Now is
	// expired. Required.
	Now time.Time
	// AsOf keeps memories valid at that time: ValidFrom unset or ≤ AsOf,
	// ValidUntil unset or > AsOf, and not expired at AsOf either (ExpiresAt
	// after both Now and AsOf). Zero means Now. This is the store's read
	// gate (store.ReadGate), so the index spends no slot on a memory the
	// store would refuse.
	AsOf time.Time
	// Allow, when set, is asked about every memory that passed the other
	// tests and could still enter a top K, and about every neighbour
	// visited (see Neighbors). It must be fast, must not call
	// back into the index for the same partition, and must be safe for
	// concurrent use: a large partition is scanned by several goroutines.
	Allow func(id string) bool
}

// Candidate is one proposed memory with both channel scores.
type Candidate struct {
	ID string
	// Cosine is the exact cosine (see Cosine) between the query vector and
	// the memory's vector; valid only when HasVector.
	Cosine    float32
	HasVector bool
	// ContentCosine is the exact cosine with Query.ContentVector (Cosine
	// when there is none); valid only when HasVector.
	ContentCosine float32
	// BM25 is the raw BM25 score of the memory for the query terms (0 when
	// no query term occurs in it): the sum of BM25Term over the distinct
	// query terms it contains, added in decreasing idf order. Matched is how
	// many distinct query terms occur in it. ContentBM25 is the same sum
	// without the terms of Query.Exclude (BM25 when there are none).
	BM25        float64
	ContentBM25 float64
	Matched     int
	// Matches says, for each of Result.Terms (same order), how the memory
	// holds it: by the term itself, by one of Query.Related, or not at
	// all. DocLen is the memory's length in terms.
	Matches []TermMatch
	DocLen  int
	// VectorRank and TextRank are the 1-based positions of the memory in
	// the top K by cosine and by BM25; 0 when it is not in that top K.
	VectorRank int
	TextRank   int
	// CreatedAt is the memory's creation time in Unix microseconds, for
	// recency.
	CreatedAt int64
	// Group is the memory's Entry.Group and Seq its sequence number in the
	// partition: memories of one non-empty group are in Seq order in the
	// order they were inserted (see Partition.Upsert). Seq numbers are
	// comparable only within one search result: a partition loaded again
	// numbers its memories afresh.
	Group string
	Seq   int64
	// Neighbor marks a candidate proposed as a group neighbour of a channel
	// candidate (see Query.Neighbors), not by either channel: its
	// VectorRank and TextRank are 0, its scores exact all the same.
	Neighbor bool

	slot int32 // in the partition searched, while the search holds it
}

// Result is what a search proposes.
type Result struct {
	// Candidates are the union of the top K by cosine (ties broken by
	// ascending ID) and the top K by BM25 (same tie-break): first the
	// vector channel in rank order, then the text-only candidates in rank
	// order; then, when the query asks for neighbours, the neighbours that
	// are not channel candidates, each once, in the order they were found:
	// for each channel candidate in turn, its previous neighbours nearest
	// first, then its next neighbours nearest first.
	Candidates []Candidate
	// IDFSum is Σ idf over the distinct query terms, present in the
	// partition or not (an absent term has df 0): the largest idf mass a
	// memory could match, for normalizing BM25.
	IDFSum float64
	// ContentIDFSum is IDFSum without the terms of Query.Exclude.
	ContentIDFSum float64
	// QueryTerms is the number of distinct query terms, and Terms their
	// statistics, in order of first occurrence.
	QueryTerms int
	Terms      []TermStat
	// N and AvgDocLen are the partition statistics BM25 used. Every entry
	// of the partition counts, whatever the filter: N and df are properties
	// of the partition, not of the query, so scores of one memory are
	// comparable across queries and filters. (If the loader supplies
	// pending or revoked memories, they count too.)
	N         int
	AvgDocLen float64
	// Version is the version of the partition searched (see Loader and
	// Index.Apply); 0 for a partition made with NewPartition.
	Version int64
	// Approximate says the vector channel searched the rows nearest the
	// query in a large partition's inverted file, not every row (see
	// Config.ApproxMinRows): its candidates are the exact top K of those
	// rows.
	Approximate bool
	// Rescored is how many vectors the exact pass re-scored (a measure of
	// how much the quantized bound had to hedge), Postings how many
	// postings the text channel visited. Both are diagnostics.
	Rescored int
	Postings int
}

// TermStat is a distinct query term's statistics in the partition.
type TermStat struct {
	Term     string
	DF       int
	IDF      float64
	Excluded bool // in Query.Exclude
}

// TermMatch is how a memory holds one query term: Related is −1 when it
// does not, 0 when it holds the term itself, and i+1 when it holds the
// term's related word Query.Related[i] (the heaviest it holds); TF is how
// often, and Weight the match's weight (1 for the term itself).
type TermMatch struct {
	Related int
	TF      int
	Weight  float64
}

// kind, source and flag bits of the compact per-entry metadata.
const (
	otherBit = 1 << 7 // a kind or source outside the vocabulary

	flagActive     = 1 << 0
	flagRestricted = 1 << 1
	flagTimed      = 1 << 2 // one of the expiry/validity times is set
)

func kindBit(k memgate.Kind) uint8 {
	for i, v := range memgate.Kinds {
		if v == k {
			return 1 << i
		}
	}
	return otherBit
}

func sourceBit(s memgate.Source) uint8 {
	for i, v := range memgate.Sources {
		if v == s {
			return 1 << i
		}
	}
	return otherBit
}

// meta is the compact, fixed-size form of an entry's filter fields.
type meta struct {
	agent, conv uint32 // interned; 0 is "none" (visible from every agent/conversation)
	kind        uint8
	source      uint8
	flags       uint8
	created     int64
	expires     int64
	validFrom   int64
	validUntil  int64
}

// noMatch is an interned id no entry has: the id of a requested agent or
// conversation that the partition has never seen.
const noMatch = ^uint32(0)

// compiled is a Filter resolved against one partition.
type compiled struct {
	agent, conv    uint32
	anyAgent       bool
	anyConv        bool
	kinds, sources uint8
	restrictedOK   bool
	expiredAt      int64 // max(now, asOf): ExpiresAt ≤ expiredAt is expired
	asOf           int64
	allow          func(string) bool
}

func (f *Filter) compile(p *Partition) (compiled, error) {
	if f.Now.IsZero() {
		return compiled{}, memgate.FieldError("filter.now", "is required")
	}
	c := compiled{
		anyAgent:     f.Agent == "",
		anyConv:      f.Conversation == "",
		kinds:        0xff,
		sources:      0xff,
		restrictedOK: f.IncludeRestricted,
		asOf:         f.Now.UnixMicro(),
		allow:        f.Allow,
	}
	if !f.AsOf.IsZero() {
		c.asOf = f.AsOf.UnixMicro()
	}
	// Unix microseconds floor the times: for a stored time E (whole
	// microseconds), E ≤ t exactly when E ≤ floor(t).
	c.expiredAt = max(f.Now.UnixMicro(), c.asOf)
	if !c.anyAgent {
		c.agent = p.lookup(p.agents, f.Agent)
	}
	if !c.anyConv {
		c.conv = p.lookup(p.convs, f.Conversation)
	}
	if len(f.Kinds) > 0 {
		c.kinds = 0
		for _, k := range f.Kinds {
			if b := kindBit(k); b != otherBit {
				c.kinds |= b
			}
		}
	}
	if len(f.Sources) > 0 {
		c.sources = 0
		for _, s := range f.Sources {
			if b := sourceBit(s); b != otherBit {
				c.sources |= b
			}
		}
	}
	return c, nil
}

// pass is the inline filter test.
func (c *compiled) pass(m *meta, id string) bool {
	if m.flags&flagActive == 0 ||
		m.flags&flagRestricted != 0 && !c.restrictedOK ||
		m.kind&c.kinds == 0 ||
		m.source&c.sources == 0 ||
		!c.anyAgent && m.agent != 0 && m.agent != c.agent ||
		!c.anyConv && m.conv != 0 && m.conv != c.conv {
		return false
	}
	if m.flags&flagTimed != 0 && (m.expires != 0 && m.expires <= c.expiredAt ||
		m.validFrom != 0 && m.validFrom > c.asOf ||
		m.validUntil != 0 && m.validUntil <= c.asOf) {
		return false
	}
	return c.allow == nil || c.allow(id)
}

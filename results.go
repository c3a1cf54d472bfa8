package memgate

import "math"

// This file holds the results of the callers' contract (see the package
// comment): what the engine, the HTTP API and the Go client return. Their
// JSON is the API's.

// Remembered is the outcome of one remember: the memory that stands for
// it, and whether it folded into an existing one (dedup) instead of being
// stored anew. Its Status says whether it is active or held as pending
// (with StatusReason).
type Remembered struct {
	*Memory
	Deduplicated bool `json:"deduplicated"`
	// Replayed: an earlier request with the same idempotency key stored
	// this memory; this one stored nothing.
	Replayed bool `json:"replayed,omitempty"`
}

// RecallResult is what a recall returns.
type RecallResult struct {
	RecallID   string       `json:"recall_id"`
	Results    []RecallHit  `json:"results"`
	BelowFloor int          `json:"below_floor"`
	MinScore   float64      `json:"min_score"`
	Context    string       `json:"context,omitempty"`
	Explain    *RecallStats `json:"explain,omitempty"`
	// BelowFloorResults, for a preview only, are the best candidates (at
	// most K) whose score fell below the floor (a score of 0, no evidence
	// at all, is left out), best first, each with its
	// score and its explanation (whether or not Explain was asked). Each
	// was read through the store's read gate like the results; none is
	// ever rendered into Context. Empty when the floor is off.
	BelowFloorResults []RecallHit `json:"below_floor_results,omitempty"`
}

// RecallHit is one recalled memory with its score.
type RecallHit struct {
	Memory  *Memory     `json:"memory"`
	Score   float64     `json:"score"`
	Explain *HitExplain `json:"explain,omitempty"`
}

// HitExplain is the breakdown of one result's score.
type HitExplain struct {
	RankComponents
	// VectorZ is how many deviations the memory's cosine with the content
	// query stands above the query's background, and VectorExcess how far
	// that z-score stands out as the best of the partition's memories
	// (what Vector calibrates: package rank, Null).
	VectorZ      float64 `json:"vector_z,omitempty"`
	VectorExcess float64 `json:"vector_excess,omitempty"`
	// Evidence names what carried the text evidence: for each content
	// word of the query the memory holds, the word it holds and how the
	// two are related.
	Evidence []TermEvidence `json:"evidence,omitempty"`
	// StaleEmbedding is set when the memory's vector was made by another
	// model than the one embedding queries: it ranked by text only.
	StaleEmbedding bool `json:"stale_embedding,omitempty"`
	VectorRank     int  `json:"vector_rank,omitempty"`
	TextRank       int  `json:"text_rank,omitempty"`
}

// TermEvidence is how a memory holds one content word of the query.
type TermEvidence struct {
	// Query is the query's word (as analyzed: its stem) and Memory the
	// memory's word that matched it (the same, or a related one).
	Query  string `json:"query"`
	Memory string `json:"memory"`
	// Relation is how they are related: "word" (the same word), "lemma"
	// (another form of it: ate and eat), "synonym", "derivation"
	// (allergic and allergy), "category" (the memory's word is a kind of
	// the query's: cello and instrument), or a chain of them. Path lists
	// the words and concepts in between, when there are any.
	Relation string   `json:"relation"`
	Path     []string `json:"path,omitempty"`
	// Weight is the match's weight (1 for the word itself) and Share the
	// part of the memory's text evidence it gives.
	Weight float64 `json:"weight"`
	Share  float64 `json:"share"`
}

// RankComponents are the parts of a result's score, each in [0, 1]
// (package rank, where it is rank.Components, says how each is made).
type RankComponents struct {
	// Text is the share of the content query's weight the memory holds,
	// its words or related ones (see TermEvidence).
	Text float64 `json:"text"`
	// Vector is the memory's vector evidence: how far its cosine with the
	// content query stands out from chance in its partition, calibrated
	// (0 without a comparable vector).
	Vector float64 `json:"vector"`
	// Own is the memory's own evidence, from its text and its vector.
	Own      float64 `json:"own"`
	Context  float64 `json:"context"`  // evidence added by conversation neighbours
	Recency  float64 `json:"recency"`  // recency factor applied (1 when off)
	Feedback float64 `json:"feedback"` // feedback factor applied (1 when off)
	Fused    float64 `json:"fused"`    // the score: own evidence with context, recency and feedback
}

// RecallStats explains a recall as a whole: counts, the embedder used and
// its calibration, never content or query text.
type RecallStats struct {
	RankExplain
	Proposed   int `json:"proposed"`    // candidates the index proposed
	Ranked     int `json:"ranked"`      // of those, ranked (none the store refused)
	Read       int `json:"read"`        // memories read from the store through the read gate
	QueryTerms int `json:"query_terms"` // distinct analyzed query terms
	// IdentifyingTerms is how many of them identify the partition (in so
	// many of its memories that they are no evidence: see package rank,
	// "Names are not evidence"); relatedness is judged without them.
	IdentifyingTerms int          `json:"identifying_terms"`
	Embedder         *Provenance  `json:"embedder,omitempty"`
	Calibration      *Calibration `json:"calibration,omitempty"`
	TookMicros       int64        `json:"took_us"`
}

// RankExplain says how a recall was decided, without content or query
// text (package rank, where it is rank.Explain).
type RankExplain struct {
	Candidates  int     `json:"candidates"`  // candidates considered
	Relatedness float64 `json:"relatedness"` // the best score of any candidate
	Floor       float64 `json:"floor"`       // the floor applied (0 when off)
	BelowFloor  int     `json:"below_floor"` // candidates whose score was below the floor
	BeyondK     int     `json:"beyond_k"`    // candidates above the floor cut by k
	OverBudget  int     `json:"over_budget"` // results dropped by the character budget
	Diversified bool    `json:"diversified"` // MMR reordered the results
	Returned    int     `json:"returned"`    // len(results)
}

// Calibration says how the query vector's cosines were put on the scale
// every embedder shares (package rank, "Calibration").
type Calibration struct {
	ProbeVersion string `json:"probe_version"`
	Probes       int    `json:"probes"`
	// Background is the content query's cosines with the probes (the
	// query without its identifying terms).
	Background ProbeBackground `json:"background"`
	// NullSamples is how many z-scores of unrelated probe pairs the
	// model's null was measured on, and Memories the partition size whose
	// chance maximum a memory's vector must stand out from.
	NullSamples int `json:"null_samples"`
	Memories    int `json:"memories"`
	// VectorLow and VectorHigh map a memory's vector excess to vector
	// evidence (0 at or below low, 1 at or above high).
	VectorLow  float64 `json:"vector_low"`
	VectorHigh float64 `json:"vector_high"`
}

// ProbeBackground is the distribution of a query vector's cosines with the
// probe set: what an unrelated memory's cosine with that query looks like,
// for that query and that model (rank.Background).
type ProbeBackground struct {
	Mean float64 `json:"probe_mean"`
	SD   float64 `json:"probe_sd"`
}

// Z returns how many deviations cos stands above the mean (0 when the
// background is unknown).
func (b ProbeBackground) Z(cos float64) float64 {
	if !(b.SD > 0) {
		return 0
	}
	z := (cos - b.Mean) / b.SD
	if math.IsNaN(z) || math.IsInf(z, 0) {
		return 0
	}
	return z
}

// Provenance names the embedder that embedded the query.
type Provenance struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
}

// Page is one page of a List call.
type Page struct {
	Memories   []*Memory
	NextCursor string // "" on the last page
	Limit      int    // the page size used
	Clamped    bool   // the requested limit exceeded the maximum page size
}

// Count is one row of a Counts call: how many memories of one principal
// have one kind and one status.
type Count struct {
	Principal string `json:"principal"`
	Kind      Kind   `json:"kind"`
	Status    Status `json:"status"`
	N         int64  `json:"n"`
}

// ForgetReceipt says what Forget erased.
type ForgetReceipt struct {
	Tenant    string           `json:"tenant"`
	Principal string           `json:"principal"`
	Forgotten int64            `json:"forgotten"` // memories erased, with their vectors, feedback and dedup signatures
	ByKind    map[string]int64 `json:"by_kind"`
	ByStatus  map[string]int64 `json:"by_status"`
	// AuditPrincipal is the principal's pseudonym ("forgotten:…", a keyed
	// hash): the audit log's events about the principal, the forget's
	// own included, now name it so, and an admin finds them with it.
	AuditPrincipal string `json:"audit_principal"`
}

// ImportResult reports an import.
type ImportResult struct {
	Lines        int `json:"lines"`        // non-empty lines read
	Imported     int `json:"imported"`     // memories stored anew
	Deduplicated int `json:"deduplicated"` // lines folded into a memory already there (its seen_count rose)
	Pending      int `json:"pending"`      // memories stored pending: held by the write gate, or pending in the file
	Evicted      int `json:"evicted"`      // memories the retention caps removed
	Batches      int `json:"batches"`
	// TrustedStatus is how many memories kept their file's status over the
	// write gate's decision (ImportRequest.TrustStatus): stored active
	// though the gate would have held them.
	TrustedStatus int `json:"trusted_status"`
}

// ReadyCheck is one part of a readiness report: the store or the
// embedder, and what failed ("" when it answered).
type ReadyCheck struct {
	Part  string `json:"part"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Op is an operation a key may be allowed (package auth lists them and
// the permission table).
type Op string

// Grant is what a key may do, as a caller is told it (GET /v1/whoami): the
// key's public record and what the permission table and auth.ScopeFor
// derive from it. It holds no hash and no secret, and it is derived from
// the key alone (auth.GrantOf): no request field can change it.
type Grant struct {
	KeyID     string `json:"key_id"`
	Tenant    string `json:"tenant"`
	Role      Role   `json:"role"`
	Principal string `json:"principal,omitempty"` // the bound principal; "" when unbound
	Agent     string `json:"agent,omitempty"`     // the bound agent; "" when unbound
	Name      string `json:"name,omitempty"`
	// Operations are the operations the role is allowed (auth.Allowed),
	// in the order of auth.Ops.
	Operations []Op `json:"operations"`
	// TenantWide is true when the key may act across every principal of
	// its tenant on the tenant-wide operations (list, stats, audit,
	// export, import, keys) by naming none: an unbound admin key.
	TenantWide bool `json:"tenant_wide"`
	// MayIncludeRestricted is true when recall may be asked for restricted
	// memories with this key (auth.MayIncludeRestricted).
	MayIncludeRestricted bool `json:"may_include_restricted"`
	// MayPreview is true when recall may be marked a preview with this
	// key (auth.MayPreview: the inspector's dry run).
	MayPreview bool `json:"may_preview"`
	// Sources are the sources the key may claim for what it writes
	// (auth.SourcesOf).
	Sources []Source `json:"sources"`
}

package memgate

import "time"

// This file holds the audit log's part of the callers' contract (see the
// package comment).

// AuditEvent is one entry of the audit log. It never holds memory content
// or query text: ids, counts, scores and a hash of the query only.
type AuditEvent struct {
	Seq       int64     `json:"seq"` // assigned by the store
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Actor     string    `json:"actor"` // who acted: a key id, "cli", "sweeper"
	Action    string    `json:"action"`
	At        time.Time `json:"at"`
	// MemoryIDs are the memories acted on (for a recall: returned, in
	// order, with Scores beside them).
	MemoryIDs   []string  `json:"memory_ids,omitempty"`
	Scores      []float64 `json:"scores,omitempty"`
	RecallID    string    `json:"recall_id,omitempty"`
	QuerySHA256 string    `json:"query_sha256,omitempty"`
	// Counts carries numbers such as candidates, below_floor, forgotten.
	Counts map[string]int64 `json:"counts,omitempty"`
	// Reason is a machine code (e.g. contains_secret), never free text.
	Reason string `json:"reason,omitempty"`
	// ContentSHA256 is the content hash of the memory an approval or an
	// update acted on (with Counts["version"] its version): what a person
	// approved, never the content itself.
	ContentSHA256 string `json:"content_sha256,omitempty"`
}

// AuditPage is one page of an audit listing.
type AuditPage struct {
	Events     []AuditEvent `json:"events"`
	NextCursor string       `json:"next_cursor,omitempty"`
	Limit      int          `json:"limit"`
	Clamped    bool         `json:"clamped,omitempty"`
}

// AuditHistogram is the answer of an audit histogram request: every bucket
// of the range, zeros included, oldest first.
type AuditHistogram struct {
	Action        string            `json:"action"`
	BucketSeconds int64             `json:"bucket_seconds"`
	From          time.Time         `json:"from"`
	To            time.Time         `json:"to"`
	Buckets       []HistogramBucket `json:"buckets"`
}

// HistogramBucket is one bucket: the events with Start <= at < Start +
// the bucket.
type HistogramBucket struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
}

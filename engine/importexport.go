package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/store"
)

// ImportRequest is memgate.ImportRequest (the callers' contract).
type ImportRequest = memgate.ImportRequest

// ImportResult is memgate.ImportResult (the callers' contract).
type ImportResult = memgate.ImportResult

// importLine is one JSONL line: the Memory shape that export writes (and the
// API uses), plus an optional ttl.
type importLine struct {
	memgate.Memory
	TTL string `json:"ttl,omitempty"`
}

// Import reads JSONL memories from r and stores them through the write
// gate, as remembers by the importing key (the actor of ctx) would be:
// field validation and size limits, the policy for (source, kind), secrets
// refused, instruction-like content held as pending, the kind's default
// TTL, dedup, keys and the retention caps. Every line is parsed and gated
// before anything is stored, so a bad line (reported with its line
// number) writes nothing. Memories are then stored in atomic batches; if
// storing fails part-way, the result says how many were stored.
//
// The file is not trusted for what the gate decides: a memory is stored
// with the gate's status (active, or pending with the gate's reason), and
// created_by and updated_by are the importing key. The line's status,
// created_by and updated_by are kept as the receipt's imported_status,
// imported_created_by and imported_updated_by. A line's status may only
// hide its memory further (pending, revoked or superseded are kept, so an
// export restored brings back nothing its owner revoked), never reveal it:
// a line that says active is pending if the gate holds it. With
// req.TrustStatus the line's status is kept as it is (restoring one's own
// export), and the import's audit event counts the memories it stored
// active over the gate's hold (trusted_status). Flags are always the
// gate's.
//
// Lines may carry what an export wrote (id, times, counters, key, links);
// those are kept so an export imported elsewhere is the same memory, at
// version 1 (the import is its first write here). A line with an id is
// that memory restored, so it is never folded into another (dedup applies
// to lines without one, as to remembers); an id the tenant has is a
// conflict. The content_sha256 of a
// line, when present, must match its content. Vectors are not part of the
// format: every memory is embedded anew by this engine's embedder, with
// that embedder's provenance. The default source is "import".
func (e *Engine) Import(ctx context.Context, req ImportRequest, r io.Reader) (ImportResult, error) {
	var res ImportResult
	if err := memgate.CheckIdent("tenant", req.Tenant); err != nil {
		return res, err
	}
	if req.BatchSize <= 0 || req.BatchSize > e.cfg.MaxBatch {
		req.BatchSize = e.cfg.MaxBatch
	}
	if req.MaxLineBytes <= 0 {
		req.MaxLineBytes = 64 << 10
	}
	now := e.now()
	writer := writerOf(ctx)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), req.MaxLineBytes)
	var ms []*memgate.Memory
	ids := map[string]int{}
	lineNo, trusted := 0, 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		res.Lines++
		m, kept, err := e.parseImportLine(line, req, writer, now)
		if err != nil {
			return ImportResult{}, lineError(lineNo, err)
		}
		if prev, dup := ids[m.ID]; dup {
			return ImportResult{}, lineError(lineNo, memgate.FieldError("id", "repeats the id of line %d", prev))
		}
		ids[m.ID] = lineNo
		ms = append(ms, m)
		if kept {
			trusted++
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return ImportResult{}, lineError(lineNo+1, &memgate.Error{Code: memgate.ETOOLARGE, Message: fmt.Sprintf("line is longer than %d bytes", req.MaxLineBytes)})
		}
		return ImportResult{}, fmt.Errorf("read import: %w", err)
	}
	start := time.Now()
	res.TrustedStatus = trusted
	evicted := map[string][]string{} // by principal
	var order []string
	for i := 0; i < len(ms); i += req.BatchSize {
		batch := ms[i:min(i+req.BatchSize, len(ms))]
		wr, err := e.write(ctx, batch, nil, nil)
		if err != nil {
			e.auditImport(ctx, req, res, evicted, order)
			return res, fmt.Errorf("import batch %d (memories %d to %d): %w", res.Batches+1, i+1, i+len(batch), err)
		}
		for j, m := range wr.Memories {
			switch {
			case wr.Deduplicated[j]:
				res.Deduplicated++
			case m.Status == memgate.StatusPending:
				res.Pending++
				res.Imported++
			default:
				res.Imported++
			}
		}
		for _, ref := range wr.Evicted {
			if _, seen := evicted[ref.Principal]; !seen {
				order = append(order, ref.Principal)
			}
			evicted[ref.Principal] = append(evicted[ref.Principal], ref.ID)
			res.Evicted++
		}
		res.Batches++
	}
	e.auditImport(ctx, req, res, evicted, order)
	e.log.InfoContext(ctx, "import", "tenant", req.Tenant, "imported", res.Imported, "deduplicated", res.Deduplicated, "pending", res.Pending,
		"evicted", res.Evicted, "trusted_status", res.TrustedStatus, "batches", res.Batches, "took", time.Since(start))
	return res, nil
}

// auditImport records what an import stored (counts, never content) and,
// per principal, the memories its retention caps evicted. An import with
// TrustStatus says so (reason trust_status), with how many memories kept
// their file's status over the gate's.
func (e *Engine) auditImport(ctx context.Context, req ImportRequest, res ImportResult, evicted map[string][]string, order []string) {
	for _, p := range order {
		e.audit(ctx, store.AuditEvent{Tenant: req.Tenant, Principal: p, Action: ActionEvict, MemoryIDs: evicted[p], Reason: "retention_cap"})
	}
	ev := store.AuditEvent{Tenant: req.Tenant, Action: ActionImport, Counts: map[string]int64{
		"imported": int64(res.Imported), "deduplicated": int64(res.Deduplicated), "pending": int64(res.Pending),
		"evicted": int64(res.Evicted), "batches": int64(res.Batches), "trusted_status": int64(res.TrustedStatus)}}
	if req.TrustStatus {
		ev.Reason = "trust_status"
	}
	e.audit(ctx, ev)
}

// visibility orders statuses by what reads may show: an active memory is
// recalled, a pending one listed for review, a revoked or superseded one
// kept as history only.
func visibility(s memgate.Status) int {
	switch s {
	case memgate.StatusActive:
		return 2
	case memgate.StatusPending:
		return 1
	}
	return 0
}

// parseImportLine turns one line into the memory to store, through the
// write gate, as writer's. kept reports a line whose status TrustStatus
// kept over the gate's (stored active where the gate held it).
func (e *Engine) parseImportLine(line []byte, req ImportRequest, writer string, now time.Time) (m *memgate.Memory, kept bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var l importLine
	if err := dec.Decode(&l); err != nil {
		return nil, false, memgate.FieldError("", "is not a JSON memory object: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, false, memgate.FieldError("", "holds more than one JSON value")
	}
	if l.Tenant != "" && l.Tenant != req.Tenant {
		return nil, false, memgate.FieldError("tenant", "names another tenant than the import's")
	}
	l.Tenant = req.Tenant
	if l.Source == "" {
		l.Source = memgate.SourceImport
	}
	if l.ContentSHA256 != "" && l.ContentSHA256 != memgate.ContentHash(l.Content) {
		return nil, false, memgate.FieldError("content_sha256", "does not match the content")
	}
	l.Embedding, l.Expired = nil, false
	var ttl time.Duration
	if l.TTL != "" {
		d, err := memgate.ParseTTL(l.TTL)
		if err != nil {
			return nil, false, err
		}
		ttl = d
	}
	if l.Status != "" {
		if _, err := memgate.ParseStatus(string(l.Status)); err != nil {
			return nil, false, err
		}
	}
	// What the file says of status and writers is its receipt, never the
	// memory's: the gate decides the status, the importing key writes. A
	// line's own imported_* (an export of an import) give way to it.
	fileStatus, fileReason, restore := l.Status, l.StatusReason, l.ID != ""
	l.ImportedStatus, l.ImportedCreatedBy, l.ImportedUpdatedBy = l.Status, l.CreatedBy, l.UpdatedBy
	l.Status, l.StatusReason = memgate.StatusActive, ""
	l.CreatedBy, l.UpdatedBy = writer, writer
	l.Version, l.Flags = 1, nil
	r := RememberRequest{Memory: l.Memory, TTL: ttl}
	m, err = e.prepare(r, now, true)
	if err != nil {
		return nil, false, err
	}
	// A line restores counters from an export; ones the store would refuse
	// must fail here, naming the line, not in a later batch after earlier
	// ones are stored.
	if err := store.CheckCounters(m); err != nil {
		return nil, false, err
	}
	d := e.cfg.Policy.Decide(m)
	if d.Action == policy.ActionReject {
		return nil, false, d.Err
	}
	e.apply(m, d, r, now)
	switch gate := m.Status; {
	case fileStatus == "" || fileStatus == gate:
	case req.TrustStatus || visibility(fileStatus) < visibility(gate):
		// A file may hide a memory further; only TrustStatus lets it show
		// one the gate holds.
		kept = visibility(fileStatus) > visibility(gate)
		m.Status, m.StatusReason = fileStatus, fileReason
		if m.Status == memgate.StatusActive {
			m.StatusReason = "" // why a memory was held or retired; an active one has none
		}
		if err := memgate.CheckText("status_reason", m.StatusReason, e.cfg.Limits.WithDefaults().MaxReasonBytes); err != nil {
			return nil, false, err
		}
	}
	if restore || visibility(m.Status) == 0 {
		// A line with an id restores that memory as itself (a reused id is
		// a conflict), never folded into another one under another id; and
		// history (revoked, superseded) never folds into a live memory.
		m.DedupKey = ""
	}
	return m, kept, nil
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %q has the wrong type", e.Field)
	}
	if err == io.EOF {
		return "empty"
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

func lineError(n int, err error) error {
	me, ok := err.(*memgate.Error)
	if !ok {
		return fmt.Errorf("line %d: %w", n, err)
	}
	c := *me
	if c.Field != "" {
		c.Message = fmt.Sprintf("line %d: %s: %s", n, c.Field, c.Message)
	} else {
		c.Message = fmt.Sprintf("line %d: %s", n, c.Message)
	}
	c.Field = ""
	return &c
}

// Export writes every memory the scope contains as JSONL, oldest first, in
// the shape Import reads. It returns the number written.
func (e *Engine) Export(ctx context.Context, s memgate.Scope, w io.Writer) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	var all []*memgate.Memory
	f := store.Filter{Limit: store.MaxPageSize, Now: e.now()}
	for {
		p, err := e.store.List(ctx, s, f)
		if err != nil {
			return 0, err
		}
		all = append(all, p.Memories...)
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		m.Expired = false
		if err := enc.Encode(m); err != nil {
			return 0, fmt.Errorf("export: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	e.log.InfoContext(ctx, "export", "tenant", s.Tenant, "count", len(all))
	return len(all), nil
}

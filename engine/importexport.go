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

// Import reads JSONL memories from r. Every line is parsed and validated
// before anything is stored, so a bad line (reported with its line number)
// writes nothing. Memories are then stored in atomic batches; if storing
// fails part-way, the result says how many were stored.
//
// Lines may carry what an export wrote (id, status, times, version); those
// are kept so an export imported elsewhere is the same memory. The
// content_sha256 of a line, when present, must match its content. Vectors
// are not part of the format: every memory is embedded anew by this engine's
// embedder, with that embedder's provenance. The default source is "import".
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), req.MaxLineBytes)
	var ms []*memgate.Memory
	ids := map[string]int{}
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		res.Lines++
		m, err := e.parseImportLine(line, req.Tenant, now)
		if err != nil {
			return ImportResult{}, lineError(lineNo, err)
		}
		// created_by is the line's (the record's history, from an
		// export); the import is the last change.
		if w := writerOf(ctx); w != "" {
			m.UpdatedBy = w
		}
		if prev, dup := ids[m.ID]; dup {
			return ImportResult{}, lineError(lineNo, memgate.FieldError("id", "repeats the id of line %d", prev))
		}
		ids[m.ID] = lineNo
		ms = append(ms, m)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return ImportResult{}, lineError(lineNo+1, &memgate.Error{Code: memgate.ETOOLARGE, Message: fmt.Sprintf("line is longer than %d bytes", req.MaxLineBytes)})
		}
		return ImportResult{}, fmt.Errorf("read import: %w", err)
	}
	start := time.Now()
	for i := 0; i < len(ms); i += req.BatchSize {
		batch := ms[i:min(i+req.BatchSize, len(ms))]
		if err := e.embed(ctx, batch); err != nil {
			return res, err
		}
		if err := e.store.Insert(ctx, batch); err != nil {
			return res, fmt.Errorf("import batch %d (memories %d to %d): %w", res.Batches+1, i+1, i+len(batch), err)
		}
		e.indexed(batch...)
		res.Imported += len(batch)
		res.Batches++
	}
	e.audit(ctx, store.AuditEvent{Tenant: req.Tenant, Action: ActionImport, Counts: map[string]int64{"imported": int64(res.Imported), "batches": int64(res.Batches)}})
	e.log.InfoContext(ctx, "import", "tenant", req.Tenant, "imported", res.Imported, "batches", res.Batches, "took", time.Since(start))
	return res, nil
}

func (e *Engine) parseImportLine(line []byte, tenant string, now time.Time) (*memgate.Memory, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var l importLine
	if err := dec.Decode(&l); err != nil {
		return nil, memgate.FieldError("", "is not a JSON memory object: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, memgate.FieldError("", "holds more than one JSON value")
	}
	if l.Tenant != "" && l.Tenant != tenant {
		return nil, memgate.FieldError("tenant", "names another tenant than the import's")
	}
	l.Tenant = tenant
	if l.Source == "" {
		l.Source = memgate.SourceImport
	}
	if l.ContentSHA256 != "" && l.ContentSHA256 != memgate.ContentHash(l.Content) {
		return nil, memgate.FieldError("content_sha256", "does not match the content")
	}
	l.Embedding, l.Expired = nil, false
	var ttl time.Duration
	if l.TTL != "" {
		d, err := memgate.ParseTTL(l.TTL)
		if err != nil {
			return nil, err
		}
		ttl = d
	}
	explicitStatus := l.Status != ""
	m, err := e.prepare(RememberRequest{Memory: l.Memory, TTL: ttl}, now, true)
	if err != nil {
		return nil, err
	}
	// A line restores counters from an export; ones the store would refuse
	// must fail here, naming the line, not in a later batch after earlier
	// ones are stored.
	if err := store.CheckCounters(m); err != nil {
		return nil, err
	}
	// The write gate's content rules apply to imports too: a secret is
	// refused, and what the policy holds for approval is pending unless the
	// line restores a status from an export.
	d := e.cfg.Policy.Decide(m)
	if d.Action == policy.ActionReject {
		return nil, d.Err
	}
	if d.Status == memgate.StatusPending && !explicitStatus {
		m.Status, m.StatusReason = memgate.StatusPending, d.Reason
	}
	if m.Flags == nil {
		m.Flags = d.Flags
	}
	m.DedupKey = e.dedupKey(m)
	return m, nil
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

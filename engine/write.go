package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/store"
)

// RememberRequest is memgate.RememberRequest (the callers' contract).
type RememberRequest = memgate.RememberRequest

// requestSHA256 is the hash that tells a retry of r from another request
// with the same key: every field the caller chose, before any default.
// Supersedes and the memory's key are hashed only when set, so that the
// hash of a request without them is the one records written before
// supersessions took idempotency keys hold (TestRequestSHA256IsStable pins
// it); with them, a retry that names another key (another memory it
// replaces) is another request, a conflict, not a replay of the first.
//
// It is a function, not a method, because RememberRequest is the root
// package's type (memgate.RememberRequest) and the hash is the engine's.
func requestSHA256(r RememberRequest) string {
	m := r.Memory
	b, err := json.Marshal(struct {
		Tenant, Principal, Agent, Conversation string
		Kind, Source, Sensitivity              string
		Content, Reason                        string
		Metadata                               map[string]any
		ExpiresAt, ValidFrom, ValidUntil       *time.Time
		TTL                                    time.Duration
		Supersedes                             string `json:",omitempty"`
		Key                                    string `json:",omitempty"`
	}{m.Tenant, m.Principal, m.Agent, m.Conversation, string(m.Kind), string(m.Source), string(m.Sensitivity),
		m.Content, m.Reason, m.Metadata, m.ExpiresAt, m.ValidFrom, m.ValidUntil, r.TTL, r.Supersedes, m.Key})
	if err != nil {
		// Metadata was checked before: this cannot happen. Hash what
		// can be hashed; a mismatch then only costs a conflict.
		b = []byte(m.Content)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Remembered is memgate.Remembered (the callers' contract).
type Remembered = memgate.Remembered

// Remember passes one memory through the write gate and stores it.
func (e *Engine) Remember(ctx context.Context, r RememberRequest) (*Remembered, error) {
	if r.Supersedes != "" {
		s := r.Memory.Scope()
		s.ExactAgent, s.HideRestricted = r.ExactAgent, r.HideRestricted
		_, next, replayed, err := e.supersede(ctx, s, r.Supersedes, r)
		if err != nil {
			return nil, err
		}
		return &Remembered{Memory: next, Replayed: replayed}, nil
	}
	out, err := e.remember(ctx, []RememberRequest{r}, nil, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// RememberBatch passes every memory through the write gate, then embeds
// and stores them all or none. An item the gate refuses fails the whole
// batch, naming its index.
func (e *Engine) RememberBatch(ctx context.Context, rs []RememberRequest) ([]*Remembered, error) {
	for i, r := range rs {
		if r.Supersedes != "" {
			return nil, itemError(i, memgate.FieldError("supersedes", "is only accepted on a single remember"))
		}
	}
	return e.remember(ctx, rs, nil, true)
}

// remember is the write gate, in this order, all before anything is
// embedded: field validation; the policy for (source, kind); secrets
// (refused, never echoed); instruction-like content (held as pending);
// the policy's default TTL; dedup. Then the embedding, then one store
// transaction that folds duplicates and applies retention caps. keys are
// the store's idempotency keys, one per request; nil takes them from rs
// (supersede passes its own: the hash of the request as the caller made
// it, not as the old memory's fields completed it).
func (e *Engine) remember(ctx context.Context, rs []RememberRequest, keys []store.IdempotencyKey, batch bool) ([]*Remembered, error) {
	if len(rs) == 0 {
		return nil, memgate.FieldError("memories", "must not be empty")
	}
	if len(rs) > e.cfg.MaxBatch {
		return nil, &memgate.Error{Code: memgate.ETOOLARGE, Field: "memories", Message: fmt.Sprintf("holds %d memories, the limit is %d", len(rs), e.cfg.MaxBatch)}
	}
	start := time.Now()
	now := e.now()
	ms := make([]*memgate.Memory, len(rs))
	if keys == nil {
		var err error
		if keys, err = idempotencyKeys(rs, batch); err != nil {
			return nil, err
		}
	}
	writer := writerOf(ctx)
	for i, r := range rs {
		m, err := e.prepare(r, now, false)
		if err == nil {
			m.CreatedBy, m.UpdatedBy = writer, writer
		}
		if err == nil {
			err = e.gate(ctx, m, r, now)
		}
		if err == nil && r.Supersedes != "" {
			// Only Supersede comes here with a link, for a memory the gate
			// holds: the link waits for approval (see Supersede).
			if m.Status != memgate.StatusPending {
				err = fmt.Errorf("remember: a link to supersede on approval needs a pending memory, the gate made it %s", m.Status)
			}
			m.Supersedes = r.Supersedes
		}
		if err != nil {
			if batch {
				err = itemError(i, err)
			}
			return nil, err
		}
		ms[i] = m
	}
	res, err := e.write(ctx, ms, keys, func(res *store.WriteResult) []store.AuditEvent { return rememberEvents(ms, res) })
	if err != nil {
		return nil, err
	}
	out := make([]*Remembered, len(ms))
	var folded, pending, replayed int
	principals := map[string]bool{}
	for i, m := range res.Memories {
		out[i] = &Remembered{Memory: m, Deduplicated: res.Deduplicated[i], Replayed: res.Replayed[i]}
		e.derive(m, now)
		principals[m.Principal] = true
		switch {
		case res.Replayed[i]:
			replayed++
		case res.Deduplicated[i]:
			folded++
		case m.Status == memgate.StatusPending:
			pending++
		}
	}
	first := ms[0]
	if len(ms) == 1 {
		e.log.InfoContext(ctx, "remember", "tenant", first.Tenant, "principal", first.Principal, "id", out[0].ID, "status", out[0].Status, "deduplicated", out[0].Deduplicated, "replayed", out[0].Replayed, "took", time.Since(start))
	} else {
		e.log.InfoContext(ctx, "remember", "tenant", first.Tenant, "count", len(ms), "principals", len(principals), "deduplicated", folded, "pending", pending, "replayed", replayed, "evicted", len(res.Evicted), "took", time.Since(start))
	}
	return out, nil
}

// rememberEvents are a write's audit events: one remember event per
// principal (a batch may hold several people's memories, and each
// person's audit log holds their own, never the first item's principal
// for all), and an evict event per principal whose retention cap evicted
// memories.
func rememberEvents(ms []*memgate.Memory, res *store.WriteResult) []store.AuditEvent {
	type tally struct {
		stored, folded, pending, replayed, evicted []string
	}
	var order []string
	byPrincipal := map[string]*tally{}
	of := func(principal string) *tally {
		t := byPrincipal[principal]
		if t == nil {
			t = &tally{}
			byPrincipal[principal] = t
			order = append(order, principal)
		}
		return t
	}
	for i, m := range res.Memories {
		t := of(m.Principal)
		switch {
		case res.Replayed[i]:
			t.replayed = append(t.replayed, m.ID)
		case res.Deduplicated[i]:
			t.folded = append(t.folded, m.ID)
		case m.Status == memgate.StatusPending:
			t.pending = append(t.pending, m.ID)
			t.stored = append(t.stored, m.ID)
		default:
			t.stored = append(t.stored, m.ID)
		}
	}
	for _, r := range res.Evicted {
		t := of(r.Principal)
		t.evicted = append(t.evicted, r.ID)
	}
	first := ms[0]
	var evs []store.AuditEvent
	for _, principal := range order {
		t := byPrincipal[principal]
		if len(t.stored)+len(t.folded)+len(t.replayed) > 0 {
			evs = append(evs, store.AuditEvent{
				Tenant: first.Tenant, Principal: principal, Agent: agentOf(ms, principal), Action: ActionRemember,
				MemoryIDs: append(append(append([]string(nil), t.stored...), t.folded...), t.replayed...),
				Counts: map[string]int64{"stored": int64(len(t.stored)), "deduplicated": int64(len(t.folded)), "pending": int64(len(t.pending)),
					"replayed": int64(len(t.replayed)), "evicted": int64(len(t.evicted))},
			})
		}
		if len(t.evicted) > 0 {
			evs = append(evs, store.AuditEvent{Tenant: first.Tenant, Principal: principal, Action: ActionEvict, MemoryIDs: t.evicted, Reason: "retention_cap"})
		}
	}
	return evs
}

// supersedeEvents are the audit events of the memories a write's keyed
// memories superseded (each took its key from the old one).
func supersedeEvents(res *store.WriteResult) []store.AuditEvent {
	var evs []store.AuditEvent
	for i, m := range res.Memories {
		if old := res.Superseded[i]; old != "" && !res.Replayed[i] {
			evs = append(evs, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: m.Agent, Action: ActionSupersede, MemoryIDs: []string{old, m.ID}})
		}
	}
	return evs
}

// write stores memories the write gate has passed, in one store
// transaction (store.Store.Remember: dedup, keys, retention caps): it
// embeds the ones that do not fold into a memory already there, stores
// them all or none, and brings the index up to date (a memory not
// active, one a keyed memory superseded, and every memory evicted leave
// it). The supersessions are audited, and so are events(res) when events
// is not nil: in the write's own transaction where the store can
// (store.AuditedRememberer: the write and its events commit together, or
// neither does, in one commit), else after it, through the group commit
// (the write has committed then: it answers once its events are committed
// too, and a failed append is logged, never undoing the write).
func (e *Engine) write(ctx context.Context, ms []*memgate.Memory, keys []store.IdempotencyKey, events func(*store.WriteResult) []store.AuditEvent) (*store.WriteResult, error) {
	// Duplicates are folded by the store; finding them first spares the
	// embedder work it would throw away.
	dups, err := e.store.FindDuplicates(ctx, ms)
	if err != nil {
		return nil, err
	}
	var fresh []*memgate.Memory
	for i, m := range ms {
		if dups[i] == "" {
			fresh = append(fresh, m)
		}
	}
	if err := e.embed(ctx, fresh); err != nil {
		return nil, err
	}
	caps := e.retentionCaps()
	var res *store.WriteResult
	ar, audited := e.store.(store.AuditedRememberer)
	grouped := false
	if audited = audited && events != nil; audited && len(ms) == 1 {
		// One memory: with the concurrent ones, in one transaction.
		res, grouped, err = e.groupWrite(ctx, ar, ms[0], store.IdempotencyKeyAt(keys, 0), events)
		if err != nil {
			return nil, err
		}
	}
	switch {
	case grouped:
	case audited:
		actor, at := actorOf(ctx), e.now()
		res, err = ar.RememberAudited(ctx, ms, caps, func(r *store.WriteResult) []store.AuditEvent {
			evs := append(events(r), supersedeEvents(r)...)
			for i := range evs {
				evs[i].Actor, evs[i].At = actor, at
			}
			return evs
		}, keys...)
	default:
		res, err = e.store.Remember(ctx, ms, caps, keys...)
	}
	if err != nil {
		return nil, err
	}
	if audited {
		e.undrained.Add(1) // the events went to the store's inbox, if it has one
	}
	if err := e.embedMissed(ctx, res, dups); err != nil {
		return nil, err
	}
	for i, m := range res.Memories {
		if res.Replayed[i] {
			continue // stored, indexed and audited by the first request
		}
		if !res.Deduplicated[i] {
			e.indexed(m)
		}
		if old := res.Superseded[i]; old != "" {
			// It took its key from old, which recall no longer returns.
			e.rec.idx.Remove(m.Tenant, m.Principal, old)
		}
	}
	if !audited {
		evs := supersedeEvents(res)
		if events != nil {
			evs = append(evs, events(res)...)
		}
		if len(evs) > 0 {
			e.audit(ctx, evs...)
		}
	}
	for _, r := range res.Evicted {
		e.rec.idx.Remove(r.Tenant, r.Principal, r.ID)
	}
	return res, nil
}

// retentionCaps are the policy's retention caps, by kind (the kinds it
// caps).
func (e *Engine) retentionCaps() map[memgate.Kind]int {
	caps := map[memgate.Kind]int{}
	for _, k := range memgate.Kinds {
		if c := e.cfg.Policy.RetentionCap(k); c > 0 {
			caps[k] = c
		}
	}
	return caps
}

// agentOf is the agent a batch's audit event for principal names: the
// agent of its memories when they share one, else "" (several agents).
func agentOf(ms []*memgate.Memory, principal string) string {
	agent, seen := "", false
	for _, m := range ms {
		if m.Principal != principal {
			continue
		}
		if seen && m.Agent != agent {
			return ""
		}
		agent, seen = m.Agent, true
	}
	return agent
}

// idempotencyKeys are the store's keys for rs: nil when no request has
// one, else one per request (empty for a request without).
func idempotencyKeys(rs []RememberRequest, batch bool) ([]store.IdempotencyKey, error) {
	var keys []store.IdempotencyKey
	for i, r := range rs {
		if r.IdempotencyKey == "" {
			continue
		}
		if keys == nil {
			keys = make([]store.IdempotencyKey, len(rs))
		}
		if err := memgate.CheckIdempotencyKey("idempotency_key", r.IdempotencyKey); err != nil {
			if batch {
				err = itemError(i, err)
			}
			return nil, err
		}
		keys[i] = store.IdempotencyKey{Key: r.IdempotencyKey, RequestSHA256: requestSHA256(r)}
	}
	return keys, nil
}

// embedMissed repairs a race: a memory FindDuplicates reported as a
// duplicate (so it was not embedded) whose original was revoked or expired
// before Remember's transaction was stored anew, without a vector. It is
// embedded now and its vector written with compare-and-set on version 1.
func (e *Engine) embedMissed(ctx context.Context, res *store.WriteResult, dups []string) error {
	if e.cfg.Embedder == nil {
		return nil
	}
	for i, m := range res.Memories {
		if dups[i] == "" || res.Deduplicated[i] || res.Replayed[i] || m.Embedding != nil {
			continue
		}
		if err := e.embed(ctx, []*memgate.Memory{m}); err != nil {
			return err
		}
		u, err := e.store.Update(ctx, m.Scope(), m, m.Version)
		if err != nil {
			return fmt.Errorf("store the vector of %s: %w", m.ID, err)
		}
		res.Memories[i] = u
	}
	return nil
}

// gate applies the policy to a validated memory: a reject is returned as
// the policy's error (which never quotes the content), a pending decision
// holds the memory with its reason, flags are kept, the default TTL of the
// kind applies, and the dedup signature is set.
func (e *Engine) gate(ctx context.Context, m *memgate.Memory, r RememberRequest, now time.Time) error {
	d := e.cfg.Policy.Decide(m)
	if d.Action == policy.ActionReject {
		e.log.WarnContext(ctx, "remember refused", "tenant", m.Tenant, "principal", m.Principal, "source", m.Source, "kind", m.Kind, "reason", d.Reason)
		e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: m.Agent, Action: ActionRemember, Reason: d.Reason, Counts: map[string]int64{"refused": 1}})
		return d.Err
	}
	e.apply(m, d, r, now)
	return nil
}

// apply is the rest of the write gate, once the policy has allowed m (d,
// not a reject): a pending decision holds the memory with its reason,
// flags are kept, the default TTL of the kind applies, and the dedup
// signature is set.
func (e *Engine) apply(m *memgate.Memory, d policy.Decision, r RememberRequest, now time.Time) {
	if d.Status == memgate.StatusPending {
		m.Status, m.StatusReason = memgate.StatusPending, d.Reason
	}
	m.Flags = d.Flags
	if r.TTL == 0 && m.ExpiresAt == nil {
		if ttl := e.cfg.Policy.DefaultTTL(m.Kind); ttl > 0 {
			t := now.Add(ttl)
			m.ExpiresAt = &t
		}
	}
	m.DedupKey = e.dedupKey(m)
	// A writer that may not read restricted memories must not replace
	// one through its key, nor learn which it is (store.ErrKeyHeld).
	m.KeyHidesRestricted = r.HideRestricted
	if r.HideRestricted && m.Sensitivity == memgate.SensitivityRestricted {
		// A writer that may not read restricted memories (an agent key)
		// must not learn that one exists by folding into it: its
		// restricted memory is stored as a new one, never deduplicated.
		m.DedupKey = ""
	}
}

// dedupKey is the signature duplicates share: the normalized content and
// the sensitivity (a restricted memory never folds into a standard one, or
// the restriction would be lost). Empty when dedup is off.
func (e *Engine) dedupKey(m *memgate.Memory) string {
	if !e.cfg.Policy.Dedup() {
		return ""
	}
	return policy.Signature(m.Content) + ":" + string(m.Sensitivity)
}

// prepare validates a request and turns it into the memory to store. When
// restore is set (import), the caller may carry id, status, times and
// version from an export; otherwise they are assigned here.
func (e *Engine) prepare(r RememberRequest, now time.Time, restore bool) (*memgate.Memory, error) {
	m := r.Memory.Clone()
	if !restore {
		if m.ID != "" {
			return nil, memgate.FieldError("id", "is assigned by the server")
		}
		if m.Status != "" && m.Status != memgate.StatusActive {
			return nil, memgate.FieldError("status", "is assigned by the server")
		}
		if m.Supersedes != "" || m.SupersededBy != "" {
			return nil, memgate.FieldError("supersedes", "is set by supersede, not remember")
		}
		if m.CreatedBy != "" || m.UpdatedBy != "" {
			return nil, memgate.FieldError("created_by", "is assigned by the server: the key that writes")
		}
		if m.ImportedStatus != "" || m.ImportedCreatedBy != "" || m.ImportedUpdatedBy != "" {
			return nil, memgate.FieldError("imported_status", "is set by import, from its file")
		}
		m.Status, m.StatusReason, m.Version = memgate.StatusActive, "", 1
		m.CreatedAt, m.UpdatedAt = now, now
	}
	if m.ID == "" {
		m.ID = memgate.NewID(now)
	}
	if m.Status == "" {
		m.Status = memgate.StatusActive
	}
	if m.Version == 0 {
		m.Version = 1
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if m.Sensitivity == "" {
		m.Sensitivity = memgate.SensitivityStandard
	}
	if r.TTL < 0 {
		return nil, memgate.FieldError("ttl", "must be positive")
	}
	if r.TTL > 0 {
		if m.ExpiresAt != nil {
			return nil, memgate.FieldError("ttl", "cannot be combined with expires_at")
		}
		t := now.Add(r.TTL)
		m.ExpiresAt = &t
	}
	if m.ExpiresAt != nil && !restore && !m.ExpiresAt.After(now) {
		return nil, memgate.FieldError("expires_at", "must be in the future")
	}
	if m.Embedding != nil {
		return nil, memgate.FieldError("embedding", "is computed by the server")
	}
	normalizeTimes(m)
	m.ContentSHA256 = ""
	if err := m.Validate(e.cfg.Limits); err != nil {
		return nil, err
	}
	m.ContentSHA256 = memgate.ContentHash(m.Content)
	return m, nil
}

// normalizeTimes stores every time in UTC at microsecond precision.
func normalizeTimes(m *memgate.Memory) {
	m.CreatedAt = memgate.Now(m.CreatedAt)
	m.UpdatedAt = memgate.Now(m.UpdatedAt)
	for _, p := range []**time.Time{&m.ExpiresAt, &m.ValidFrom, &m.ValidUntil} {
		if *p != nil {
			t := memgate.Now(**p)
			*p = &t
		}
	}
}

// embed fills in each memory's embedding from the embedder, exactly as the
// embedder reported it. Without an embedder, memories keep no embedding.
func (e *Engine) embed(ctx context.Context, ms []*memgate.Memory) error {
	if e.cfg.Embedder == nil {
		return nil
	}
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = m.Content
	}
	embs, err := e.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed %d texts: %w", len(texts), err)
	}
	if len(embs) != len(ms) {
		return fmt.Errorf("embedder returned %d embeddings for %d texts", len(embs), len(ms))
	}
	for i := range embs {
		emb := embs[i]
		if err := emb.Check(); err != nil {
			return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable vector: " + memgate.ErrorMessage(err)}
		}
		ms[i].Embedding = &emb
		e.rec.observe(&emb)
	}
	return nil
}

// itemError prefixes an item's field with its batch index.
func itemError(i int, err error) error {
	me, ok := err.(*memgate.Error)
	if !ok {
		return err
	}
	c := *me
	if c.Field != "" {
		c.Field = fmt.Sprintf("memories[%d].%s", i, c.Field)
	} else {
		c.Field = fmt.Sprintf("memories[%d]", i)
	}
	return &c
}

// Patch is memgate.Patch (the callers' contract).
type Patch = memgate.Patch

// Update applies p to the memory with id if its version is still
// expectedVersion (compare-and-set): a stale version is a conflict, so two
// writers cannot silently overwrite each other. Changed content is re-hashed
// and re-embedded.
func (e *Engine) Update(ctx context.Context, s memgate.Scope, id string, expectedVersion int64, p Patch) (*memgate.Memory, error) {
	return e.UpdateChecked(ctx, s, id, expectedVersion, p, nil)
}

// UpdateChecked is Update with check, called on the memory as Update reads
// it, before its version is compared: an error from check is the
// update's, and nothing is written. The guard decides what a key may
// change with it, on the one read Update makes (the version
// compare-and-set then holds the decision for what is written).
func (e *Engine) UpdateChecked(ctx context.Context, s memgate.Scope, id string, expectedVersion int64, p Patch, check func(*memgate.Memory) error) (*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := memgate.CheckIdent("id", id); err != nil {
		return nil, memgate.ErrNotFound()
	}
	if expectedVersion <= 0 {
		return nil, memgate.FieldError("version", "is required: the version the update is based on")
	}
	m, err := e.store.Get(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(m); err != nil {
			return nil, err
		}
	}
	if m.Version != expectedVersion {
		return nil, memgate.Errorf(memgate.ECONFLICT, "memory is at version %d, not %d", m.Version, expectedVersion)
	}
	now := e.now()
	contentChanged := false
	if p.Content != nil && *p.Content != m.Content {
		m.Content, contentChanged = *p.Content, true
	}
	if p.Reason != nil {
		m.Reason = *p.Reason
	}
	if p.ReplaceMetadata {
		m.Metadata = p.Metadata
	}
	if p.Kind != nil {
		k, err := memgate.ParseKind(string(*p.Kind))
		if err != nil {
			return nil, err
		}
		m.Kind = k
	}
	if p.Sensitivity != nil {
		sv, err := memgate.ParseSensitivity(string(*p.Sensitivity))
		if err != nil {
			return nil, err
		}
		m.Sensitivity = sv
	}
	switch {
	case p.ClearExpiresAt && (p.ExpiresAt != nil || p.TTL != 0):
		return nil, memgate.FieldError("expires_at", "cannot be cleared and set at once")
	case p.ExpiresAt != nil && p.TTL != 0:
		return nil, memgate.FieldError("ttl", "cannot be combined with expires_at")
	case p.TTL < 0:
		return nil, memgate.FieldError("ttl", "must be positive")
	case p.ClearExpiresAt:
		m.ExpiresAt = nil
	case p.TTL > 0:
		t := now.Add(p.TTL)
		m.ExpiresAt = &t
	case p.ExpiresAt != nil:
		if !p.ExpiresAt.After(now) {
			return nil, memgate.FieldError("expires_at", "must be in the future")
		}
		t := *p.ExpiresAt
		m.ExpiresAt = &t
	}
	if p.ValidFrom != nil {
		t := *p.ValidFrom
		m.ValidFrom = &t
	}
	if p.ValidUntil != nil {
		t := *p.ValidUntil
		m.ValidUntil = &t
	}
	m.UpdatedAt = now
	normalizeTimes(m)
	emb := m.Embedding
	m.Embedding, m.ContentSHA256 = nil, ""
	if err := m.Validate(e.cfg.Limits); err != nil {
		return nil, err
	}
	m.ContentSHA256 = memgate.ContentHash(m.Content)
	m.DedupKey = e.dedupKey(m)
	m.Embedding = emb
	// The write gate judges the memory as it would be, as it judges a
	// remember: an update carries past it nothing a remember could not.
	// A secret is refused; content the gate holds for approval makes the
	// memory pending (out of recall until a person approves this version);
	// the flags are the new content's. An update never activates: a
	// pending memory stays pending whatever its new content.
	d := e.cfg.Policy.Decide(m)
	if d.Action == policy.ActionReject {
		e.audit(ctx, store.AuditEvent{Tenant: m.Tenant, Principal: m.Principal, Agent: s.Agent, Action: ActionUpdate, MemoryIDs: []string{m.ID}, Reason: d.Reason, Counts: map[string]int64{"refused": 1}})
		return nil, d.Err
	}
	if d.Status == memgate.StatusPending {
		m.Status, m.StatusReason = memgate.StatusPending, d.Reason
	}
	m.Flags = d.Flags
	m.UpdatedBy = writerOf(ctx)
	if contentChanged {
		m.Embedding = nil
		if err := e.embed(ctx, []*memgate.Memory{m}); err != nil {
			return nil, err
		}
	}
	// The caller could read the memory at expectedVersion (the Get above),
	// and the compare-and-set keeps the write to that row: a writer that
	// marks its memory restricted gets it back, though it cannot read it
	// again.
	ws := s
	ws.HideRestricted = false
	out, err := e.store.Update(ctx, ws, m, expectedVersion)
	if err != nil {
		return nil, err
	}
	e.indexed(out)
	e.audit(ctx, store.AuditEvent{Tenant: out.Tenant, Principal: out.Principal, Agent: s.Agent, Action: ActionUpdate, MemoryIDs: []string{out.ID},
		Counts: map[string]int64{"version": out.Version}, ContentSHA256: out.ContentSHA256, Reason: heldReason(out, m)})
	e.log.InfoContext(ctx, "update", "tenant", s.Tenant, "id", id, "version", out.Version, "status", out.Status)
	e.derive(out, now)
	return out, nil
}

// heldReason is the audit reason of an update the write gate held for
// approval ("" otherwise): the gate's code, never content.
func heldReason(out, m *memgate.Memory) string {
	if out.Status == memgate.StatusPending && m.StatusReason != "" {
		return m.StatusReason
	}
	return ""
}

// Supersede stores r as the new version of the memory oldID, in the old
// memory's tenant, principal, agent and conversation unless r names its own
// agent or conversation, and marks the old one superseded, atomically.
// r.IdempotencyKey makes a retry safe as in Remember (see RememberRequest);
// a retry returns the memory the first request stored as next.
func (e *Engine) Supersede(ctx context.Context, s memgate.Scope, oldID string, r RememberRequest) (old, next *memgate.Memory, err error) {
	old, next, _, err = e.supersede(ctx, s, oldID, r)
	return old, next, err
}

// supersede is Supersede, reporting whether an earlier request with the
// same idempotency key stored next (this one then stored nothing).
func (e *Engine) supersede(ctx context.Context, s memgate.Scope, oldID string, r RememberRequest) (old, next *memgate.Memory, replayed bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, false, err
	}
	if err := memgate.CheckIdent("id", oldID); err != nil {
		return nil, nil, false, memgate.ErrNotFound()
	}
	r.Supersedes = oldID
	keys, err := idempotencyKeys([]RememberRequest{r}, false)
	if err != nil {
		return nil, nil, false, err
	}
	prev, err := e.store.Get(ctx, s, oldID)
	if err != nil {
		return nil, nil, false, err
	}
	if (r.Memory.Tenant != "" && r.Memory.Tenant != prev.Tenant) || (r.Memory.Principal != "" && r.Memory.Principal != prev.Principal) {
		return nil, nil, false, memgate.FieldError("principal", "a memory can only be superseded within its own tenant and principal")
	}
	r.Memory.Tenant, r.Memory.Principal = prev.Tenant, prev.Principal
	if r.Memory.Agent == "" {
		r.Memory.Agent = prev.Agent
	}
	if r.Memory.Conversation == "" {
		r.Memory.Conversation = prev.Conversation
	}
	if r.Memory.Kind == "" {
		r.Memory.Kind = prev.Kind
	}
	if r.Memory.Key == "" {
		r.Memory.Key = prev.Key // a new version keeps its memory's key
	}
	now := e.now()
	n, err := e.prepare(r, now, false)
	if err == nil {
		n.CreatedBy, n.UpdatedBy = writerOf(ctx), writerOf(ctx)
		err = e.gate(ctx, n, r, now)
	}
	if err != nil {
		return nil, nil, false, err
	}
	if n.Status == memgate.StatusPending && (prev.Status == memgate.StatusActive || keys == nil) {
		// A memory held for approval must not retire an approved one now:
		// it is stored pending with the link, and the supersession happens
		// when a person approves it (Approve), keeping the old memory in
		// the chain. Until then the old one stays active and recalled. A
		// retry with the key replays the pending memory (Remember).
		if prev.Status != memgate.StatusActive {
			return nil, nil, false, memgate.Errorf(memgate.ECONFLICT, "memory is %s; only an active memory can be superseded", prev.Status)
		}
		// The caller's narrowing travels with the request (a writer that
		// may not read restricted memories must not fold into one).
		held := RememberRequest{Memory: r.Memory, TTL: r.TTL, Supersedes: prev.ID, ExactAgent: r.ExactAgent, HideRestricted: r.HideRestricted}
		out, err := e.remember(ctx, []RememberRequest{held}, keys, false)
		if err != nil {
			return nil, nil, false, err
		}
		return prev, out[0].Memory, out[0].Replayed, nil
	}
	// The new memory supersedes at once; or the gate holds it and it
	// comes with a key for an old memory no longer active, maybe a retry
	// whose pending memory was approved since. The old memory's status is
	// not checked here: the store looks the key up first, so a retry gets
	// its replay although the old memory is superseded by now, and a new
	// request the conflict of a memory no longer active (the store never
	// lets a pending memory supersede).
	n.Supersedes = prev.ID
	if err := e.embed(ctx, []*memgate.Memory{n}); err != nil {
		return nil, nil, false, err
	}
	res, err := e.store.Supersede(ctx, s, oldID, n, now, keys...)
	if err != nil {
		return nil, nil, false, err
	}
	next = res.Next
	e.derive(next, now)
	if res.Replayed {
		// Superseded, indexed and audited by the first request: this one
		// is recorded as a replayed remember, as Remember records one.
		e.audit(ctx, store.AuditEvent{
			Tenant: next.Tenant, Principal: next.Principal, Agent: next.Agent, Action: ActionRemember, MemoryIDs: []string{next.ID},
			Counts: map[string]int64{"stored": 0, "deduplicated": 0, "pending": 0, "replayed": 1, "evicted": 0},
		})
		e.log.InfoContext(ctx, "supersede", "tenant", s.Tenant, "old", oldID, "new", next.ID, "replayed", true)
		return prev, next, true, nil
	}
	old = res.Old
	e.indexed(old, next)
	e.audit(ctx, store.AuditEvent{Tenant: next.Tenant, Principal: next.Principal, Agent: s.Agent, Action: ActionSupersede, MemoryIDs: []string{oldID, next.ID}})
	e.log.InfoContext(ctx, "supersede", "tenant", s.Tenant, "old", oldID, "new", next.ID)
	e.derive(old, now)
	return old, next, false, nil
}

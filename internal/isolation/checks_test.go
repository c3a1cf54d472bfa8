package isolation

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// The operations: each makes its request, calls the driver, judges the
// answer, and returns the effect its changes to the store must fit.

func (r *run) unexpected(what string, err error) {
	r.t.Helper()
	r.fail("%s in binding failed: %v", what, err)
}

// Idempotency keys come from a small pool shared by every caller, so the
// same key is used in many partitions: its records are kept per partition
// (tenant, principal, agent, conversation), and one partition's record
// must never replay, or conflict with, a remember in another. A record is
// filed in the partition of the memory the request stores: the caller's
// scope for a plain remember; for a supersession, the scope completed by
// the old memory's agent and conversation where the scope names none (the
// engine stores the new memory there), which may be a partition other
// than the caller's. Plain remembers and supersessions share the records:
// a key recorded by either in a partition answers both there.
var idemKeys = []string{"retry-1", "retry-2", "retry-3"}

type idemKey struct {
	o   owner
	key string
}

// idemRecord is the first remember with a key in a partition: the request
// (its fields and the scope it was sent in, which the request hash covers
// too, so the same fields sent in another scope are another request), who
// sent it and with which narrowing fields (for a late retry), and the
// memory it answered.
type idemRecord struct {
	in   rememberIn
	from owner
	at   owner // the partition holding the record: the memory's
	c    *caller
	q    scopeReq
	id   string
	// pending: the memory was held for approval when stored.
	pending bool
	seq     int // creation order, to pick among records the same way on a replay of the run
}

// keyConflict reports whether err is the conflict of an idempotency key
// recorded for another request or for a memory since deleted: it names the
// key as the surface calls it (idempotency_key, or the Idempotency-Key
// header).
func keyConflict(err error) bool {
	e := apiErr(err)
	return e != nil && e.Code == memgate.ECONFLICT && strings.EqualFold(strings.ReplaceAll(e.Field, "-", "_"), "idempotency_key")
}

// recorded picks one of the idempotency records that keep accepts (nil
// when none): a quarter of the time, if any, one whose memory, or whose
// old memory, has since been deleted (its retry is a conflict, or
// not_found); half the rest one a supersession wrote, if any.
func (r *run) recorded(keep func(*idemRecord) bool) *idemRecord {
	var all, stale, supers []*idemRecord
	gone := func(rec *idemRecord) bool {
		for _, id := range []string{rec.id, rec.in.Supersedes} {
			if e := r.w.reg.get(rec.at.tenant, id); id != "" && (e == nil || !e.alive()) {
				return true
			}
		}
		return false
	}
	for _, rec := range r.idem {
		if !keep(rec) {
			continue
		}
		all = append(all, rec)
		if gone(rec) {
			stale = append(stale, rec)
		}
		if rec.in.Supersedes != "" {
			supers = append(supers, rec)
		}
	}
	if len(all) == 0 {
		return nil
	}
	bySeq := func(a, b *idemRecord) int { return cmp.Compare(a.seq, b.seq) }
	slices.SortFunc(all, bySeq)
	slices.SortFunc(stale, bySeq)
	slices.SortFunc(supers, bySeq)
	switch x := r.rng.IntN(8); {
	case x < 2 && len(stale) > 0:
		return pick(r, stale)
	case x < 5 && len(supers) > 0:
		return pick(r, supers)
	}
	return pick(r, all)
}

// destOf is the partition a remember from scope s superseding old (if
// set) stores its memory in: the scope's, completed by the old memory's
// agent and conversation where the scope names none (when s reaches old).
func (r *run) destOf(s memgate.Scope, old string) owner {
	dest := owner{s.Tenant, s.Principal, s.Agent, s.Conversation}
	if e := r.reachable(s, old); e != nil {
		dest.agent = cmp.Or(dest.agent, e.owner.agent)
		dest.conversation = cmp.Or(dest.conversation, e.owner.conversation)
	}
	return dest
}

// pickKey picks the idempotency key of a new request from scope s
// (superseding old, if set): a third of the time, if there is one, a key
// already in use where the request lands (a record in the partition its
// memory would be stored in, or one written from s), as a client that
// reuses a key would send; otherwise any key of the pool.
func (r *run) pickKey(s memgate.Scope, old string) string {
	from := owner{s.Tenant, s.Principal, s.Agent, s.Conversation}
	dest := r.destOf(s, old)
	if r.rng.IntN(3) == 0 {
		var used []string
		for _, k := range idemKeys {
			for ik, rec := range r.idem {
				if ik.key == k && (ik.o == dest || rec.from == from) {
					used = append(used, k)
					break
				}
			}
		}
		if len(used) > 0 {
			return pick(r, used)
		}
	}
	return pick(r, idemKeys)
}

func (r *run) remember(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	in := rememberIn{Kind: pick(r, rememberKinds), Source: r.source(c), Content: r.content(s)}
	if r.surf.restricted && r.rng.IntN(8) == 0 {
		in.Sensitivity = memgate.SensitivityRestricted
	}
	from := owner{s.Tenant, s.Principal, s.Agent, s.Conversation}
	if code == "" && r.surf.restricted && c.key.Role == memgate.RoleAgent && r.rng.IntN(10) == 0 {
		// An agent key remembering, restricted, what a restricted memory
		// it may not read says, where that memory is: were the two folded,
		// the answer would tell the agent the memory exists.
		if es := r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return restricted(e.mem) && e.owner == from }); len(es) > 0 {
			e := pick(r, es)
			in.Kind, in.Content, in.Sensitivity = e.mem.Kind, e.mem.Content, memgate.SensitivityRestricted
			r.desc += " (the content of the restricted " + e.id + ")"
			r.count("remember.restricted.copy")
		}
	}
	// how names the request's origin when it repeats a recorded one: a
	// late retry (the same request, sent again by its caller with its
	// narrowing fields); the same fields sent by the same caller with
	// another supersedes (added, dropped or changed), or from another
	// scope of the principal, maybe the very partition the record is in:
	// other requests, which the hash tells apart.
	how := ""
	if r.surf.idempotency && r.rng.IntN(10) < 4 {
		var prior *idemRecord
		switch x := r.rng.IntN(6); {
		case x < 3 && code == "":
			if prior = r.recorded(func(*idemRecord) bool { return true }); prior != nil {
				how, c, q = "late", prior.c, prior.q
				r.cur = c
				if x == 2 {
					how = "changed"
				}
				if s, code = r.expect(c, opRemember, q); code != "" || prior.from != (owner{s.Tenant, s.Principal, s.Agent, s.Conversation}) {
					r.w.fatalf("the scope %+v (%s) of a request repeated is not the one its record was written from, %+v", s, code, prior.from)
				}
				from = prior.from
				r.desc += fmt.Sprintf(" (instead: by %s with %+v, repeating a recorded request)", c.name, q)
			}
		case x == 3 && code == "" && r.rng.IntN(2) == 0:
			// A supersession whose record is filed outside the scope it
			// was sent from, sent again by its caller naming the record's
			// agent and conversation: it lands on the record, from
			// another scope, which the hash covers.
			if prior = r.recorded(func(rec *idemRecord) bool { return rec.at != rec.from }); prior != nil {
				how, c, q = "moved", prior.c, prior.q
				r.cur = c
				q.Agent, q.Conversation = prior.at.agent, prior.at.conversation
				if s, code = r.expect(c, opRemember, q); code != "" || prior.at != (owner{s.Tenant, s.Principal, s.Agent, s.Conversation}) {
					r.w.fatalf("the scope %+v (%s) of a supersession sent again to its record's partition is not that partition, %+v", s, code, prior.at)
				}
				from = prior.at
				r.desc += fmt.Sprintf(" (instead: by %s with %+v, repeating a supersession recorded from %+v)", c.name, q, prior.from)
			}
		case x == 3:
			prior = r.recorded(func(rec *idemRecord) bool {
				return rec.from.tenant == from.tenant && rec.from.principal == from.principal && rec.from != from
			})
			if prior != nil {
				how = "reused"
				r.desc += fmt.Sprintf(" repeating a request sent in %+v", prior.from)
			}
		}
		switch {
		case how == "changed" && prior.in.Key != "":
			// Another key is another request: the retry hash covers it.
			in = prior.in
			in.Key = pick(r, others(append([]string{""}, memoryKeys...), in.Key))
			r.desc += fmt.Sprintf(" with key %q instead of %q", in.Key, prior.in.Key)
		case how == "changed":
			in = prior.in
			if in.Supersedes != "" && r.rng.IntN(2) == 0 {
				in.Supersedes = ""
			} else {
				// Preferring a memory at or above the scope: the new
				// memory would land in the scope's partition, where a
				// plain remember's record is.
				in.Supersedes = r.pickTarget(s, 80, func(m *memgate.Memory) bool {
					return m.Status == memgate.StatusActive && m.ID != prior.in.Supersedes &&
						(s.Agent != "" || m.Agent == "") && (s.Conversation != "" || m.Conversation == "")
				})
			}
			r.desc += fmt.Sprintf(" with supersedes %q instead of %q", in.Supersedes, prior.in.Supersedes)
		case prior != nil:
			in = prior.in
		default:
			if r.rng.IntN(3) < 2 {
				// Half the time preferring a memory stored below the scope
				// (in an agent or conversation it leaves open): the new
				// memory, and the key's record, land there.
				prefer := hasStatus(memgate.StatusActive)
				if r.rng.IntN(2) == 0 {
					prefer = func(m *memgate.Memory) bool {
						return m.Status == memgate.StatusActive && (s.Agent == "" && m.Agent != "" || s.Conversation == "" && m.Conversation != "")
					}
				}
				in.Supersedes = r.pickTarget(s, 70, prefer)
			}
			in.IdempotencyKey = r.pickKey(s, in.Supersedes)
		}
		r.desc += " idempotency key " + in.IdempotencyKey
	} else if r.rng.IntN(3) == 0 {
		in.Supersedes = r.pickTarget(s, 35, hasStatus(memgate.StatusActive))
	}
	if in.Supersedes == "" && how == "" {
		switch x := r.rng.IntN(6); {
		case x < 3:
			r.pickMemoryKey(&in, from)
		case x == 3 && in.Sensitivity == "":
			// A duplicate of a live unkeyed memory at the level the write
			// lands at, of whatever source: it may fold only into one of
			// its own.
			if es := r.w.reg.aliveIn(from.tenant, func(e *entry) bool {
				return e.owner == from && e.mem.Key == "" && !restricted(e.mem) && e.mem.Status == memgate.StatusActive
			}); len(es) > 0 {
				e := pick(r, es)
				in.Kind, in.Content = e.mem.Kind, e.mem.Content
				r.desc += " (the kind and content of " + e.id + ")"
				r.count("fold.probe")
			}
		}
	}
	var snap map[ref]string
	if in.Supersedes != "" {
		snap = r.snapshot(s.Tenant, in.Supersedes)
		r.desc += " superseding " + in.Supersedes
	}
	r.desc += fmt.Sprintf(" kind=%s source=%s", in.Kind, in.Source)
	if in.Key != "" {
		r.desc += " key=" + in.Key
	}
	m, replayed, err := r.drv.remember(c, q, in)
	if code != "" {
		r.refused(err, code)
		r.unchanged(snap, ref{})
		return effect{}
	}
	if !claims(c.key, in.Source) {
		// Refused before anything is looked up, whatever the request
		// supersedes or its key's record says; nothing is written.
		r.refusedSource(err, "source", "a remember claiming source "+string(in.Source))
		r.unchanged(snap, ref{})
		r.count("source.refused")
		return effect{}
	}
	keyed, super := in.IdempotencyKey != "", in.Supersedes != ""
	countKeyed := func(name string) {
		if keyed && super {
			r.count("supersede.key." + name)
		}
		if keyed && how != "" {
			r.count("key." + how + "." + name)
		}
	}
	countKeyed("attempt")
	// dest is the partition of the memory the request stores, where its
	// key's record is filed.
	dest := from
	var old *entry
	if super {
		if old = r.reachable(s, in.Supersedes); old == nil {
			// The old memory is read first: not_found whatever the key's
			// record says.
			r.crossKind("remember", s, in.Supersedes)
			r.hidden("remember", s, in.Supersedes)
			r.notFoundLikeMissing(err, func(g string) error {
				in2 := in
				in2.Supersedes = g
				_, _, err := r.drv.remember(c, q, in2)
				return err
			})
			r.unchanged(snap, ref{})
			countKeyed("notfound")
			return effect{}
		}
		dest = r.destOf(s, in.Supersedes)
		r.desc += fmt.Sprintf(" (in scope, %s from %s; new memory in %+v)", old.mem.Status, old.mem.Source, dest)
		if !claims(c.key, old.mem.Source) {
			// Superseding retires what the old memory says: the key must
			// be able to claim its source too, whatever the key's record.
			r.refusedSource(err, "supersedes", "a supersession of a memory from source "+string(old.mem.Source))
			r.unchanged(snap, ref{})
			r.count("supersedes.source.refused")
			countKeyed("source.refused")
			return effect{}
		}
	}
	ik := idemKey{dest, in.IdempotencyKey}
	if rec := r.idem[ik]; keyed && rec != nil {
		if e := r.w.reg.get(s.Tenant, rec.id); e == nil || !e.alive() {
			// Delete, forget, the sweep and eviction drop the records of
			// the memories they erase (issue 26: a record's request hash
			// would confirm a guessed content): the key is free again.
			delete(r.idem, ik)
		}
	}
	if rec := r.idem[ik]; keyed && rec != nil {
		// dest holds a record of the key: the same request (fields and
		// scope) is answered with the memory it names, if that still
		// exists, whatever became of the old memory, and changes nothing;
		// anything else is a conflict naming the key.
		r.unchanged(snap, ref{})
		e := r.w.reg.get(s.Tenant, rec.id)
		if in == rec.in && from == rec.from && e != nil && e.alive() {
			switch {
			case err != nil:
				r.fail("a retry with the same idempotency key and request (recorded in %+v) failed: %v", dest, err)
			case m.ID != rec.id:
				r.fail("a retry with the same idempotency key answered %s; the first remember stored %s (record in %+v)", m.ID, rec.id, dest)
			case !replayed:
				r.fail("a retry with the same idempotency key answered %s without marking it replayed", m.ID)
			case m.Status != e.mem.Status:
				r.fail("a retry with the same idempotency key answered %s as %s; it is %s now", m.ID, m.Status, e.mem.Status)
			default:
				r.count("remember.replayed")
				countKeyed("replayed")
				if rec.pending && m.Status != memgate.StatusPending {
					countKeyed("replayed." + string(m.Status)) // approved (or revoked) since
				}
				r.notRestrictedFold(c, s, m)
			}
			return effect{post: func() {
				if err == nil {
					r.shown("remember (replayed)", m, writable(s))
				}
			}}
		}
		if !keyConflict(err) {
			r.fail("a remember reusing idempotency key %s, for which %+v holds an idempotency record of another request (sent in %+v, storing %s), was answered %v; want a conflict naming the key",
				ik.key, dest, rec.from, rec.id, orOK(err))
		}
		r.count("remember.keyconflict")
		countKeyed("keyconflict")
		return effect{}
	}
	if super && old.mem.Status != memgate.StatusActive {
		r.unchanged(snap, ref{})
		if codeOf(err) != memgate.ECONFLICT || keyConflict(err) {
			r.fail("a supersession of %s, which is %s, was answered %v; want a conflict (only an active memory is superseded) not naming a key", in.Supersedes, old.mem.Status, orOK(err))
		}
		r.count("remember.conflict")
		countKeyed("conflict")
		return effect{}
	}
	if super && old.mem.Key != "" && (in.Source != old.mem.Source || dest != old.owner) {
		if h := r.keyHolder(dest, old.mem.Key, in.Source); h != nil {
			// A new version keeps its memory's key, in its own key space
			// (its source, at its level), where a third memory has it:
			// not the memory the caller named, so it is neither replaced
			// nor named, whether the version is active or held.
			r.unchanged(snap, ref{})
			if e := apiErr(err); e == nil || e.Code != memgate.ECONFLICT || e.Field != "key" {
				r.fail("a new version of %s (key %q) into a key space where %s has the key was answered %v; want a conflict naming key", in.Supersedes, old.mem.Key, h.id, orOK(err))
			} else if strings.Contains(e.Message, h.id) {
				r.fail("the conflict of a new version into a held key space names the holder %s: %v", h.id, e)
			}
			r.count("supersede.key.held")
			countKeyed("keyheld")
			return effect{}
		}
	}
	if h := r.keyHolder(dest, in.Key, in.Source); !super && h != nil && s.HideRestricted && restricted(h.mem) {
		// The key's holder in the write's key space is restricted, and
		// the key may not read it: neither replaced nor named. The write
		// is a conflict naming the key and nothing else (or, held, a fold
		// into the key's own pending duplicate).
		r.count("key.hidden.holder")
		if e := apiErr(err); e != nil && e.Code == memgate.ECONFLICT && e.Field == "key" {
			if strings.Contains(e.Message, h.id) {
				r.fail("the conflict of a keyed write names the restricted holder %s: %v", h.id, e)
			}
			r.count("key.hidden.refused")
			return effect{}
		}
	}
	r.unchanged(snap, ref{s.Tenant, in.Supersedes})
	switch {
	case keyConflict(err):
		r.fail("%+v (the new memory's partition) holds no idempotency record of key %s, yet the remember was answered %v", dest, ik.key, err)
		return effect{}
	case err != nil:
		r.unexpected("remember", err)
		return effect{}
	case replayed:
		r.fail("remember answered %s marked replayed, but no earlier request with key %q stored a memory in %+v", m.ID, ik.key, dest)
	}
	r.count("remember.ok")
	r.notRestrictedFold(c, s, m)
	r.replacesOnlyItsOwn(c, s, in, m, super)
	switch {
	case c.key.Role == memgate.RoleUser:
		r.count("user.remember.ok")
	case c.key.Role == memgate.RoleAgent && in.Source == memgate.SourceUser:
		r.count("source.granted") // claimed by the key's grant only
	}
	if super && old.mem.Source == memgate.SourceUser && c.key.Role == memgate.RoleAgent {
		r.count("supersedes.source.granted")
	}
	if keyed {
		// The key is new in dest, whatever other partitions hold: it was
		// stored, and a retry now replays it.
		r.idemSeq++
		r.idem[ik] = &idemRecord{in: in, from: from, at: dest, c: c, q: q, id: m.ID, pending: m.Status == memgate.StatusPending, seq: r.idemSeq}
		countKeyed("stored")
		if m.Status == memgate.StatusPending {
			countKeyed("pending") // the link waits for approval; retries replay the pending memory
		}
		if super && dest != from {
			r.count("supersede.key.elsewhere") // the record is filed outside the caller's scope partition
		}
		if r.rng.IntN(10) < 6 || super && r.rng.IntN(2) == 0 {
			// An immediate retry; a supersession's more often, its replay
			// being a control.
			before := r.w.heads()
			switch m2, replayed, err := r.drv.remember(c, q, in); {
			case err != nil:
				r.fail("an immediate retry with the same idempotency key and request failed: %v", err)
			case m2.ID != m.ID:
				r.fail("an immediate retry with the same idempotency key answered %s; the first remember stored %s", m2.ID, m.ID)
			case !replayed:
				r.fail("an immediate retry with the same idempotency key answered %s without marking it replayed", m2.ID)
			default:
				r.count("remember.replayed")
				countKeyed("replayed")
			}
			if after := r.w.heads(); !maps.Equal(before, after) {
				r.fail("an immediate retry with the same idempotency key changed the store: partition heads %v → %v", before, after)
			}
		}
	}
	home := partition{s.Tenant, s.Principal}
	return effect{
		what: fmt.Sprintf("memories of %s visible from %+v", home, s),
		part: func(p partition) bool { return p == home },
		row: func(n *memgate.Memory, isNew bool) string {
			switch {
			case !visible(s, ownerOf(n)):
				return "remember changed a memory outside its scope"
			case isNew && n.ID != m.ID:
				return "remember stored a memory other than the one it answered"
			case isNew && ownerOf(n) != dest:
				return fmt.Sprintf("remember stored its memory outside %+v (the scope's partition, for a supersession completed by the old memory's agent and conversation)", dest)
			case super && n.ID == old.id && n.Status == memgate.StatusSuperseded && n.SupersededBy != m.ID:
				return fmt.Sprintf("the supersession answered %s but marked the old memory superseded by %s", m.ID, n.SupersededBy)
			}
			return ""
		},
		del: func(e *entry) string {
			if e.owner.principal == s.Principal && e.owner.agent == dest.agent && e.mem.Kind == in.Kind {
				return "" // a retention cap evicts from the population written: (tenant, principal, agent, kind)
			}
			return "remember deleted a memory"
		},
		post: func() { r.shown("remember", m, writable(s)) },
	}
}

// writable is s for what a remember answers: the memory the caller wrote,
// which may be restricted whatever the key (it said so itself).
func writable(s memgate.Scope) memgate.Scope {
	s.HideRestricted = false
	return s
}

// notRestrictedFold checks what an agent key's remember answered: never a
// restricted memory that stood before and that the key did not write
// (remember folding the request into it, or replaying it), since the
// answer would tell the key that a memory it may not read exists.
func (r *run) notRestrictedFold(c *caller, s memgate.Scope, m *memgate.Memory) {
	r.t.Helper()
	if c.key.Role != memgate.RoleAgent || m == nil {
		return
	}
	if e := r.w.reg.get(s.Tenant, m.ID); e != nil && e.alive() && restricted(e.mem) {
		r.count("remember.restricted.existing")
		if e.mem.CreatedBy != c.key.ID {
			r.fail("an agent key's remember (%s) answered with the restricted memory %s, which stood before and which it did not write (created by %q): it may not read it", c.name, m.ID, e.mem.CreatedBy)
		}
	}
}

// memoryKeys are the keys remembers name: few, so that writers of every
// source meet on them.
var memoryKeys = []string{"k:plan", "k:seat"}

// pickMemoryKey gives in a key: half the time that of a live keyed memory
// at from (the level the write lands at), of whatever source (and now and
// then its kind and content too, so the write would fold into it were
// sources not apart), else one of memoryKeys.
func (r *run) pickMemoryKey(in *rememberIn, from owner) {
	r.count("key.memory")
	in.Key = pick(r, memoryKeys)
	if r.rng.IntN(2) == 0 {
		return
	}
	es := r.w.reg.aliveIn(from.tenant, func(e *entry) bool { return e.owner == from && e.mem.Key != "" })
	if len(es) == 0 {
		return
	}
	if other := slices.DeleteFunc(slices.Clone(es), func(e *entry) bool { return e.mem.Source == in.Source }); len(other) > 0 && r.rng.IntN(3) < 2 {
		es = other // another writer's key, most often: the case to judge
	}
	e := pick(r, es)
	in.Key = e.mem.Key
	if e.mem.Source != in.Source {
		r.count("key.other.source")
	}
	if r.rng.IntN(2) == 0 {
		in.Kind, in.Content = e.mem.Kind, e.mem.Content
		r.desc += " (the key, kind and content of " + e.id + ")"
	}
}

// keyHolder is the live active memory at level o with key in source src's
// key space, or nil.
func (r *run) keyHolder(o owner, key string, src memgate.Source) *entry {
	if key == "" {
		return nil
	}
	for _, e := range r.w.reg.aliveIn(o.tenant, func(e *entry) bool {
		return e.owner == o && e.mem.Key == key && e.mem.Source == src && e.mem.Status == memgate.StatusActive
	}) {
		return e
	}
	return nil
}

// replacesOnlyItsOwn checks what a remember answered (issue 26): the
// memory a key made it replace, or a duplicate folded into, is one its
// writer could itself have superseded: of the source it wrote (its own key
// and dedup space), which its key may claim, and never a restricted one
// for a key that may not read it.
func (r *run) replacesOnlyItsOwn(c *caller, s memgate.Scope, in rememberIn, m *memgate.Memory, super bool) {
	r.t.Helper()
	if m == nil {
		return
	}
	check := func(what string, e *entry) {
		switch {
		case e.mem.Source != in.Source:
			r.fail("a remember by %s of source %s %s %s, of source %s: a memory of another writer", c.name, in.Source, what, e.id, e.mem.Source)
		case !claims(c.key, e.mem.Source):
			r.fail("a remember by %s %s %s, of source %s, which its key may not claim", c.name, what, e.id, e.mem.Source)
		case s.HideRestricted && restricted(e.mem) && e.mem.CreatedBy != c.key.ID:
			r.fail("a remember by %s %s the restricted %s, which its key may not read", c.name, what, e.id)
		}
	}
	if e := r.w.reg.get(s.Tenant, m.ID); e != nil && e.alive() {
		// A fold: the memory stood before, with its own links (a
		// supersession by another writer may have made it).
		r.count("fold.checked")
		check("folded into", e)
		return
	}
	if m.Supersedes != "" && !super {
		r.count("key.replaced")
		if e := r.w.reg.get(s.Tenant, m.Supersedes); e != nil && e.alive() {
			check("replaced (by its key)", e)
		}
	}
}

// batch remembers a few memories at once, in one scope: all stored, or
// none when one is refused (the first whose source the key may not claim,
// named by its index).
func (r *run) batch(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	ins := make([]rememberIn, 1+r.rng.IntN(4))
	bad := -1
	for i := range ins {
		ins[i] = rememberIn{Kind: pick(r, rememberKinds), Source: r.source(c), Content: r.content(s)}
		if r.surf.restricted && r.rng.IntN(8) == 0 {
			ins[i].Sensitivity = memgate.SensitivityRestricted
		}
		if bad < 0 && !claims(c.key, ins[i].Source) {
			bad = i
		}
		r.desc += fmt.Sprintf(" [%s %s]", ins[i].Kind, ins[i].Source)
	}
	ms, err := r.drv.rememberBatch(c, q, ins)
	switch {
	case code != "":
		r.refused(err, code)
		return effect{}
	case bad >= 0:
		r.refusedSource(err, fmt.Sprintf("memories[%d].source", bad), fmt.Sprintf("a batch whose memory %d claims source %s", bad, ins[bad].Source))
		r.count("batch.source.refused")
		return effect{}
	case err != nil:
		r.unexpected("batch", err)
		return effect{}
	case len(ms) != len(ins):
		r.fail("a batch of %d memories answered %d", len(ins), len(ms))
		return effect{}
	}
	r.count("batch.ok")
	ids := map[string]bool{}
	for i, m := range ms {
		ids[m.ID] = true
		r.notRestrictedFold(c, s, m)
		r.replacesOnlyItsOwn(c, s, ins[i], m, false)
	}
	from := owner{s.Tenant, s.Principal, s.Agent, s.Conversation}
	home := partition{s.Tenant, s.Principal}
	return effect{
		what: fmt.Sprintf("the %d memories of the batch, in %+v", len(ins), from),
		part: func(p partition) bool { return p == home },
		row: func(n *memgate.Memory, isNew bool) string {
			switch {
			case !ids[n.ID]:
				return "a batch changed a memory it did not answer"
			case ownerOf(n) != from:
				return fmt.Sprintf("a batch stored a memory outside %+v", from)
			}
			return ""
		},
		del: func(e *entry) string {
			for _, in := range ins {
				if e.owner.principal == s.Principal && e.owner.agent == from.agent && e.mem.Kind == in.Kind {
					return "" // a retention cap evicts from the population written
				}
			}
			return "a batch deleted a memory"
		},
		post: func() {
			for _, m := range ms {
				r.shown("batch", m, writable(s))
			}
		},
	}
}

func (r *run) recall(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	in := recallIn{Query: r.query(s), K: 1 + r.rng.IntN(10)}
	if r.surf.recallKinds && r.rng.IntN(10) < 3 {
		in.Kinds = []memgate.Kind{pick(r, kinds), pick(r, kinds)}
	}
	agent := c.key.Role == memgate.RoleAgent
	switch x := r.rng.IntN(100); {
	case r.surf.restricted && !agent && x < 30, r.surf.restricted && agent && x < 6:
		in.IncludeRestricted = true
	case r.surf.preview && (!agent && x >= 90 || agent && x >= 94):
		in.Preview = true
	}
	r.desc += fmt.Sprintf(" k=%d kinds=%v restricted=%v preview=%v", in.K, in.Kinds, in.IncludeRestricted, in.Preview)
	ms, err := r.drv.recall(c, q, in)
	switch {
	case code != "":
		r.refused(err, code)
		return effect{}
	case agent && (in.IncludeRestricted || in.Preview):
		// An agent key may not ask for restricted memories, nor hide its
		// recalls (they reach a prompt). Admitted all the same, what the
		// recall shows is judged below, as if it had not asked.
		if in.IncludeRestricted {
			r.refusedNaming(err, memgate.EFORBIDDEN, "include_restricted")
			r.count("recall.restricted.refused")
		} else {
			r.refusedNaming(err, memgate.EFORBIDDEN, "preview")
			r.count("recall.preview.refused")
		}
		if err != nil {
			return effect{}
		}
		in.IncludeRestricted = false
	case err != nil:
		r.unexpected("recall", err)
		return effect{}
	}
	if agent && r.w.reg.any(s.Tenant, func(e *entry) bool {
		return restricted(e.mem) && e.mem.Status == memgate.StatusActive && e.in(wide(s))
	}) {
		r.count("recall.restricted.present")
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.ID] {
			r.fail("recall returned %s twice", m.ID)
		}
		seen[m.ID] = true
		e := r.shown("recall", m, s)
		if e == nil {
			continue
		}
		r.readWide(e)
		switch {
		case e.mem.Status != memgate.StatusActive:
			r.fail("recall returned %s, which is %s", m.ID, e.mem.Status)
		case len(in.Kinds) > 0 && !slices.Contains(in.Kinds, e.mem.Kind):
			r.fail("recall for kinds %v returned %s of kind %s", in.Kinds, m.ID, e.mem.Kind)
		case e.mem.Sensitivity == memgate.SensitivityRestricted && !in.IncludeRestricted:
			r.fail("recall without include_restricted returned the restricted %s", m.ID)
		}
	}
	if len(ms) > 0 {
		r.count("recall.nonempty")
	}
	return effect{}
}

// matches reports whether a memory passes a list's filters.
func (in listIn) matches(m *memgate.Memory, status memgate.Status) bool {
	if len(in.Kinds) > 0 && !slices.Contains(in.Kinds, m.Kind) {
		return false
	}
	if status != "" && m.Status != status {
		return false
	}
	return in.Text == "" || strings.Contains(strings.ToLower(m.Content), strings.ToLower(in.Text))
}

// sameSet checks that a listing shows exactly the memories want: none
// outside it (checked by shown and the filters) and, the populated
// control, none of it left out.
func (r *run) sameSet(what string, got []*memgate.Memory, want []*entry) {
	ids := map[string]bool{}
	for _, m := range got {
		if ids[m.ID] {
			r.fail("%s showed %s twice", what, m.ID)
		}
		ids[m.ID] = true
	}
	for _, e := range want {
		if !ids[e.id] {
			r.fail("%s left out %s (owner %+v, %s), which the caller may see", what, e.id, e.owner, e.mem.Status)
		}
	}
	if len(got) > len(want) {
		r.fail("%s showed %d memories, %d expected", what, len(got), len(want))
	}
}

func (r *run) list(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	var in listIn
	if r.rng.IntN(10) < 3 {
		in.Kinds = []memgate.Kind{pick(r, kinds)}
	}
	if !r.surf.listRecallable && r.rng.IntN(10) < 4 {
		in.Status = pick(r, statuses)
	}
	if r.rng.IntN(10) < 2 {
		in.Text = pick(r, listWords)
	}
	r.desc += fmt.Sprintf(" filter=%+v", in)
	ms, err := r.drv.list(c, q, in)
	if code != "" {
		r.refused(err, code)
		return effect{}
	}
	if err != nil {
		r.unexpected("list", err)
		return effect{}
	}
	status := in.Status
	keep := func(e *entry) bool { return e.in(s) && in.matches(e.mem, status) }
	if r.surf.listRecallable {
		// Only what recall could return, for every key: a model is not
		// the person, whoever holds the key.
		status = memgate.StatusActive
		keep = func(e *entry) bool { return e.in(s) && in.matches(e.mem, "") && recallableNow(e.mem) }
		if r.w.reg.any(s.Tenant, func(e *entry) bool { return e.in(wide(s)) && in.matches(e.mem, "") && !recallableNow(e.mem) }) {
			r.count("list.unrecallable.left")
		}
	}
	if c.key.Role == memgate.RoleAgent && r.w.reg.any(s.Tenant, func(e *entry) bool {
		return restricted(e.mem) && e.in(wide(s)) && in.matches(e.mem, status)
	}) {
		r.count("list.restricted.present")
	}
	for _, m := range ms {
		e := r.shown("list", m, s)
		switch {
		case e == nil:
		case r.surf.listRecallable && !recallableNow(e.mem):
			r.fail("list showed %s, which recall could not return (%s, %s, expires %v)", m.ID, e.mem.Status, e.mem.Sensitivity, e.mem.ExpiresAt)
		case !in.matches(e.mem, status):
			r.fail("list with filter %+v (status %q) showed %s: %s %s", in, status, m.ID, e.mem.Kind, e.mem.Status)
		default:
			r.readWide(e)
		}
	}
	r.sameSet("list", ms, r.w.reg.aliveIn(s.Tenant, keep))
	if len(ms) > 0 {
		r.count("list.nonempty")
	}
	return effect{}
}

// recallableNow reports whether recall could return m now, written from
// DESIGN.md: active, unexpired, within its validity, standard.
func recallableNow(m *memgate.Memory) bool {
	now := time.Now()
	switch {
	case m.Status != memgate.StatusActive, restricted(m):
		return false
	case m.ExpiresAt != nil && !m.ExpiresAt.After(now):
		return false
	case m.ValidFrom != nil && m.ValidFrom.After(now), m.ValidUntil != nil && !m.ValidUntil.After(now):
		return false
	}
	return true
}

// readWide counts a principal-wide memory shown to an agent-bound key: it
// reads them, though it may not change them.
func (r *run) readWide(e *entry) {
	if r.cur.key.Agent != "" && e.owner.agent == "" {
		r.count("agentbound.read.wide")
	}
}

func (r *run) export(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	ms, lines, err := r.drv.export(c, q)
	if code != "" {
		r.refused(err, code)
		return effect{}
	}
	if err != nil {
		r.unexpected("export", err)
		return effect{}
	}
	for _, m := range ms {
		if e := r.shown("export", m, s); e != nil && m.ContentSHA256 != e.mem.ContentSHA256 {
			r.fail("export wrote %s with hash %s, stored %s", m.ID, m.ContentSHA256, e.mem.ContentSHA256)
		}
	}
	r.sameSet("export", ms, r.w.reg.aliveIn(s.Tenant, func(e *entry) bool { return e.in(s) }))
	if len(ms) > 0 {
		r.count("export.nonempty")
		r.exports[s.Tenant] = lines
	}
	return effect{}
}

// idOp performs get, update, revoke, approve or delete on a picked id.
func (r *run) idOp(op opKind, c *caller, q scopeReq, s memgate.Scope, code string) effect {
	name := opInfo[op].name
	var prefer func(*memgate.Memory) bool
	switch op {
	case opApprove:
		prefer = hasStatus(memgate.StatusPending)
	case opUpdate, opRevoke:
		prefer = hasStatus(memgate.StatusActive, memgate.StatusPending)
	}
	inScope := 50
	if op == opApprove {
		inScope = 60 // pending memories in scope are rarer than others
	}
	id := r.pickTarget(s, inScope, prefer)
	// An update and an approve name the version they are based on (the
	// version reviewed): the target's, or the version of that id in
	// another tenant (what a caller who learned it would send), or now and
	// then a stale one; and an approve, now and then, none.
	version := int64(1)
	if e := r.w.reg.get(s.Tenant, id); e != nil && e.alive() {
		version = e.mem.Version
	} else {
		for _, o := range r.w.reg.byID[id] {
			if o.alive() {
				version = o.mem.Version
			}
		}
	}
	stale := (op == opUpdate || op == opApprove) && r.rng.IntN(100) < 12
	unversioned := false
	switch {
	case stale && version > 1 && r.rng.IntN(2) == 0:
		version-- // reviewed before the last change
	case stale:
		version++
	case op == opApprove && code == "" && r.rng.IntN(100) < 5:
		unversioned, version = true, 0
	}
	upd := updateIn{Reason: "noted on " + pick(r, objects)}
	if r.rng.IntN(2) == 0 {
		upd = updateIn{Content: r.sentence()}
	}
	call := func(id string) (*memgate.Memory, error) {
		switch op {
		case opGet:
			return r.drv.get(c, q, id)
		case opUpdate:
			return r.drv.update(c, q, id, version, upd)
		case opRevoke:
			return r.drv.revoke(c, q, id)
		case opApprove:
			return r.drv.approve(c, q, id, version)
		}
		return nil, r.drv.delete(c, q, id)
	}
	r.desc += " id " + id
	if op == opUpdate || op == opApprove {
		r.desc += fmt.Sprintf(" version %d", version)
	}
	snap := r.snapshot(s.Tenant, id)
	m, err := call(id)
	if code != "" {
		r.refused(err, code)
		r.unchanged(snap, ref{})
		return effect{}
	}
	if unversioned {
		// Refused before the memory is looked up, wherever it is.
		r.refusedNaming(err, memgate.EINVALID, r.surf.versionField)
		r.unchanged(snap, ref{})
		r.count("approve.unversioned")
		return effect{}
	}
	e := r.reachable(s, id)
	if e == nil {
		r.crossKind(name, s, id)
		r.hidden(name, s, id)
		r.notFoundLikeMissing(err, func(g string) error { _, err := call(g); return err })
		r.unchanged(snap, ref{})
		return effect{}
	}
	r.unchanged(snap, e.ref)
	if codeOf(err) == memgate.ENOTFOUND {
		r.fail("%s of %s, in scope %+v, answered not_found", name, id, s)
		return effect{}
	}
	was := e.mem
	r.desc += fmt.Sprintf(" (in scope, %s v%d)", was.Status, was.Version)
	ok := func(want ...memgate.Status) bool { return slices.Contains(want, was.Status) }
	switch op {
	case opGet:
		if err != nil {
			r.unexpected("get", err)
			return effect{}
		}
		if m.ID != id || (!r.surf.partial && fingerprint(m) != fingerprint(was)) {
			r.fail("get of %s answered %s %s; stored: %s", id, m.ID, fingerprint(m), fingerprint(was))
		}
		r.count("get.ok")
		return effect{post: func() { r.shown("get", m, s) }}
	case opUpdate:
		if !claims(c.key, was.Source) {
			// What the memory says is its source's: a key that may not
			// claim that source may not rewrite it, whatever its version.
			r.refusedSource(err, "source", "an update of a memory from source "+string(was.Source))
			r.count("update.source.refused")
			return effect{}
		}
		can := ok(memgate.StatusActive, memgate.StatusPending) && !stale
		switch got := codeOf(err); {
		case err == nil && !can:
			r.fail("update of a %s memory at a stale=%v version succeeded", was.Status, stale)
		case got == memgate.ECONFLICT && can:
			r.fail("update at the current version was a conflict: %v", err)
			return effect{}
		case got == memgate.ECONFLICT, got == memgate.EPOLICY:
			r.count("update.refused")
			return effect{}
		case err != nil:
			r.unexpected("update", err)
			return effect{}
		}
		r.count("update.ok")
		switch {
		case c.key.Role == memgate.RoleUser:
			r.count("user.update.ok")
		case c.key.Role == memgate.RoleAgent && was.Source == memgate.SourceUser:
			r.count("update.granted") // claimed by the key's grant only
		}
		eff := onlyEntries("memory "+id, e)
		eff.post = func() {
			if n := r.shown("update", m, s); n != nil && m.Version != was.Version+1 {
				r.fail("update of %s answered version %d, was %d", id, m.Version, was.Version)
			}
		}
		return eff
	case opRevoke:
		if !allows(c.key.Role, opDelete) && !claims(c.key, was.Source) {
			// Revoking retires what the memory says (issue 26): a key
			// that may not delete it (an agent key) must be able to claim
			// its source, under the default policy.
			r.refusedSource(err, "source", "a revoke of a memory from source "+string(was.Source))
			r.count("revoke.source.refused")
			return effect{}
		}
		switch {
		case ok(memgate.StatusSuperseded) && codeOf(err) == memgate.ECONFLICT:
			r.count("revoke.refused")
			return effect{}
		case err != nil:
			r.unexpected("revoke", err)
			return effect{}
		case m.Status != memgate.StatusRevoked:
			r.fail("revoke of %s answered status %s", id, m.Status)
		}
		r.count("revoke.ok")
		eff := onlyEntries("memory "+id, e)
		eff.post = func() { r.shown("revoke", m, s) }
		return eff
	case opApprove:
		if stale {
			// The memory changed since it was reviewed (or never had that
			// version): a conflict naming If-Match, and it stays as it is.
			r.refusedNaming(err, memgate.ECONFLICT, "If-Match")
			r.count("approve.stale.refused")
			return effect{}
		}
		switch {
		case ok(memgate.StatusRevoked, memgate.StatusSuperseded) && codeOf(err) == memgate.ECONFLICT:
			r.count("approve.refused")
			return effect{}
		case err != nil:
			r.unexpected("approve", err)
			return effect{}
		case m.Status != memgate.StatusActive:
			r.fail("approve of %s answered status %s", id, m.Status)
		}
		if was.Status == memgate.StatusPending {
			r.count("approve.ok")
		} else {
			r.count("approve.noop")
		}
		// Approving a pending memory that was remembered to supersede
		// another marks that one superseded: the link was made within
		// the same tenant and principal, in any agent or conversation
		// (store.Promote), and that is the only other memory it may touch.
		// A keyed one supersedes whichever memory has its key in its key
		// space now (the one it was held against, or a newer one), and
		// the one it names when none has.
		es := []*entry{e}
		if h := r.keyHolder(e.owner, was.Key, was.Source); was.Status == memgate.StatusPending && h != nil {
			es = append(es, h)
			r.count("approve.key.holder")
		} else if o := r.w.reg.get(e.tenant, was.Supersedes); was.Supersedes != "" && o != nil && o.alive() && o.owner.principal == e.owner.principal {
			es = append(es, o)
		}
		eff := onlyEntries("memory "+id+" and the one it supersedes", es...)
		eff.post = func() { r.shown("approve", m, s) }
		return eff
	default: // delete
		if err != nil {
			r.unexpected("delete", err)
			return effect{}
		}
		r.count("delete.ok")
		eff := onlyEntries("memory "+id, e)
		eff.row = func(*memgate.Memory, bool) string { return "delete changed a memory" }
		eff.del = func(d *entry) string {
			if d != e {
				return "delete removed another memory"
			}
			return ""
		}
		return eff
	}
}

func (r *run) forget(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	before := r.w.counts()
	n, err := r.drv.forget(c, q)
	if code != "" {
		r.refused(err, code)
		return effect{}
	}
	if err != nil {
		r.unexpected("forget", err)
		return effect{}
	}
	home := partition{s.Tenant, s.Principal}
	if n != before[home] {
		r.fail("forget of %s erased %d memories; it held %d", home, n, before[home])
	}
	after := r.w.counts()
	for p, was := range before {
		if p != home && after[p] != was {
			r.fail("forget of %s changed the count of %s: %d → %d", home, p, was, after[p])
		}
	}
	for p, now := range after {
		if p == home && now != 0 {
			r.fail("after forget, %s still holds %d memories", home, now)
		} else if _, ok := before[p]; !ok && p != home {
			r.fail("forget of %s made %d memories appear in %s", home, now, p)
		}
	}
	if n > 0 {
		r.count("forget.erased")
	}
	for k := range r.idem {
		if k.o.tenant == home.tenant && k.o.principal == home.principal {
			delete(r.idem, k) // forget drops the principal's idempotency records
		}
	}
	return effect{
		what:   "the memories of " + home.String(),
		forgot: &home,
		part:   func(p partition) bool { return p == home },
		row:    func(*memgate.Memory, bool) string { return "forget changed a memory instead of erasing it" },
		del: func(e *entry) string {
			if e.tenant != home.tenant || e.owner.principal != home.principal {
				return "forget erased another principal's memory"
			}
			return ""
		},
		post: func() { r.forgotten(home, n) },
	}
}

// forgotten checks, once the change feeds are read, that the shadow and
// the store's feed agree on the partition a forget erased (n memories):
// the shadow holds none of it (a reader following the feed learnt that
// every memory went, by a reset, since a forget leaves no tombstone); the
// feed keeps no trace of them (no id of theirs among its deletions, even
// read from the start); and a reader at the head the feed now reads
// continues from there without another reset.
func (r *run) forgotten(home partition, n int64) {
	r.t.Helper()
	if es := r.w.reg.aliveIn(home.tenant, func(e *entry) bool { return e.owner.principal == home.principal }); len(es) > 0 {
		r.fail("after forget of %s, the change feed left a reader holding %d of its memories (%s first)", home, len(es), es[0].id)
	}
	all, err := r.w.db.ChangesSince(r.w.ctx, home.tenant, home.principal, 0, 1000)
	if err != nil {
		r.w.fatalf("changes of %s since 0: %v", home, err)
	}
	if len(all.Deleted)+len(all.Memories) > 0 {
		r.fail("after forget of %s, its change feed from the start still names %d memories and %d deletions (%v)", home, len(all.Memories), len(all.Deleted), append(all.Deleted, "")[0])
	}
	head := r.heads[home]
	next, err := r.w.db.ChangesSince(r.w.ctx, home.tenant, home.principal, head, 1000)
	switch {
	case err != nil:
		r.w.fatalf("changes of %s since %d: %v", home, head, err)
	case next.Reset:
		r.fail("after forget of %s, a reader at its head %d is reset again", home, head)
	case len(next.Memories)+len(next.Deleted) > 0 || next.Head != head:
		r.fail("after forget of %s, a reader at its head %d reads %d changes, to head %d", home, head, len(next.Memories)+len(next.Deleted), next.Head)
	}
	if n > 0 {
		r.count("forget.feed.checked")
	}
}

// importLines imports a few JSONL lines: fresh ones, or lines of an
// earlier export (of this tenant or another, the tenant member removed,
// rewritten to the importer's, or left naming the other tenant, which
// must refuse the whole import).
func (r *run) importLines(c *caller, q scopeReq, s memgate.Scope, code string) effect {
	tenant := c.key.Tenant
	var lines []map[string]any
	var srcs []string
	for _, t := range tenants {
		if len(r.exports[t]) > 0 {
			srcs = append(srcs, t)
		}
	}
	from := ""
	if len(srcs) > 0 && r.rng.IntN(2) == 0 {
		from = pick(r, srcs)
		exp := r.exports[from]
		for _, i := range r.rng.Perm(len(exp))[:1+r.rng.IntN(min(6, len(exp)))] {
			var l map[string]any
			dec := json.NewDecoder(bytes.NewReader(exp[i]))
			dec.UseNumber()
			if err := dec.Decode(&l); err != nil {
				r.w.fatalf("%v", err)
			}
			if from != tenant {
				if r.rng.IntN(2) == 0 {
					delete(l, "tenant")
				} else {
					l["tenant"] = tenant
				}
			}
			lines = append(lines, l)
		}
	} else {
		for range 1 + r.rng.IntN(6) {
			l := map[string]any{"id": memgate.NewID(time.Now()), "principal": pick(r, principals), "kind": string(pick(r, kinds)), "content": r.sentence()}
			if r.rng.IntN(2) == 0 {
				l["agent"] = pick(r, agents)
			}
			if r.rng.IntN(2) == 0 {
				l["conversation"] = pick(r, conversations)
			}
			if r.rng.IntN(4) == 0 {
				l["status"] = "pending"
			}
			if r.rng.IntN(5) == 0 {
				l["tenant"] = tenant
			}
			lines = append(lines, l)
		}
	}
	foreign := r.rng.IntN(5) < 2
	if foreign {
		lines[r.rng.IntN(len(lines))]["tenant"] = pick(r, others(tenants, tenant))
	}
	var body bytes.Buffer
	owners := map[string]owner{}
	conflict := false
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			r.w.fatalf("%v", err)
		}
		body.Write(b)
		body.WriteByte('\n')
		str := func(k string) string { v, _ := l[k].(string); return v }
		id := str("id")
		owners[id] = owner{tenant, str("principal"), str("agent"), str("conversation")}
		if e := r.w.reg.get(tenant, id); e != nil && e.alive() {
			conflict = true
		}
	}
	// A keyed line is a keyed write by the importing key: stored active,
	// it supersedes the active memory that has its key in its key space
	// (owner, key, source), as a remember would (the importing key may
	// supersede anything in its tenant). holders maps each such memory to
	// the lines that may take its key.
	holders := map[string][]string{}
	for _, l := range lines {
		str := func(k string) string { v, _ := l[k].(string); return v }
		src := memgate.Source(str("source"))
		if src == "" {
			src = memgate.SourceImport
		}
		if h := r.keyHolder(owners[str("id")], str("key"), src); h != nil {
			holders[h.id] = append(holders[h.id], str("id"))
			r.count("import.key.holder")
		}
	}
	r.desc += fmt.Sprintf(" %d lines (from %q, naming another tenant: %v, an id in use: %v)", len(lines), from, foreign, conflict)
	n, err := r.drv.importJSONL(c, q, body.Bytes())
	switch {
	case code != "":
		r.refused(err, code)
		return effect{}
	case foreign:
		if codeOf(err) != memgate.EINVALID {
			r.fail("an import with a line naming another tenant was answered %v, want invalid_argument", orOK(err))
		}
		r.count("import.refused")
		return effect{}
	case conflict:
		if codeOf(err) != memgate.ECONFLICT {
			r.fail("an import reusing an id of the tenant was answered %v, want conflict", orOK(err))
		}
		r.count("import.conflict")
		return effect{}
	case err != nil:
		r.unexpected("import", err)
		return effect{}
	case n != len(lines):
		r.fail("import of %d lines imported %d", len(lines), n)
	}
	r.count("import.ok")
	return effect{
		what: fmt.Sprintf("the %d imported memories, in %s", len(lines), tenant),
		part: func(p partition) bool {
			for _, o := range owners {
				if p == (partition{o.tenant, o.principal}) {
					return true
				}
			}
			return false
		},
		row: func(m *memgate.Memory, isNew bool) string {
			o, ok := owners[m.ID]
			switch {
			case !isNew && m.Status == memgate.StatusSuperseded && slices.Contains(holders[m.ID], m.SupersededBy):
				r.count("import.key.superseded")
				return ""
			case !ok || !isNew:
				return "import changed a memory it did not import"
			case ownerOf(m) != o:
				return fmt.Sprintf("import stored a line meant for %+v", o)
			}
			return ""
		},
		del: func(*entry) string { return "import deleted a memory" },
		post: func() {
			for id, o := range owners {
				if e := r.w.reg.get(tenant, id); e == nil || !e.alive() || e.owner != o {
					r.fail("imported line %s is not stored for %+v", id, o)
				}
			}
		},
	}
}

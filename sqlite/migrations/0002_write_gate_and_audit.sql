-- 0002: the write gate's columns on memories (dedup, seen count, flags,
-- feedback), the indexes Remember and the sweeper need, and the audit log.

-- dedup_key is the write gate's signature of the normalized content ('' when
-- the memory takes no part in dedup). seen_count is 1 + the duplicates folded
-- into the memory. flags is a JSON array of the write gate's findings, NULL
-- when there are none. feedback_count and feedback_sum aggregate usefulness
-- reports, each in [-1, 1].
ALTER TABLE memories ADD COLUMN dedup_key      TEXT    NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN seen_count     INTEGER NOT NULL DEFAULT 1 CHECK (seen_count >= 1);
ALTER TABLE memories ADD COLUMN flags          TEXT    CHECK (flags IS NULL OR json_type(flags) = 'array');
ALTER TABLE memories ADD COLUMN feedback_count INTEGER NOT NULL DEFAULT 0 CHECK (feedback_count >= 0);
ALTER TABLE memories ADD COLUMN feedback_sum   REAL    NOT NULL DEFAULT 0;

-- Dedup: is there a live memory with this key in this partition and kind?
-- Partial, so memories without a key cost nothing. Queries must repeat
-- "dedup_key <> ''" for the planner to use it.
CREATE INDEX memories_dedup ON memories (tenant, principal, kind, dedup_key)
    WHERE dedup_key <> '';

-- Retention: the population a cap counts and evicts from is exactly the rows
-- of this index (active or pending memories of one partition and kind), in
-- insertion order, so counting is an index range and eviction reads the
-- oldest first without sorting. Queries must repeat the status predicate
-- verbatim for the planner to use it. status trails the key only to make the
-- index covering (SQLite re-checks the predicate, which would otherwise read
-- every row of the population from the table). A plain index on (tenant,
-- principal, kind, status, seq) counts as well but cannot give the two
-- statuses in seq order, and the planner then walks the whole partition.
CREATE INDEX memories_retention ON memories (tenant, principal, kind, seq, status)
    WHERE status IN ('active', 'pending');

-- The sweeper works across tenants, oldest expiry first: the one index that
-- does not start with tenant, because its query has no tenant.
CREATE INDEX memories_expiry ON memories (expires_at)
    WHERE expires_at IS NOT NULL;

-- The audit log: who did what to which memories, when. It holds ids, counts,
-- scores and a hash of the query, never memory content or query text, so it
-- survives forget as the accountability record. seq is the append order
-- (AUTOINCREMENT: never reused) and the paging cursor. at is unix
-- microseconds, UTC. counts is a JSON object of integers, memory_ids a JSON
-- array of ids and scores a JSON array of numbers; each NULL when empty.
CREATE TABLE audit_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant       TEXT    NOT NULL,
    principal    TEXT    NOT NULL DEFAULT '',
    agent        TEXT    NOT NULL DEFAULT '',
    actor        TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    recall_id    TEXT    NOT NULL DEFAULT '',
    query_sha256 TEXT    NOT NULL DEFAULT '',
    reason       TEXT    NOT NULL DEFAULT '',
    counts       TEXT    CHECK (counts IS NULL OR json_type(counts) = 'object'),
    memory_ids   TEXT    CHECK (memory_ids IS NULL OR json_type(memory_ids) = 'array'),
    scores       TEXT    CHECK (scores IS NULL OR json_type(scores) = 'array'),
    CHECK (tenant <> '' AND actor <> '' AND action <> '')
) STRICT;

-- A tenant's log, newest first; one principal's; one recall's. seq is the
-- rowid, which every index ends with, so each serves ORDER BY seq DESC.
CREATE INDEX audit_events_tenant    ON audit_events (tenant, seq);
CREATE INDEX audit_events_principal ON audit_events (tenant, principal, seq);
CREATE INDEX audit_events_recall    ON audit_events (tenant, recall_id);

-- The events that name a memory, for "what happened to memory X": one row
-- per (event, memory id).
CREATE TABLE audit_refs (
    tenant    TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,
    seq       INTEGER NOT NULL REFERENCES audit_events (seq),
    PRIMARY KEY (tenant, memory_id, seq)
) STRICT, WITHOUT ROWID;

-- Append-only: the log cannot be rewritten through this database. UPDATE and
-- DELETE abort (a DELETE without WHERE too: a table with triggers is never
-- truncated wholesale). INSERT OR REPLACE on an existing seq would delete
-- the old row without firing delete triggers (recursive_triggers is off), so
-- an insert that names an existing seq aborts as well. A REPLACE on
-- audit_refs can only swap a row for an identical one (every column is key).
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_events_no_replace BEFORE INSERT ON audit_events
WHEN EXISTS (SELECT 1 FROM audit_events WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_refs_no_update BEFORE UPDATE ON audit_refs
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_refs_no_delete BEFORE DELETE ON audit_refs
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

-- 0009: the trust model between agents and people.
--
-- Every memory records the key that wrote it and the key that last changed
-- it (ids, never secrets; empty for memories written before, or by the
-- local CLI). Every key records the sources it may claim when one was
-- granted at creation (a comma-separated list; empty: its role's default,
-- package auth).
ALTER TABLE memories ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN updated_by TEXT NOT NULL DEFAULT '';
ALTER TABLE keys ADD COLUMN sources TEXT NOT NULL DEFAULT '';

-- Retention populations are per (tenant, principal, agent, kind): a cap
-- counts and evicts the memories of one writer's agent (or the
-- principal-wide ones), so one agent's flood never evicts another's
-- memories, nor the principal-wide ones. Same counter and triggers as
-- 0004, with the agent in the key.
DROP TRIGGER populations_insert;
DROP TRIGGER populations_delete;
DROP TRIGGER populations_update;
DROP TABLE populations;
CREATE TABLE populations (
    tenant    TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    agent     TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    n         INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, agent, kind)
) STRICT, WITHOUT ROWID;

INSERT INTO populations (tenant, principal, agent, kind, n)
    SELECT tenant, principal, agent, kind, COUNT(*) FROM memories
    WHERE status IN ('active', 'pending')
    GROUP BY tenant, principal, agent, kind;

CREATE TRIGGER populations_insert AFTER INSERT ON memories
WHEN NEW.status IN ('active', 'pending')
BEGIN
    INSERT INTO populations (tenant, principal, agent, kind, n) VALUES (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, 1)
        ON CONFLICT (tenant, principal, agent, kind) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER populations_delete AFTER DELETE ON memories
WHEN OLD.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind;
END;

CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, agent, kind, status ON memories
WHEN OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE OLD.status IN ('active', 'pending')
          AND tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind;
    INSERT INTO populations (tenant, principal, agent, kind, n)
        SELECT NEW.tenant, NEW.principal, NEW.agent, NEW.kind, 1 WHERE NEW.status IN ('active', 'pending')
        ON CONFLICT (tenant, principal, agent, kind) DO UPDATE SET n = n + 1;
END;

DROP INDEX memories_retention;
CREATE INDEX memories_retention ON memories (tenant, principal, agent, kind, seq, status);

-- An approval's audit event records the content hash of the version
-- approved (with its version in counts): what the person saw.
ALTER TABLE audit_events ADD COLUMN content_sha256 TEXT NOT NULL DEFAULT '';

-- Forget leaves no trace of the person but what its receipt needs.
--
-- tenant_heads.high is above every change sequence a forgotten partition
-- of the tenant reached: Forget deletes the partition's head row and its
-- tombstones (each names the principal) and raises high past them. A
-- partition without a row reads as head = pruned = high, so a reader
-- behind it resets its copy (the memories are gone); a partition written
-- again starts above high, with pruned = high, so no reader mistakes the
-- new sequence for the old one.
CREATE TABLE tenant_heads (
    tenant TEXT    NOT NULL PRIMARY KEY,
    high   INTEGER NOT NULL CHECK (high >= 0)
) STRICT, WITHOUT ROWID;

DROP TRIGGER memories_change_insert;
DROP TRIGGER memories_change_update;
DROP TRIGGER memories_change_delete;

CREATE TRIGGER memories_change_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO partition_heads (tenant, principal, head, pruned)
        SELECT NEW.tenant, NEW.principal, COALESCE(MAX(high), 0) + 1, COALESCE(MAX(high), 0)
        FROM tenant_heads WHERE tenant = NEW.tenant
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    UPDATE memories SET change_seq = (SELECT head FROM partition_heads
        WHERE tenant = NEW.tenant AND principal = NEW.principal)
        WHERE seq = NEW.seq;
END;

CREATE TRIGGER memories_change_update AFTER UPDATE ON memories
WHEN NEW.change_seq IS OLD.change_seq
BEGIN
    INSERT INTO partition_heads (tenant, principal, head, pruned)
        SELECT NEW.tenant, NEW.principal, COALESCE(MAX(high), 0) + 1, COALESCE(MAX(high), 0)
        FROM tenant_heads WHERE tenant = NEW.tenant
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    UPDATE memories SET change_seq = (SELECT head FROM partition_heads
        WHERE tenant = NEW.tenant AND principal = NEW.principal)
        WHERE seq = NEW.seq;
END;

CREATE TRIGGER memories_change_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO partition_heads (tenant, principal, head, pruned)
        SELECT OLD.tenant, OLD.principal, COALESCE(MAX(high), 0) + 1, COALESCE(MAX(high), 0)
        FROM tenant_heads WHERE tenant = OLD.tenant
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    INSERT INTO memory_tombstones (tenant, principal, change_seq, id, deleted_at)
        SELECT OLD.tenant, OLD.principal, head, OLD.id, CAST(unixepoch('subsec') * 1000000 AS INTEGER)
        FROM partition_heads WHERE tenant = OLD.tenant AND principal = OLD.principal;
END;

-- The audit log stays append-only with one exception, for Forget: an
-- event's principal may be replaced by the person's pseudonym (a keyed
-- hash, "forgotten:…"), once, every other column unchanged.
DROP TRIGGER audit_events_no_update;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
WHEN NOT (NEW.principal LIKE 'forgotten:%' AND OLD.principal NOT LIKE 'forgotten:%'
    AND NEW.seq IS OLD.seq AND NEW.tenant IS OLD.tenant AND NEW.agent IS OLD.agent AND NEW.actor IS OLD.actor
    AND NEW.action IS OLD.action AND NEW.at IS OLD.at AND NEW.recall_id IS OLD.recall_id
    AND NEW.query_sha256 IS OLD.query_sha256 AND NEW.reason IS OLD.reason AND NEW.counts IS OLD.counts
    AND NEW.memory_ids IS OLD.memory_ids AND NEW.scores IS OLD.scores AND NEW.content_sha256 IS OLD.content_sha256)
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

-- The key of the pseudonyms: 32 random bytes, made once per database
-- (store.Store.PseudonymKey), so every replica computes the same one.
CREATE TABLE pseudonym_key (
    id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    key BLOB    NOT NULL CHECK (length(key) = 32)
) STRICT;

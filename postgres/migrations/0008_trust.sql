-- 0008: the trust model between agents and people.
--
-- Every memory records the key that wrote it and the key that last changed
-- it (ids, never secrets; empty for memories written before, or by the
-- local CLI). Every key records the sources it may claim when one was
-- granted at creation (a comma-separated list; empty: its role's default,
-- package auth).
ALTER TABLE memories ADD COLUMN created_by text NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN updated_by text NOT NULL DEFAULT '';
ALTER TABLE keys ADD COLUMN sources text NOT NULL DEFAULT '';

-- Retention populations are per (tenant, principal, agent, kind): a cap
-- counts and evicts the memories of one writer's agent (or the
-- principal-wide ones), so one agent's flood never evicts another's
-- memories, nor the principal-wide ones. Same counter and triggers as
-- 0004, with the agent in the key.
DROP TRIGGER populations_insert ON memories;
DROP TRIGGER populations_delete ON memories;
DROP TRIGGER populations_update ON memories;
DROP TABLE populations;
CREATE TABLE populations (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    agent     text   NOT NULL,
    kind      text   NOT NULL,
    n         bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, agent, kind)
);
INSERT INTO populations (tenant, principal, agent, kind, n)
    SELECT tenant, principal, agent, kind, COUNT(*) FROM memories
    WHERE status IN ('active', 'pending')
    GROUP BY tenant, principal, agent, kind;

CREATE OR REPLACE FUNCTION memgate_populations() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.status IN ('active', 'pending') THEN
        UPDATE populations SET n = n - 1
            WHERE tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('active', 'pending') THEN
        INSERT INTO populations AS p (tenant, principal, agent, kind, n) VALUES (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, 1)
            ON CONFLICT (tenant, principal, agent, kind) DO UPDATE SET n = p.n + 1;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER populations_insert AFTER INSERT ON memories
    FOR EACH ROW WHEN (NEW.status IN ('active', 'pending'))
    EXECUTE FUNCTION memgate_populations();
CREATE TRIGGER populations_delete AFTER DELETE ON memories
    FOR EACH ROW WHEN (OLD.status IN ('active', 'pending'))
    EXECUTE FUNCTION memgate_populations();
CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, agent, kind, status ON memories
    FOR EACH ROW WHEN ((OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending'))
        AND (OLD.tenant, OLD.principal, OLD.agent, OLD.kind, OLD.status) IS DISTINCT FROM (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, NEW.status))
    EXECUTE FUNCTION memgate_populations();

DROP INDEX memories_retention;
CREATE INDEX memories_retention ON memories (tenant, principal, agent, kind, seq)
    WHERE status IN ('active', 'pending');

-- An approval's audit event records the content hash of the version
-- approved (with its version in counts): what the person saw.
ALTER TABLE audit_events ADD COLUMN content_sha256 text NOT NULL DEFAULT '';

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
    tenant text   NOT NULL PRIMARY KEY,
    high   bigint NOT NULL CHECK (high >= 0)
);

CREATE OR REPLACE FUNCTION memgate_next_change(t text, p text) RETURNS bigint LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    h bigint;
    base bigint;
BEGIN
    -- The row, when there is one: the UPDATE waits for a Forget that holds
    -- it, and finds nothing once that Forget has deleted it, so the high
    -- mark is read after the Forget's commit, never before.
    UPDATE partition_heads SET head = head + 1 WHERE tenant = t AND principal = p RETURNING head INTO h;
    IF FOUND THEN
        RETURN h;
    END IF;
    SELECT COALESCE(MAX(high), 0) INTO base FROM tenant_heads WHERE tenant = t;
    INSERT INTO partition_heads AS ph (tenant, principal, head, pruned) VALUES (t, p, base + 1, base)
        ON CONFLICT (tenant, principal) DO UPDATE SET head = ph.head + 1
        RETURNING head INTO h;
    RETURN h;
END;
$$;

-- The audit log stays append-only with one exception, for Forget: an
-- event's principal may be replaced by the person's pseudonym (a keyed
-- hash, "forgotten:…"), once, every other column unchanged.
CREATE FUNCTION memgate_audit_events_append_only() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    o audit_events;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.principal LIKE 'forgotten:%' AND OLD.principal NOT LIKE 'forgotten:%' THEN
        o := OLD;
        o.principal := NEW.principal;
        IF o IS NOT DISTINCT FROM NEW THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'audit log is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;

DROP TRIGGER audit_events_append_only ON audit_events;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION memgate_audit_events_append_only();

-- The key of the pseudonyms: 32 random bytes, made once per database
-- (store.Store.PseudonymKey), so every replica computes the same one.
CREATE TABLE pseudonym_key (
    id  integer NOT NULL PRIMARY KEY CHECK (id = 1),
    key bytea   NOT NULL CHECK (length(key) = 32)
);

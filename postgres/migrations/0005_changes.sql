-- 0005: change tracking, so that several memgate processes over one
-- database keep their in-memory recall indexes current
-- (store.Store.PartitionHead, ChangesSince, PruneChanges).
--
-- partition_heads.head is each partition's change sequence. Every change of
-- a memory raises it by one and stamps the new value on the memory
-- (memories.change_seq) or, for a delete, on a tombstone. Triggers do it, as
-- for populations (0004), so no statement that changes memories can forget
-- to, whoever issues it. Sequences follow commit order within a partition:
-- the writing transaction raises the head row, so writers of one partition
-- queue on that row lock, and a reader that sees head h sees every change
-- numbered h or lower (a global sequence drawn before commit would not).
--
-- pruned is the highest change_seq of a tombstone PruneChanges removed from
-- the partition (a trigger keeps it): a reader behind it may have missed a
-- delete and must reload the partition.
CREATE TABLE partition_heads (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    head      bigint NOT NULL CHECK (head >= 0),
    pruned    bigint NOT NULL DEFAULT 0 CHECK (pruned >= 0),
    PRIMARY KEY (tenant, principal)
);

-- The sequence of a memory's last change. Existing memories take their seq
-- (it grows with insertion within every partition, so it is a valid
-- sequence) and each partition's head starts at the largest.
ALTER TABLE memories ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
UPDATE memories SET change_seq = seq;
INSERT INTO partition_heads (tenant, principal, head)
    SELECT tenant, principal, MAX(seq) FROM memories GROUP BY tenant, principal;

-- ChangesSince: the memories of a partition changed after a sequence, in
-- sequence order, as one index range.
CREATE INDEX memories_changes ON memories (tenant, principal, change_seq);

-- What was deleted from a partition, and when (the database's clock, for
-- pruning). Ids only, never content.
CREATE TABLE memory_tombstones (
    tenant     text        NOT NULL,
    principal  text        NOT NULL,
    change_seq bigint      NOT NULL,
    id         text        NOT NULL,
    deleted_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, principal, change_seq)
);

-- The tombstones of one id: ChangesSince reports only an id's last.
CREATE INDEX memory_tombstones_id ON memory_tombstones (tenant, principal, id, change_seq);

-- PruneChanges removes the oldest tombstones first, across tenants.
CREATE INDEX memory_tombstones_deleted_at ON memory_tombstones (deleted_at);

-- next_change raises the head of a partition and returns it.
CREATE FUNCTION memgate_next_change(t text, p text) RETURNS bigint LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    h bigint;
BEGIN
    INSERT INTO partition_heads AS ph (tenant, principal, head) VALUES (t, p, 1)
        ON CONFLICT (tenant, principal) DO UPDATE SET head = ph.head + 1
        RETURNING head INTO h;
    RETURN h;
END;
$$;

-- Any insert or update counts, whatever the columns (a column added later
-- included): the BEFORE trigger stamps the new sequence on the row being
-- written, so no second UPDATE is needed. A memory's owner and id are
-- fixed: a change of either would move it between partitions behind the
-- back of both heads. No statement of memgate's sets them; this keeps it so.
CREATE FUNCTION memgate_memories_change() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (OLD.tenant, OLD.principal, OLD.id) IS DISTINCT FROM (NEW.tenant, NEW.principal, NEW.id) THEN
        RAISE EXCEPTION 'a memory''s tenant, principal and id cannot change' USING ERRCODE = 'restrict_violation';
    END IF;
    NEW.change_seq := memgate_next_change(NEW.tenant, NEW.principal);
    RETURN NEW;
END;
$$;

CREATE TRIGGER memories_change BEFORE INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION memgate_memories_change();

-- A delete (Delete, Forget, the sweep, retention eviction) leaves a
-- tombstone.
CREATE FUNCTION memgate_memories_delete() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO memory_tombstones (tenant, principal, change_seq, id, deleted_at)
        VALUES (OLD.tenant, OLD.principal, memgate_next_change(OLD.tenant, OLD.principal), OLD.id, clock_timestamp());
    RETURN NULL;
END;
$$;

CREATE TRIGGER memories_change_delete AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memgate_memories_delete();

-- TRUNCATE would delete without tombstones: refused.
CREATE FUNCTION memgate_memories_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'memories cannot be truncated: delete them, so readers learn of it' USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER memories_no_truncate BEFORE TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION memgate_memories_no_truncate();

CREATE FUNCTION memgate_tombstones_pruned() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE partition_heads SET pruned = GREATEST(pruned, OLD.change_seq)
        WHERE tenant = OLD.tenant AND principal = OLD.principal;
    RETURN NULL;
END;
$$;

CREATE TRIGGER memory_tombstones_pruned AFTER DELETE ON memory_tombstones
    FOR EACH ROW EXECUTE FUNCTION memgate_tombstones_pruned();

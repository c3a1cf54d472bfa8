-- 0006: change tracking, so that several processes over one database can
-- keep their in-memory recall indexes current (store.Store.PartitionHead,
-- ChangesSince, PruneChanges).
--
-- partition_heads.head is each partition's change sequence. Every change of
-- a memory raises it by one and stamps the new value on the memory
-- (memories.change_seq) or, for a delete, on a tombstone. Triggers do it,
-- as for populations (0004), so no statement that changes memories can
-- forget to, whoever issues it. Sequences follow commit order: SQLite has
-- one writer at a time per database.
--
-- pruned is the highest change_seq of a tombstone PruneChanges removed from
-- the partition (a trigger keeps it): a reader behind it may have missed a
-- delete and must reload the partition.
CREATE TABLE partition_heads (
    tenant    TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    head      INTEGER NOT NULL CHECK (head >= 0),
    pruned    INTEGER NOT NULL DEFAULT 0 CHECK (pruned >= 0),
    PRIMARY KEY (tenant, principal)
) STRICT, WITHOUT ROWID;

-- The sequence of a memory's last change. Existing memories take their seq
-- (it grows with insertion within every partition, so it is a valid
-- sequence) and each partition's head starts at the largest.
ALTER TABLE memories ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET change_seq = seq;
INSERT INTO partition_heads (tenant, principal, head)
    SELECT tenant, principal, MAX(seq) FROM memories GROUP BY tenant, principal;

-- ChangesSince: the memories of a partition changed after a sequence, in
-- sequence order, as one index range.
CREATE INDEX memories_changes ON memories (tenant, principal, change_seq);

-- What was deleted from a partition, and when (unix microseconds by the
-- database's clock, for pruning). Ids only, never content.
CREATE TABLE memory_tombstones (
    tenant     TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    change_seq INTEGER NOT NULL,
    id         TEXT    NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, principal, change_seq)
) STRICT, WITHOUT ROWID;

-- PruneChanges removes the oldest tombstones first, across tenants.
CREATE INDEX memory_tombstones_deleted_at ON memory_tombstones (deleted_at);

-- A memory's owner and id are fixed: a change of either would move it
-- between partitions behind the back of both heads. No statement of
-- memgate's sets them; this keeps it so.
CREATE TRIGGER memories_owner_fixed BEFORE UPDATE OF tenant, principal, id ON memories
WHEN OLD.tenant IS NOT NEW.tenant OR OLD.principal IS NOT NEW.principal OR OLD.id IS NOT NEW.id
BEGIN
    SELECT RAISE(ABORT, 'a memory''s tenant, principal and id cannot change');
END;

CREATE TRIGGER memories_change_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO partition_heads (tenant, principal, head) VALUES (NEW.tenant, NEW.principal, 1)
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    UPDATE memories SET change_seq = (SELECT head FROM partition_heads
        WHERE tenant = NEW.tenant AND principal = NEW.principal)
        WHERE seq = NEW.seq;
END;

-- Any update counts, whatever the columns (a column added later included),
-- except the one that stamps change_seq: the UPDATE inside these triggers
-- changes change_seq, so the WHEN clause is false for it and it does not
-- fire this trigger again (nor would it with recursive_triggers on). That
-- inner UPDATE sets change_seq only: version and updated_at are the
-- application's and stay as it wrote them, and the populations triggers
-- (UPDATE OF tenant, principal, kind, status) do not fire.
CREATE TRIGGER memories_change_update AFTER UPDATE ON memories
WHEN NEW.change_seq IS OLD.change_seq
BEGIN
    INSERT INTO partition_heads (tenant, principal, head) VALUES (NEW.tenant, NEW.principal, 1)
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    UPDATE memories SET change_seq = (SELECT head FROM partition_heads
        WHERE tenant = NEW.tenant AND principal = NEW.principal)
        WHERE seq = NEW.seq;
END;

-- A delete (Delete, Forget, the sweep, retention eviction) leaves a
-- tombstone. INSERT OR REPLACE on memories would delete without firing this
-- trigger (recursive_triggers is off); memgate never issues one.
CREATE TRIGGER memories_change_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO partition_heads (tenant, principal, head) VALUES (OLD.tenant, OLD.principal, 1)
        ON CONFLICT (tenant, principal) DO UPDATE SET head = head + 1;
    INSERT INTO memory_tombstones (tenant, principal, change_seq, id, deleted_at)
        SELECT OLD.tenant, OLD.principal, head, OLD.id, CAST(unixepoch('subsec') * 1000000 AS INTEGER)
        FROM partition_heads WHERE tenant = OLD.tenant AND principal = OLD.principal;
END;

CREATE TRIGGER memory_tombstones_pruned AFTER DELETE ON memory_tombstones
BEGIN
    UPDATE partition_heads SET pruned = max(pruned, OLD.change_seq)
        WHERE tenant = OLD.tenant AND principal = OLD.principal;
END;

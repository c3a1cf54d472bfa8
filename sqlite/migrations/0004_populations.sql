-- 0004: a live count of every retention population.
--
-- Retention caps count the active and pending memories of one (tenant,
-- principal, kind) on every write. Counting them with COUNT(*) walks the
-- whole population (up to the cap, 10,000 messages by default) each time;
-- this table keeps the count instead, maintained by triggers on every
-- statement that changes memories (insert, status change, delete, forget,
-- sweep, eviction), so no code path can forget to. The triggers' condition,
-- status IN ('active', 'pending'), is the very predicate eviction selects
-- with (populationSQL); a test holds the two equal after random operations.
CREATE TABLE populations (
    tenant    TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    n         INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, kind)
) STRICT, WITHOUT ROWID;

INSERT INTO populations (tenant, principal, kind, n)
    SELECT tenant, principal, kind, COUNT(*) FROM memories
    WHERE status IN ('active', 'pending')
    GROUP BY tenant, principal, kind;

CREATE TRIGGER populations_insert AFTER INSERT ON memories
WHEN NEW.status IN ('active', 'pending')
BEGIN
    INSERT INTO populations (tenant, principal, kind, n) VALUES (NEW.tenant, NEW.principal, NEW.kind, 1)
        ON CONFLICT (tenant, principal, kind) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER populations_delete AFTER DELETE ON memories
WHEN OLD.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE tenant = OLD.tenant AND principal = OLD.principal AND kind = OLD.kind;
END;

CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, kind, status ON memories
WHEN OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE OLD.status IN ('active', 'pending')
          AND tenant = OLD.tenant AND principal = OLD.principal AND kind = OLD.kind;
    INSERT INTO populations (tenant, principal, kind, n)
        SELECT NEW.tenant, NEW.principal, NEW.kind, 1 WHERE NEW.status IN ('active', 'pending')
        ON CONFLICT (tenant, principal, kind) DO UPDATE SET n = n + 1;
END;

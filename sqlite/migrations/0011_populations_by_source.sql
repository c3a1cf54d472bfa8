-- 0011: retention populations are per writer class.
--
-- A population was (tenant, principal, agent, kind): an agent key that
-- wrote tasks principal-wide shared its cap with the person's own tasks and
-- an admin's system tasks, so its flood evicted them. Adding the source
-- makes each source its own population: a writer evicts only memories of
-- the source it writes, which it may claim, and so could itself have
-- superseded (guard: a key supersedes only what it may claim). Same
-- counter and triggers as 0009, with the source in the key; memories never
-- change source, but the update trigger watches it all the same.
DROP TRIGGER populations_insert;
DROP TRIGGER populations_delete;
DROP TRIGGER populations_update;
DROP TABLE populations;
CREATE TABLE populations (
    tenant    TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    agent     TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    source    TEXT    NOT NULL,
    n         INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, agent, kind, source)
) STRICT, WITHOUT ROWID;

INSERT INTO populations (tenant, principal, agent, kind, source, n)
    SELECT tenant, principal, agent, kind, source, COUNT(*) FROM memories
    WHERE status IN ('active', 'pending')
    GROUP BY tenant, principal, agent, kind, source;

CREATE TRIGGER populations_insert AFTER INSERT ON memories
WHEN NEW.status IN ('active', 'pending')
BEGIN
    INSERT INTO populations (tenant, principal, agent, kind, source, n) VALUES (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, NEW.source, 1)
        ON CONFLICT (tenant, principal, agent, kind, source) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER populations_delete AFTER DELETE ON memories
WHEN OLD.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind AND source = OLD.source;
END;

CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, agent, kind, source, status ON memories
WHEN OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending')
BEGIN
    UPDATE populations SET n = n - 1
        WHERE OLD.status IN ('active', 'pending')
          AND tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind AND source = OLD.source;
    INSERT INTO populations (tenant, principal, agent, kind, source, n)
        SELECT NEW.tenant, NEW.principal, NEW.agent, NEW.kind, NEW.source, 1 WHERE NEW.status IN ('active', 'pending')
        ON CONFLICT (tenant, principal, agent, kind, source) DO UPDATE SET n = n + 1;
END;

DROP INDEX memories_retention;
CREATE INDEX memories_retention ON memories (tenant, principal, agent, kind, source, seq, status);

-- 0010: retention populations are per writer class.
--
-- A population was (tenant, principal, agent, kind): an agent key that
-- wrote tasks principal-wide shared its cap with the person's own tasks and
-- an admin's system tasks, so its flood evicted them. Adding the source
-- makes each source its own population: a writer evicts only memories of
-- the source it writes, which it may claim, and so could itself have
-- superseded (guard: a key supersedes only what it may claim). Same
-- counter and triggers as 0008, with the source in the key; memories never
-- change source, but the update trigger watches it all the same.
DROP TRIGGER populations_insert ON memories;
DROP TRIGGER populations_delete ON memories;
DROP TRIGGER populations_update ON memories;
DROP TABLE populations;
CREATE TABLE populations (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    agent     text   NOT NULL,
    kind      text   NOT NULL,
    source    text   NOT NULL,
    n         bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, agent, kind, source)
);
INSERT INTO populations (tenant, principal, agent, kind, source, n)
    SELECT tenant, principal, agent, kind, source, COUNT(*) FROM memories
    WHERE status IN ('active', 'pending')
    GROUP BY tenant, principal, agent, kind, source;

CREATE OR REPLACE FUNCTION memgate_populations() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.status IN ('active', 'pending') THEN
        UPDATE populations SET n = n - 1
            WHERE tenant = OLD.tenant AND principal = OLD.principal AND agent = OLD.agent AND kind = OLD.kind AND source = OLD.source;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('active', 'pending') THEN
        INSERT INTO populations AS p (tenant, principal, agent, kind, source, n) VALUES (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, NEW.source, 1)
            ON CONFLICT (tenant, principal, agent, kind, source) DO UPDATE SET n = p.n + 1;
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
CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, agent, kind, source, status ON memories
    FOR EACH ROW WHEN ((OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending'))
        AND (OLD.tenant, OLD.principal, OLD.agent, OLD.kind, OLD.source, OLD.status) IS DISTINCT FROM (NEW.tenant, NEW.principal, NEW.agent, NEW.kind, NEW.source, NEW.status))
    EXECUTE FUNCTION memgate_populations();

DROP INDEX memories_retention;
CREATE INDEX memories_retention ON memories (tenant, principal, agent, kind, source, seq)
    WHERE status IN ('active', 'pending');

-- 0004: a live count of every retention population.
--
-- Retention caps count the active and pending memories of one (tenant,
-- principal, kind) on every write. Counting them walks the whole population
-- (up to the cap, 10,000 messages by default) each time; this table keeps
-- the count instead, maintained by triggers on every statement that changes
-- memories (insert, status or kind change, delete, forget, sweep, eviction),
-- so no code path can forget to. The triggers' condition, status IN
-- ('active', 'pending'), is the very predicate eviction selects with
-- (populationSQL); a test holds the two equal after random operations.
CREATE TABLE populations (
    tenant    text   NOT NULL,
    principal text   NOT NULL,
    kind      text   NOT NULL,
    n         bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (tenant, principal, kind)
);

CREATE FUNCTION memgate_populations() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.status IN ('active', 'pending') THEN
        UPDATE populations SET n = n - 1
            WHERE tenant = OLD.tenant AND principal = OLD.principal AND kind = OLD.kind;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('active', 'pending') THEN
        INSERT INTO populations AS p (tenant, principal, kind, n) VALUES (NEW.tenant, NEW.principal, NEW.kind, 1)
            ON CONFLICT (tenant, principal, kind) DO UPDATE SET n = p.n + 1;
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
-- Only a change of population or of status moves a row: a fold, feedback or
-- content edit fires nothing.
CREATE TRIGGER populations_update AFTER UPDATE OF tenant, principal, kind, status ON memories
    FOR EACH ROW WHEN ((OLD.status IN ('active', 'pending') OR NEW.status IN ('active', 'pending'))
        AND (OLD.tenant, OLD.principal, OLD.kind, OLD.status) IS DISTINCT FROM (NEW.tenant, NEW.principal, NEW.kind, NEW.status))
    EXECUTE FUNCTION memgate_populations();

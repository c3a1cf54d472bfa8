-- 0002: the audit log.
--
-- Who did what to which memories, when. It holds ids, counts, scores and a
-- hash of the query, never memory content or query text, so it survives
-- forget as the accountability record. seq is the append order (an identity:
-- never reused, never chosen by a statement) and the paging cursor. counts is
-- a JSON object of integers (NULL when empty); memory_ids and scores are
-- arrays (NULL when empty).
CREATE TABLE audit_events (
    tenant       text        NOT NULL,
    seq          bigint      GENERATED ALWAYS AS IDENTITY,
    principal    text        NOT NULL DEFAULT '',
    agent        text        NOT NULL DEFAULT '',
    actor        text        NOT NULL,
    action       text        NOT NULL,
    at           timestamptz NOT NULL,
    recall_id    text        NOT NULL DEFAULT '',
    query_sha256 text        NOT NULL DEFAULT '',
    reason       text        NOT NULL DEFAULT '',
    counts       jsonb       CHECK (counts IS NULL OR jsonb_typeof(counts) = 'object'),
    memory_ids   text[],
    scores       double precision[],
    PRIMARY KEY (tenant, seq),
    CHECK (tenant <> '' AND actor <> '' AND action <> '')
);

-- One principal's log, newest first; one recall's events.
CREATE INDEX audit_events_principal ON audit_events (tenant, principal, seq);
CREATE INDEX audit_events_recall    ON audit_events (tenant, recall_id);

-- The histogram (recalls per hour or day, of a tenant or of one principal)
-- reads one range of one of these.
CREATE INDEX audit_events_action           ON audit_events (tenant, action, at);
CREATE INDEX audit_events_principal_action ON audit_events (tenant, principal, action, at);

-- The events that name a memory, for "what happened to memory X": one row
-- per (event, memory id).
CREATE TABLE audit_refs (
    tenant    text   NOT NULL,
    memory_id text   NOT NULL,
    seq       bigint NOT NULL,
    PRIMARY KEY (tenant, memory_id, seq),
    FOREIGN KEY (tenant, seq) REFERENCES audit_events (tenant, seq)
);

-- Append-only: the log cannot be rewritten through this database, whoever
-- connects. UPDATE, DELETE and TRUNCATE raise (an INSERT ... ON CONFLICT DO
-- UPDATE is an UPDATE and raises too; seq cannot be chosen, so an insert
-- cannot collide with an existing event).
CREATE FUNCTION memgate_audit_append_only() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'audit log is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION memgate_audit_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION memgate_audit_append_only();
CREATE TRIGGER audit_refs_append_only BEFORE UPDATE OR DELETE ON audit_refs
    FOR EACH ROW EXECUTE FUNCTION memgate_audit_append_only();
CREATE TRIGGER audit_refs_no_truncate BEFORE TRUNCATE ON audit_refs
    FOR EACH STATEMENT EXECUTE FUNCTION memgate_audit_append_only();

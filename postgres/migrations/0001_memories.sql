-- 0001: the memories table.
--
-- Every table leads its primary key with tenant, so a Citus deployment can
-- distribute it by tenant (create_distributed_table(..., 'tenant')) with no
-- schema change; see the README for the one exception (keys).
--
-- seq is the insertion order: List pages newest first by seq and its cursor
-- is the last seq of a page. An identity is never reused after a delete, so a
-- row inserted after a page was read can never sort behind that page's
-- cursor. GENERATED ALWAYS: no statement can choose its own seq.
--
-- Times are timestamptz (microseconds, the precision every backend keeps).
-- metadata is json, not jsonb: json keeps the text exactly as written (a
-- number such as 1e5 or 1.50 reads back as written), which the round trip
-- promises; the read gate compares values with json operators. flags is NULL
-- when there are none. embedding_vector is little-endian float32, the same
-- bytes as the SQLite backend, embedding_dim values: stock PostgreSQL, no
-- vector extension (ranking runs in Go over the engine's index).
CREATE TABLE memories (
    tenant             text        NOT NULL,
    id                 text        NOT NULL,
    seq                bigint      GENERATED ALWAYS AS IDENTITY,
    principal          text        NOT NULL,
    agent              text        NOT NULL DEFAULT '',
    conversation       text        NOT NULL DEFAULT '',
    kind               text        NOT NULL,
    source             text        NOT NULL,
    sensitivity        text        NOT NULL,
    status             text        NOT NULL,
    status_reason      text        NOT NULL DEFAULT '',
    content            text        NOT NULL,
    reason             text        NOT NULL DEFAULT '',
    metadata           json,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    expires_at         timestamptz,
    valid_from         timestamptz,
    valid_until        timestamptz,
    version            bigint      NOT NULL,
    supersedes         text        NOT NULL DEFAULT '',
    superseded_by      text        NOT NULL DEFAULT '',
    content_sha256     text        NOT NULL,
    embedding_provider text,
    embedding_model    text,
    embedding_dim      integer,
    embedding_vector   bytea,
    dedup_key          text        NOT NULL DEFAULT '',
    seen_count         bigint      NOT NULL DEFAULT 1 CHECK (seen_count >= 1),
    flags              text[],
    feedback_count     bigint      NOT NULL DEFAULT 0 CHECK (feedback_count >= 0),
    feedback_sum       double precision NOT NULL DEFAULT 0,

    -- IDs are unique per tenant, so a caller in one tenant learns nothing
    -- about another.
    PRIMARY KEY (tenant, id),
    -- Ownership is never empty: a row without an owner could match no scope
    -- or, worse, a careless one.
    CHECK (tenant <> '' AND principal <> '' AND id <> ''),
    -- An embedding is stored whole or not at all.
    CHECK ((embedding_provider IS NULL) = (embedding_vector IS NULL)),
    CHECK (embedding_vector IS NULL OR length(embedding_vector) = 4 * embedding_dim)
);

-- A partition, newest first: List, Get and Forget for one principal.
CREATE INDEX memories_partition ON memories (tenant, principal, seq);

-- A tenant, newest first: tenant-wide (AllPrincipals) listing and counting.
CREATE INDEX memories_tenant ON memories (tenant, seq);

-- Dedup: is there a live memory with this key in this partition and kind?
-- Partial, so memories without a key cost nothing. Queries repeat
-- "dedup_key <> ''" for the planner to use it.
CREATE INDEX memories_dedup ON memories (tenant, principal, kind, dedup_key, seq)
    WHERE dedup_key <> '';

-- Retention: the population a cap counts and evicts from is exactly the rows
-- of this index (active or pending memories of one partition and kind), in
-- insertion order, so eviction reads the oldest first without sorting.
-- Queries repeat the status predicate verbatim for the planner to use it.
CREATE INDEX memories_retention ON memories (tenant, principal, kind, seq)
    WHERE status IN ('active', 'pending');

-- The sweeper works across tenants, oldest expiry first: the one index that
-- does not start with tenant, because its query has no tenant.
CREATE INDEX memories_expiry ON memories (expires_at, seq)
    WHERE expires_at IS NOT NULL;

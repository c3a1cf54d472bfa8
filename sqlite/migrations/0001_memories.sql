-- 0001: the memories table.
--
-- seq is the insertion order: List pages newest first by seq and its cursor is
-- the last seq of a page. AUTOINCREMENT keeps seq from ever being reused after
-- a delete, so a row inserted after a page was read can never sort behind that
-- page's cursor.
--
-- Times are INTEGER unix microseconds, UTC. metadata is a JSON object (NULL
-- when absent). embedding_vector is little-endian float32, embedding_dim values.
CREATE TABLE memories (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant             TEXT    NOT NULL,
    id                 TEXT    NOT NULL,
    principal          TEXT    NOT NULL,
    agent              TEXT    NOT NULL DEFAULT '',
    conversation       TEXT    NOT NULL DEFAULT '',
    kind               TEXT    NOT NULL,
    source             TEXT    NOT NULL,
    sensitivity        TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    status_reason      TEXT    NOT NULL DEFAULT '',
    content            TEXT    NOT NULL,
    reason             TEXT    NOT NULL DEFAULT '',
    metadata           TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    expires_at         INTEGER,
    valid_from         INTEGER,
    valid_until        INTEGER,
    version            INTEGER NOT NULL,
    supersedes         TEXT    NOT NULL DEFAULT '',
    superseded_by      TEXT    NOT NULL DEFAULT '',
    content_sha256     TEXT    NOT NULL,
    embedding_provider TEXT,
    embedding_model    TEXT,
    embedding_dim      INTEGER,
    embedding_vector   BLOB,

    -- IDs are unique per tenant, so a caller in one tenant learns nothing
    -- about another.
    UNIQUE (tenant, id),
    -- Ownership is never empty: a row without an owner could match no scope
    -- or, worse, a careless one.
    CHECK (tenant <> '' AND principal <> '' AND id <> ''),
    -- An embedding is stored whole or not at all.
    CHECK ((embedding_provider IS NULL) = (embedding_vector IS NULL)),
    CHECK (embedding_vector IS NULL OR length(embedding_vector) = 4 * embedding_dim)
) STRICT;

-- A partition, newest first: List, Get and Forget for one principal.
CREATE INDEX memories_partition ON memories (tenant, principal, seq);

-- A tenant, newest first: tenant-wide (AllPrincipals) listing and counting.
CREATE INDEX memories_tenant ON memories (tenant, seq);

-- 0003: API keys.
--
-- A key's secret is never stored: hash is the lower-case hex SHA-256 of it,
-- and authentication looks the key up by that hash, before any tenant is
-- known, hence UNIQUE (hash) across tenants. id is the public identifier
-- (safe to log and to show), unique within its tenant like a memory id, so
-- a caller in one tenant learns nothing about another's keys. tenant leads
-- the primary key: every management query names it.
--
-- role is admin, agent or user; principal and agent are the key's binding
-- ('' when unbound). The checks repeat the rules package auth enforces, so
-- a key that could widen its own scope cannot be stored whoever writes it:
-- a user key is bound to a principal, only agent keys are bound to an agent,
-- admin keys are tenant-wide.
--
-- Times are INTEGER unix microseconds, UTC; revoked_at is NULL while the key
-- is valid.
CREATE TABLE keys (
    tenant     TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    hash       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    principal  TEXT    NOT NULL DEFAULT '',
    agent      TEXT    NOT NULL DEFAULT '',
    name       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    PRIMARY KEY (tenant, id),
    UNIQUE (hash),
    CHECK (tenant <> '' AND id <> '' AND length(hash) = 64),
    CHECK (role IN ('admin', 'agent', 'user')),
    CHECK (role <> 'user' OR principal <> ''),
    CHECK (role <> 'admin' OR principal = ''),
    CHECK (agent = '' OR role = 'agent')
) STRICT, WITHOUT ROWID;

-- 0003: API keys.
--
-- A key's secret is never stored: hash is the lower-case hex SHA-256 of it,
-- and authentication looks the key up by that hash, before any tenant is
-- known, hence UNIQUE (hash) across tenants. (Under Citus this table is a
-- reference table: a unique index without the distribution column cannot
-- be enforced on a distributed one. See the README.) id is the public
-- identifier, unique within its tenant like a memory id; tenant leads the
-- primary key.
--
-- The checks repeat the rules package auth enforces, so a key that could
-- widen its own scope cannot be stored whoever writes it: a user key is
-- bound to a principal, only agent keys are bound to an agent, admin keys
-- are tenant-wide. revoked_at is NULL while the key is valid.
CREATE TABLE keys (
    tenant     text        NOT NULL,
    id         text        NOT NULL,
    hash       text        NOT NULL,
    role       text        NOT NULL,
    principal  text        NOT NULL DEFAULT '',
    agent      text        NOT NULL DEFAULT '',
    name       text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    PRIMARY KEY (tenant, id),
    CONSTRAINT keys_hash_key UNIQUE (hash),
    CHECK (tenant <> '' AND id <> '' AND length(hash) = 64),
    CHECK (role IN ('admin', 'agent', 'user')),
    CHECK (role <> 'user' OR principal <> ''),
    CHECK (role <> 'admin' OR principal = ''),
    CHECK (agent = '' OR role = 'agent')
);

-- ListKeys: a tenant's keys, oldest first.
CREATE INDEX keys_tenant_created ON keys (tenant, created_at, id);

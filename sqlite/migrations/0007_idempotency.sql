-- 0007: idempotency keys, so that a client retrying a remember after a
-- timeout or a crash never stores twice (store.Store.Remember,
-- PruneIdempotency).
--
-- One record per (partition, key): the partition is the memory's tenant,
-- principal, agent and conversation, so a key is only ever looked up where
-- its caller could write and read. request_sha256 tells a retry (same
-- request) from a key reused for another request. memory_id names the
-- memory that stands for the request (the one inserted, or the one it
-- folded into). No content is kept. created_at is the store's clock (unix
-- microseconds), for pruning.
CREATE TABLE idempotency_keys (
    tenant         TEXT    NOT NULL,
    principal      TEXT    NOT NULL,
    agent          TEXT    NOT NULL,
    conversation   TEXT    NOT NULL,
    key            TEXT    NOT NULL,
    request_sha256 TEXT    NOT NULL,
    memory_id      TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant, principal, agent, conversation, key)
) STRICT, WITHOUT ROWID;

-- PruneIdempotency removes the oldest records first, across tenants.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- 0006: idempotency keys, so that a client retrying a remember after a
-- timeout or a crash never stores twice (store.Store.Remember,
-- PruneIdempotency).
--
-- One record per (partition, key): the partition is the memory's tenant,
-- principal, agent and conversation, so a key is only ever looked up where
-- its caller could write and read. request_sha256 tells a retry (same
-- request) from a key reused for another request. memory_id names the
-- memory that stands for the request (the one inserted, or the one it
-- folded into). No content is kept. created_at is the database's clock,
-- for pruning. The tenant leads the primary key, as everywhere.
CREATE TABLE idempotency_keys (
    tenant         text        NOT NULL,
    principal      text        NOT NULL,
    agent          text        NOT NULL,
    conversation   text        NOT NULL,
    key            text        NOT NULL,
    request_sha256 text        NOT NULL,
    memory_id      text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant, principal, agent, conversation, key)
);

-- PruneIdempotency removes the oldest records first, across tenants.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

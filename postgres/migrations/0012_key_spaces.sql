-- 0012: each source is its own key space.
--
-- A key was unique among the active memories of its level, so an agent
-- key's write of a key a person had used superseded the person's memory
-- (and named it in its answer), though the agent may not supersede what it
-- cannot claim, nor see a restricted memory. With the source in the index,
-- a keyed write replaces only the memory of its own source that has the
-- key: a source the writer claims, so a memory it could itself have
-- superseded (as retention populations, 0010). The agent's write of a
-- person's key is a memory of its own beside the person's.
DROP INDEX memories_key;
CREATE UNIQUE INDEX memories_key ON memories (tenant, principal, agent, conversation, key, source)
    WHERE key <> '' AND status = 'active';

-- A duplicate folds only into a memory of its own source (sqlstore
-- dedupSQL), for the same reason: the source joins the dedup index.
DROP INDEX memories_dedup;
CREATE INDEX memories_dedup ON memories (tenant, principal, kind, dedup_key, source, seq)
    WHERE dedup_key <> '';

-- Keyed memories: a caller's own name for a memory (memgate.Memory.Key),
-- unique among the active memories of its level (tenant, principal, agent,
-- conversation). Remembering a key that is there supersedes the memory
-- that has it; the index keeps two active memories from ever sharing one
-- (the store marks the old superseded before it inserts the new), and is
-- how a key is looked up. '' is no key.
ALTER TABLE memories ADD COLUMN key TEXT NOT NULL DEFAULT '' CHECK (length(key) <= 256);

CREATE UNIQUE INDEX memories_key ON memories (tenant, principal, agent, conversation, key)
    WHERE key <> '' AND status = 'active';

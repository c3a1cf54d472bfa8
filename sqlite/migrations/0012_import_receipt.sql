-- 0012: an import's receipt.
--
-- An import stores each memory with the status the write gate gives it
-- and the importing key as created_by and updated_by. What the file said
-- of them is kept beside, never trusted: the line's status, created_by and
-- updated_by ('' when it said nothing, and for every memory not imported).
-- Set once, by the insert; nothing updates them.
ALTER TABLE memories ADD COLUMN imported_status TEXT NOT NULL DEFAULT ''
    CHECK (imported_status IN ('', 'active', 'pending', 'revoked', 'superseded'));
ALTER TABLE memories ADD COLUMN imported_created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN imported_updated_by TEXT NOT NULL DEFAULT '';

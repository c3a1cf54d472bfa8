-- 0016: the audit log's inboxes (issue 27).
--
-- An audit append inserts one row into an inbox, the batch's events as a
-- JSON array, instead of a row per event with five indexes and a ref per
-- memory named: a recall's commit writes a page or two. The store moves the
-- inboxes into audit_events and audit_refs (the drain), oldest row first, in
-- the background and before every read of the log, so a read sees every
-- event appended before it; an event's seq is given as it is drained.
--
-- audit_inbox is in the audit log's file, with the log (this migration may
-- run before the log's tables have moved there, for a new database, or
-- after, and the inbox belongs with them either way): a recall's append
-- writes that file only, and leaves the readers' cache of memories valid.
CREATE TABLE audit.audit_inbox (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    events TEXT    NOT NULL,
    -- at: the commit's stamp (unix microseconds, taken under the write
    -- lock, so stamps follow commits); the drain moves rows in its order.
    at     INTEGER NOT NULL,
    -- origin: the row of audit_write_inbox this one was moved from.
    origin INTEGER
) STRICT;
CREATE UNIQUE INDEX audit.audit_inbox_origin ON audit_inbox (origin) WHERE origin IS NOT NULL;

-- audit_write_inbox is beside the memories: a write's events go in the
-- write's own transaction, in the same file, so the two commit together
-- (a transaction over both files commits each file atomically but not both
-- as one). The drain first copies its rows into audit_inbox (naming each
-- row's origin, in a transaction of the audit file), then deletes them here
-- (one of this file), and drains an audit_inbox row only once its origin
-- is gone: a crash between the steps repeats a copy, which the unique
-- origin skips, and never loses or doubles an event.
CREATE TABLE audit_write_inbox (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    events TEXT    NOT NULL,
    at     INTEGER NOT NULL
) STRICT;

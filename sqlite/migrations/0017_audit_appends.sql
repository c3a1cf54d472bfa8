-- 0017: the audit inbox's own file (issue 27).
--
-- A recall's audit append goes to a file of its own beside the database
-- (sqlite.InboxPath, table audit_appends, which the appender creates),
-- written by a connection of its own, so that it never waits for the
-- writer while a drain holds it. audit_drained is the drain's mark: the
-- last seq of audit_appends moved into the log, written in the same
-- transaction as the events it moved (sqlite/inbox.go). An older memgate
-- would not read the appends: this version keeps it from opening the
-- database. Open also creates the table where a backup (whose one file
-- holds the log without it) lacks it.
CREATE TABLE IF NOT EXISTS audit.audit_drained (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    appends INTEGER NOT NULL
) STRICT;

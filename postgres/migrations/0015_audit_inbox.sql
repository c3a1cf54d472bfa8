-- 0015: the audit log's inbox (issue 27).
--
-- An audit append inserts one row here, the batch's events as a JSON array
-- (text: nothing parses it on the way in), instead of a row per event with
-- four indexes and a ref per memory named. The store moves the inbox into
-- audit_events and audit_refs (the drain, under an advisory lock so that
-- replicas take turns and seqs follow the inbox's order), oldest row first,
-- in the background and before every read of the log, so a read sees every
-- event appended before it; an event's seq is given as it is drained.
CREATE TABLE audit_inbox (
    seq    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    events text   NOT NULL,
    -- at: when the append committed (unix microseconds), for the record;
    -- the drain follows seq.
    at     bigint NOT NULL
);

-- 0014: forget and delete leave no identifier behind.
--
-- The audit log stays append-only with one exception, for Forget. An event
-- of a forgotten person takes the person's pseudonym in place of the
-- principal (once), and a pseudonym in place of its agent (once: a keyed
-- hash, "forgotten:…", store.AgentPseudonym); every other column stays.
-- An event already under a pseudonym (forgotten before this version) may
-- still take its agent's, so forgetting the person again clears it.
DROP TRIGGER audit_events_no_update;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
WHEN NOT (NEW.principal LIKE 'forgotten:%'
    AND (NEW.principal IS OLD.principal OR OLD.principal NOT LIKE 'forgotten:%')
    AND (NEW.agent IS OLD.agent OR (NEW.agent LIKE 'forgotten:%' AND OLD.agent <> '' AND OLD.agent NOT LIKE 'forgotten:%'))
    AND NEW.seq IS OLD.seq AND NEW.tenant IS OLD.tenant AND NEW.actor IS OLD.actor
    AND NEW.action IS OLD.action AND NEW.at IS OLD.at AND NEW.recall_id IS OLD.recall_id
    AND NEW.query_sha256 IS OLD.query_sha256 AND NEW.reason IS OLD.reason AND NEW.counts IS OLD.counts
    AND NEW.memory_ids IS OLD.memory_ids AND NEW.scores IS OLD.scores AND NEW.content_sha256 IS OLD.content_sha256)
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END;

-- Deleting a memory deletes the idempotency records that name it (their
-- key and request hash would outlive it): found by memory id.
CREATE INDEX idempotency_keys_memory ON idempotency_keys (tenant, memory_id);

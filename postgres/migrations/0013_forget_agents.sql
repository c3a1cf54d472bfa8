-- 0013: forget and delete leave no identifier behind.
--
-- The audit log stays append-only with one exception, for Forget. An event
-- of a forgotten person takes the person's pseudonym in place of the
-- principal (once), and a pseudonym in place of its agent (once: a keyed
-- hash, "forgotten:…", store.AgentPseudonym); every other column stays.
-- An event already under a pseudonym (forgotten before this version) may
-- still take its agent's, so forgetting the person again clears it.
CREATE OR REPLACE FUNCTION memgate_audit_events_append_only() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    o audit_events;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.principal LIKE 'forgotten:%'
        AND (NEW.principal IS NOT DISTINCT FROM OLD.principal OR OLD.principal NOT LIKE 'forgotten:%')
        AND (NEW.agent IS NOT DISTINCT FROM OLD.agent
            OR (NEW.agent LIKE 'forgotten:%' AND OLD.agent <> '' AND OLD.agent NOT LIKE 'forgotten:%')) THEN
        o := OLD;
        o.principal := NEW.principal;
        o.agent := NEW.agent;
        IF o IS NOT DISTINCT FROM NEW THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'audit log is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;

-- Deleting a memory deletes the idempotency records that name it (their
-- key and request hash would outlive it): found by memory id.
CREATE INDEX idempotency_keys_memory ON idempotency_keys (tenant, memory_id);

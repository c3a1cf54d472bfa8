-- 0012: reserved for another branch's migration (issue 26); a no-op here
-- so that versions run without a gap. Drop this file when that branch's
-- 0012 is merged.
SELECT 1;

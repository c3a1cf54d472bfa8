-- 0005: the indexes of the audit histogram (how many recalls per hour or
-- day, of a tenant or of one principal).
--
-- AuditHistogram counts the events of one action in a time range, grouped
-- by bucket of at. Each query reads one range of one of these indexes,
-- which hold every column it needs (covering: the table is not read), so
-- the cost is the number of events in the range, not the size of the log.
-- Without them the count walks the tenant's or the principal's whole log
-- (audit_events_tenant and audit_events_principal are ordered by seq, not
-- by action and time).
CREATE INDEX audit_events_action           ON audit_events (tenant, action, at);
CREATE INDEX audit_events_principal_action ON audit_events (tenant, principal, action, at);

-- 0007: embedder calibrations (store.Store.Calibration, PutCalibration):
-- each embedder model's embedding of the probe set (package rank), made
-- once and shared by every replica, so that all calibrate a model alike.
-- A calibration belongs to the model, not to a tenant, and holds no one's
-- data: the probes are fixed texts. It is the one table besides
-- schema_migrations whose key does not lead with tenant (for Citus, a
-- reference table). vectors is probes × dim float32 values, little-endian,
-- back to back.
CREATE TABLE embedder_calibrations (
    provider      text        NOT NULL,
    model         text        NOT NULL,
    dim           integer     NOT NULL,
    probe_version text        NOT NULL,
    vectors       bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (provider, model, dim, probe_version)
);

-- 0008: embedder calibrations (store.Store.Calibration, PutCalibration):
-- each embedder model's embedding of the probe set (package rank), made
-- once and shared by every process over the database, so that all
-- calibrate a model alike. A calibration belongs to the model, not to a
-- tenant, and holds no one's data: the probes are fixed texts. vectors is
-- probes × dim float32 values, little-endian, back to back.
CREATE TABLE embedder_calibrations (
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    dim           INTEGER NOT NULL,
    probe_version TEXT    NOT NULL,
    vectors       BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (provider, model, dim, probe_version)
) STRICT, WITHOUT ROWID;

-- Index jobs record the process running them (host, PID and the PID's start
-- time, plus a heartbeat for other hosts), so a job whose process was killed
-- is recognised and marked 'abandoned' instead of staying 'running' forever,
-- and the job that resumed or replaced it (superseded_by). SQLite cannot
-- change a CHECK constraint in place, so jobs and batches are rebuilt; the
-- batches' foreign key follows the rename.

-- +goose Up
CREATE TABLE jobs_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id       TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'abandoned')),
    started       TEXT NOT NULL,
    finished      TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    chunks        INTEGER NOT NULL DEFAULT 0,
    embedded      INTEGER NOT NULL DEFAULT 0,
    upserted      INTEGER NOT NULL DEFAULT 0,
    deleted       INTEGER NOT NULL DEFAULT 0,
    host          TEXT NOT NULL DEFAULT '',
    pid           INTEGER NOT NULL DEFAULT 0,
    pid_start     INTEGER NOT NULL DEFAULT 0,
    heartbeat     TEXT NOT NULL DEFAULT '',
    superseded_by INTEGER NOT NULL DEFAULT 0
);
INSERT INTO jobs_new (id, book_id, version, status, started, finished, error, chunks, embedded, upserted, deleted)
    SELECT id, book_id, version, status, started, finished, error, chunks, embedded, upserted, deleted FROM jobs;
CREATE TABLE batches_new (
    job_id    INTEGER NOT NULL REFERENCES jobs_new (id) ON DELETE CASCADE,
    n         INTEGER NOT NULL,
    status    TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    attempts  INTEGER NOT NULL DEFAULT 0,
    error     TEXT NOT NULL DEFAULT '',
    chunk_ids TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (job_id, n)
);
INSERT INTO batches_new SELECT job_id, n, status, attempts, error, chunk_ids FROM batches;
DROP TABLE batches;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
ALTER TABLE batches_new RENAME TO batches;
CREATE INDEX jobs_book ON jobs (book_id, version);
CREATE INDEX jobs_running ON jobs (status) WHERE status = 'running';

-- +goose Down
CREATE TABLE jobs_old (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id  TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    version  INTEGER NOT NULL,
    status   TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    started  TEXT NOT NULL,
    finished TEXT NOT NULL DEFAULT '',
    error    TEXT NOT NULL DEFAULT '',
    chunks   INTEGER NOT NULL DEFAULT 0,
    embedded INTEGER NOT NULL DEFAULT 0,
    upserted INTEGER NOT NULL DEFAULT 0,
    deleted  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO jobs_old (id, book_id, version, status, started, finished, error, chunks, embedded, upserted, deleted)
    SELECT id, book_id, version, CASE status WHEN 'abandoned' THEN 'failed' ELSE status END,
        started, finished, error, chunks, embedded, upserted, deleted FROM jobs;
CREATE TABLE batches_old (
    job_id    INTEGER NOT NULL REFERENCES jobs_old (id) ON DELETE CASCADE,
    n         INTEGER NOT NULL,
    status    TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    attempts  INTEGER NOT NULL DEFAULT 0,
    error     TEXT NOT NULL DEFAULT '',
    chunk_ids TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (job_id, n)
);
INSERT INTO batches_old SELECT job_id, n, status, attempts, error, chunk_ids FROM batches;
DROP TABLE batches;
DROP TABLE jobs;
ALTER TABLE jobs_old RENAME TO jobs;
ALTER TABLE batches_old RENAME TO batches;
CREATE INDEX jobs_book ON jobs (book_id, version);

-- job_queue is the shared queue of index jobs: every process that runs
-- index jobs (serve, worker, the CLI) claims rows from it with a lease it
-- renews while the build runs, so a job queued on one server runs on any
-- worker, a cancel requested anywhere reaches the worker holding the job,
-- and a job whose worker died (lease expired, or its process gone) is
-- claimed again and resumes from its last completed batch. Times are Unix
-- milliseconds (BIGINT) and flags integers, so this file is valid SQL for
-- both SQLite and PostgreSQL. job_id is the build record (jobs.id) of the
-- newest attempt, once it ended.

-- +goose Up
CREATE TABLE job_queue (
    handle       TEXT PRIMARY KEY,
    tenant       TEXT NOT NULL,
    book_id      TEXT NOT NULL,
    title        TEXT NOT NULL DEFAULT '',
    groups       TEXT NOT NULL DEFAULT '[]',
    path         TEXT NOT NULL,
    resume       INTEGER NOT NULL DEFAULT 0,
    owned        INTEGER NOT NULL DEFAULT 0,
    only_worker  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    cancel       INTEGER NOT NULL DEFAULT 0,
    worker       TEXT NOT NULL DEFAULT '',
    worker_host  TEXT NOT NULL DEFAULT '',
    worker_pid   INTEGER NOT NULL DEFAULT 0,
    worker_start BIGINT NOT NULL DEFAULT 0,
    lease_until  BIGINT NOT NULL DEFAULT 0,
    heartbeat    BIGINT NOT NULL DEFAULT 0,
    attempts     INTEGER NOT NULL DEFAULT 0,
    job_id       BIGINT NOT NULL DEFAULT 0,
    version      INTEGER NOT NULL DEFAULT 0,
    chunks       INTEGER NOT NULL DEFAULT 0,
    embedded     INTEGER NOT NULL DEFAULT 0,
    upserted     INTEGER NOT NULL DEFAULT 0,
    deleted      INTEGER NOT NULL DEFAULT 0,
    error        TEXT NOT NULL DEFAULT '',
    queued       BIGINT NOT NULL,
    started      BIGINT NOT NULL DEFAULT 0,
    finished     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX job_queue_status ON job_queue (status, queued);
CREATE INDEX job_queue_book ON job_queue (book_id);

-- +goose Down
DROP TABLE job_queue;

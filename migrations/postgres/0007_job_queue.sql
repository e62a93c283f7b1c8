-- PostgreSQL edition of sqlite/0007_job_queue.sql: the same shared queue of
-- index jobs (the table is written in SQL both databases take), and the
-- notifications that wake other processes at once instead of at their next
-- poll (index/pgnotify): citebook_changes with the generation when a
-- book's switch or deletion is logged, citebook_jobs when a job is queued
-- or handed back, or a cancel is requested. NOTIFY is sent at commit, so a listener that hears it
-- finds the change.

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

-- +goose StatementBegin
CREATE FUNCTION citebook_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('citebook_changes', NEW.gen::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER changes_notify AFTER INSERT ON changes
    FOR EACH ROW EXECUTE FUNCTION citebook_notify_change();

-- +goose StatementBegin
CREATE FUNCTION citebook_notify_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 'queued' OR (TG_OP = 'UPDATE' AND NEW.cancel = 1 AND OLD.cancel = 0) THEN
        PERFORM pg_notify('citebook_jobs', '');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER job_queue_notify AFTER INSERT OR UPDATE OF status, cancel ON job_queue
    FOR EACH ROW EXECUTE FUNCTION citebook_notify_job();

-- +goose Down
DROP TRIGGER job_queue_notify ON job_queue;
DROP FUNCTION citebook_notify_job();
DROP TRIGGER changes_notify ON changes;
DROP FUNCTION citebook_notify_change();
DROP TABLE job_queue;

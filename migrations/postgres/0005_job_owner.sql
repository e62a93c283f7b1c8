-- PostgreSQL edition of sqlite/0005_job_owner.sql: the process running a
-- job (host, PID, the PID's start time, a heartbeat), the job that
-- superseded it, and the abandoned flag (a boolean here).

-- +goose Up
ALTER TABLE jobs ADD COLUMN host TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN pid_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN heartbeat TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN superseded_by BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN abandoned BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX jobs_status ON jobs (status);

-- +goose Down
DROP INDEX jobs_status;
ALTER TABLE jobs DROP COLUMN abandoned;
ALTER TABLE jobs DROP COLUMN superseded_by;
ALTER TABLE jobs DROP COLUMN heartbeat;
ALTER TABLE jobs DROP COLUMN pid_start;
ALTER TABLE jobs DROP COLUMN pid;
ALTER TABLE jobs DROP COLUMN host;

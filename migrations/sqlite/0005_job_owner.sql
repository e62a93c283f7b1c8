-- Index jobs record the process running them (host, PID and the PID's start
-- time, plus a heartbeat for other hosts), so a job whose process was killed
-- is recognised and marked abandoned instead of staying 'running' forever,
-- and the job that resumed or replaced it (superseded_by). An abandoned job
-- is stored as status 'failed' with abandoned = 1: columns are only added,
-- never the table rebuilt, so columns other migrations add to jobs are safe.

-- +goose Up
ALTER TABLE jobs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN heartbeat TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN superseded_by INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_status ON jobs (status);

-- +goose Down
DROP INDEX jobs_status;
ALTER TABLE jobs DROP COLUMN abandoned;
ALTER TABLE jobs DROP COLUMN superseded_by;
ALTER TABLE jobs DROP COLUMN heartbeat;
ALTER TABLE jobs DROP COLUMN pid_start;
ALTER TABLE jobs DROP COLUMN pid;
ALTER TABLE jobs DROP COLUMN host;

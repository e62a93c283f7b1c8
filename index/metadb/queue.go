package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

// The shared queue of index jobs (index.Queue, migration 0007_job_queue):
// every process of a library — servers, workers and the CLI — takes its
// jobs from here.
//
// A claim is one transaction that picks the next job and leases it to the
// claiming worker. On PostgreSQL the candidate rows are read with SELECT …
// FOR UPDATE SKIP LOCKED, so claimers never wait on each other's rows, and
// the transaction first takes a transaction-scoped advisory lock
// (dialect.claimLock) so the fairness counts (running jobs per tenant,
// books being built) are never read by two claimers at once — without it
// two workers could both start the same book. On SQLite the transaction
// takes the database's write lock up front (BEGIN IMMEDIATE), which
// serialises claims the same way.

var _ index.Queue = (*DB)(nil)

// keepEnded is how long ended jobs stay in the queue; the build records
// (jobs) keep the history after that.
const keepEnded = 7 * 24 * time.Hour

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const queueCols = `handle, tenant, book_id, title, groups, path, resume, owned, only_worker, status, cancel, worker,
	worker_host, worker_pid, worker_start, lease_until, heartbeat, attempts, job_id, version, chunks, embedded,
	upserted, deleted, error, queued, started, finished`

func scanQueued(sc scanner) (index.QueueEntry, error) {
	var e index.QueueEntry
	var groups, status string
	var resume, owned, cancel int
	var lease, hb, queued, started, finished int64
	j := &e.Job
	err := sc.Scan(&j.Handle, &j.Tenant, &j.BookID, &e.Input.Title, &groups, &e.Input.Path, &resume, &owned, &e.Only,
		&status, &cancel, &e.Worker, &j.Owner.Host, &j.Owner.PID, &j.Owner.Start, &lease, &hb, &e.Attempts,
		&j.ID, &j.Version, &j.Chunks, &j.Embedded, &j.Upserted, &j.Deleted, &j.Error, &queued, &started, &finished)
	if err != nil {
		return e, err
	}
	j.Status = citebook.JobStatus(status)
	e.Cancel = cancel != 0
	e.Lease, j.Heartbeat = fromMS(lease), fromMS(hb)
	j.Queued, j.Started, j.Finished = fromMS(queued), fromMS(started), fromMS(finished)
	e.Input.BookID, e.Input.Tenant = j.BookID, j.Tenant
	e.Input.Resume, e.Input.Owned = resume != 0, owned != 0
	if err := json.Unmarshal([]byte(groups), &e.Input.Groups); err != nil {
		return e, fmt.Errorf("job %s groups: %w", j.Handle, err)
	}
	return e, nil
}

// Enqueue adds a job, queued or (with e.Worker set) already held.
func (d *DB) Enqueue(ctx context.Context, e index.QueueEntry, maxQueued int) error {
	now := time.Now()
	groups, _ := json.Marshal(e.Input.Groups)
	if e.Input.Groups == nil {
		groups = []byte("[]")
	}
	status, lease, started := string(citebook.JobQueued), int64(0), int64(0)
	if e.Worker != "" {
		status, lease, started = string(citebook.JobRunning), ms(e.Lease), ms(now)
	}
	return d.inTx(ctx, "queue a job", func(tx *txn) error {
		if maxQueued > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM job_queue WHERE status = 'queued'`).Scan(&n); err != nil {
				return err
			}
			if n >= maxQueued {
				return citebook.Errorf(citebook.EUNAVAILABLE, "too many index jobs queued; try again later")
			}
		}
		o := e.Job.Owner
		_, err := tx.ExecContext(ctx, `INSERT INTO job_queue (handle, tenant, book_id, title, groups, path, resume,
			owned, only_worker, status, worker, worker_host, worker_pid, worker_start, lease_until, heartbeat, attempts,
			queued, started) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			e.Job.Handle, e.Input.Tenant, e.Input.BookID, e.Input.Title, string(groups), e.Input.Path, b2i(e.Input.Resume),
			b2i(e.Input.Owned), e.Only, status, e.Worker, o.Host, o.PID, o.Start, lease, started, b2i(e.Worker != ""),
			ms(now), started)
		return err
	})
}

// Claim leases the next job to c.Worker, or returns nil.
func (d *DB) Claim(ctx context.Context, c index.Claim) (*index.QueueEntry, error) {
	now := time.Now()
	nowMS := ms(now)
	// A cheap look first, outside any transaction: idle workers poll, and
	// on SQLite a claim transaction takes the write lock.
	var n int
	err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM job_queue WHERE (status = 'queued' OR
		(status = 'running' AND lease_until < ?)) AND (only_worker = ? OR (only_worker = '' AND ?))`, nowMS, c.Worker.ID, !c.Own).Scan(&n)
	if err != nil || n == 0 {
		return nil, unavailable(err, "job queue: look for jobs")
	}
	var got *index.QueueEntry
	err = d.inTx(ctx, "claim a job", func(tx *txn) error {
		if d.d.claimLock != "" {
			if _, err := tx.ExecContext(ctx, d.d.claimLock); err != nil {
				return err
			}
		}
		lock := d.d.skipLocked
		rows, err := tx.QueryContext(ctx, (`SELECT ` + queueCols + ` FROM job_queue WHERE (status = 'queued' OR
			(status = 'running' AND lease_until < ?)) AND (only_worker = ? OR (only_worker = '' AND ?))
			ORDER BY queued, handle LIMIT 200` + lock), nowMS, c.Worker.ID, !c.Own)
		if err != nil {
			return err
		}
		var cands []index.QueueEntry
		for rows.Next() {
			e, err := scanQueued(rows)
			if err != nil {
				rows.Close()
				return err
			}
			cands = append(cands, e)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(cands) == 0 {
			return nil
		}
		busy := map[string]bool{}
		for _, b := range c.Busy {
			busy[b] = true
		}
		running := map[string]int{}
		rows, err = tx.QueryContext(ctx, `SELECT tenant, book_id FROM job_queue WHERE status = 'running' AND lease_until >= ?`, nowMS)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t, b string
			if err := rows.Scan(&t, &b); err != nil {
				rows.Close()
				return err
			}
			running[t]++
			busy[b] = true
		}
		if err := rows.Close(); err != nil {
			return err
		}
		served := map[string]int64{}
		rows, err = tx.QueryContext(ctx, `SELECT tenant, max(started) FROM job_queue WHERE started > 0 GROUP BY tenant`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t string
			var s int64
			if err := rows.Scan(&t, &s); err != nil {
				rows.Close()
				return err
			}
			served[t] = s
		}
		if err := rows.Close(); err != nil {
			return err
		}
		best := -1
		for i, e := range cands {
			if busy[e.Job.BookID] {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			t, bt := e.Job.Tenant, cands[best].Job.Tenant
			if running[t] < running[bt] || running[t] == running[bt] && served[t] < served[bt] {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		e := cands[best]
		// A job taken over from a dead worker resumes its build.
		resume := e.Input.Resume || e.Job.Status == citebook.JobRunning
		o := c.Worker.Owner
		lease := now.Add(c.Lease)
		res, err := tx.ExecContext(ctx, `UPDATE job_queue SET status = 'running', worker = ?, worker_host = ?,
			worker_pid = ?, worker_start = ?, lease_until = ?, heartbeat = ?, started = ?, attempts = attempts + 1,
			resume = ?, job_id = 0 WHERE handle = ? AND (status = 'queued' OR (status = 'running' AND lease_until < ?))`,
			c.Worker.ID, o.Host, o.PID, o.Start, ms(lease), nowMS, nowMS, b2i(resume), e.Job.Handle, nowMS)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		e.Job.Status, e.Job.Owner, e.Job.Started, e.Job.Heartbeat = citebook.JobRunning, o, now.UTC(), now.UTC()
		e.Worker, e.Lease, e.Input.Resume, e.Job.ID = c.Worker.ID, lease, resume, 0
		e.Attempts++
		got = &e
		return nil
	})
	return got, err
}

// Renew extends w's lease and reports a cancel request or a lost job.
func (d *DB) Renew(ctx context.Context, handle string, w index.Worker, lease time.Duration) (index.Renewal, error) {
	now := time.Now()
	var cancel int
	err := d.db.QueryRowContext(ctx, `UPDATE job_queue SET lease_until = ?, heartbeat = ?
		WHERE handle = ? AND worker = ? AND status = 'running' RETURNING cancel`,
		ms(now.Add(lease)), ms(now), handle, w.ID).Scan(&cancel)
	if errors.Is(err, sql.ErrNoRows) {
		return index.Renewal{Lost: true}, nil
	}
	if err != nil {
		return index.Renewal{}, unavailable(err, "job queue: renew a lease")
	}
	return index.Renewal{Cancel: cancel != 0}, nil
}

// Finish records the end of a job w holds.
func (d *DB) Finish(ctx context.Context, handle string, w index.Worker, j index.Job) error {
	now := time.Now()
	fin := j.Finished
	if fin.IsZero() {
		fin = now
	}
	return d.inTx(ctx, "record a job's end", func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE job_queue SET status = ?, error = ?, finished = ?, job_id = ?,
			version = ?, chunks = ?, embedded = ?, upserted = ?, deleted = ?, lease_until = 0
			WHERE handle = ? AND worker = ? AND status = 'running'`,
			string(j.Status), j.Error, ms(fin), j.ID, j.Version, j.Chunks, j.Embedded, j.Upserted, j.Deleted, handle, w.ID)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM job_queue WHERE status IN ('completed', 'failed', 'cancelled')
			AND finished < ?`, ms(now.Add(-keepEnded)))
		return err
	})
}

// Link records the build record of the job w runs.
func (d *DB) Link(ctx context.Context, handle string, w index.Worker, jobID int64) error {
	_, err := d.db.ExecContext(ctx, `UPDATE job_queue SET job_id = ? WHERE handle = ? AND worker = ?`, jobID, handle, w.ID)
	return unavailable(err, "job queue: link a job to its build")
}

// Release puts a job w holds back in the queue, to be resumed.
func (d *DB) Release(ctx context.Context, handle string, w index.Worker) error {
	_, err := d.db.ExecContext(ctx, `UPDATE job_queue SET status = 'queued', worker = '', lease_until = 0,
		resume = 1 WHERE handle = ? AND worker = ? AND status = 'running'`, handle, w.ID)
	return unavailable(err, "job queue: release a job")
}

// Expire ends the lease of a running job held by the dead worker w.
func (d *DB) Expire(ctx context.Context, handle string, w string) error {
	_, err := d.db.ExecContext(ctx, `UPDATE job_queue SET lease_until = 0
		WHERE handle = ? AND worker = ? AND status = 'running'`, handle, w)
	return unavailable(err, "job queue: expire a lease")
}

// RequestCancel cancels a queued job or flags a running one.
func (d *DB) RequestCancel(ctx context.Context, handle string) (index.QueueEntry, error) {
	var e index.QueueEntry
	err := d.inTx(ctx, "cancel a job", func(tx *txn) error {
		var err error
		e, err = scanQueued(tx.QueryRowContext(ctx, `SELECT `+queueCols+` FROM job_queue WHERE handle = ?`, handle))
		if errors.Is(err, sql.ErrNoRows) {
			return citebook.Errorf(citebook.ENOTFOUND, "no job %q", handle)
		} else if err != nil {
			return err
		}
		switch e.Job.Status {
		case citebook.JobQueued:
			// Only while still queued: a claim may have committed since
			// the read (PostgreSQL reads committed rows), and a running
			// job is flagged instead, for its worker to stop.
			now := time.Now()
			res, err := tx.ExecContext(ctx, `UPDATE job_queue SET status = 'cancelled', cancel = 1, error = ?, finished = ?
				WHERE handle = ? AND status = 'queued'`, "cancelled", ms(now), handle)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				e.Job.Status, e.Job.Error, e.Job.Finished, e.Cancel = citebook.JobCancelled, "cancelled", now.UTC(), true
				return err
			}
			e.Job.Status = citebook.JobRunning
			fallthrough
		case citebook.JobRunning:
			e.Cancel = true
			_, err = tx.ExecContext(ctx, `UPDATE job_queue SET cancel = 1 WHERE handle = ? AND status = 'running'`, handle)
		default:
			return citebook.Errorf(citebook.ECONFLICT, "job %s already ended (%s)", handle, e.Job.Status)
		}
		return err
	})
	return e, err
}

// Entry returns one job.
func (d *DB) Entry(ctx context.Context, handle string) (index.QueueEntry, error) {
	return queryOne(ctx, d.db, "job queue: read a job", func() error { return citebook.Errorf(citebook.ENOTFOUND, "no job %q", handle) },
		scanQueued, `SELECT `+queueCols+` FROM job_queue WHERE handle = ?`, handle)
}

// Entries lists one book's jobs, or every queued and running job.
func (d *DB) Entries(ctx context.Context, bookID string) ([]index.QueueEntry, error) {
	query, args := `SELECT `+queueCols+` FROM job_queue WHERE status IN ('queued', 'running') ORDER BY queued DESC, handle DESC`, []any{}
	if bookID != "" {
		query, args = `SELECT `+queueCols+` FROM job_queue WHERE book_id = ? ORDER BY queued DESC, handle DESC`, []any{bookID}
	}
	return d.entries(ctx, query, args...)
}

// Unrecorded lists the failed and cancelled jobs that left no build
// record, newest first (all books' when bookID is ""): a book whose first
// build failed is removed with its records, and a build that failed before
// it was recorded (an unreadable file) has none, so the queue is the only
// place that says why. An unchanged book's job ends completed with no
// record, as it should: nothing was built.
func (d *DB) Unrecorded(ctx context.Context, bookID string) ([]index.QueueEntry, error) {
	return d.entries(ctx, `SELECT `+queueCols+` FROM job_queue WHERE status IN ('failed', 'cancelled')
		AND (?='' OR book_id=?) AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_queue.job_id)
		ORDER BY queued DESC, handle DESC`, bookID, bookID)
}

func (d *DB) entries(ctx context.Context, query string, args ...any) ([]index.QueueEntry, error) {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err, "job queue: list jobs")
	}
	defer rows.Close()
	var out []index.QueueEntry
	for rows.Next() {
		e, err := scanQueued(rows)
		if err != nil {
			return nil, unavailable(err, "job queue: list jobs")
		}
		out = append(out, e)
	}
	return out, unavailable(rows.Err(), "list jobs")
}

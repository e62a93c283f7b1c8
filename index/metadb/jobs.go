package metadb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

// CreateJob inserts a job and sets its ID.
func (d *DB) CreateJob(ctx context.Context, j *index.Job) error {
	if j.Status == "" {
		j.Status = index.JobRunning
	}
	started := fmtTime(j.Started)
	if started == "" {
		started = now()
		j.Started = parseTime(started)
	}
	if j.Heartbeat.IsZero() {
		j.Heartbeat = j.Started
	}
	status, abandoned := jobStatus(j.Status)
	ocr := ""
	if j.OCR != nil {
		ocr = jsonText(j.OCR)
	}
	err := d.db.QueryRowContext(ctx, `INSERT INTO jobs (book_id, version, status, abandoned, started, finished, error,
		chunks, embedded, upserted, deleted, host, pid, pid_start, heartbeat, superseded_by, ocr)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
		j.BookID, j.Version, status, abandoned, started, fmtTime(j.Finished), text(j.Error),
		j.Chunks, j.Embedded, j.Upserted, j.Deleted, j.Owner.Host, j.Owner.PID, j.Owner.Start,
		fmtTime(j.Heartbeat), j.SupersededBy, ocr).Scan(&j.ID)
	if err != nil && d.d.foreignKey(err) {
		return citebook.Wrap(err, citebook.ENOTFOUND, "book %q not found", j.BookID)
	}
	return unavailable(err, "create job")
}

// UpdateJob saves a job's status, error, counts, finish time and
// superseding job.
func (d *DB) UpdateJob(ctx context.Context, j index.Job) error {
	status, abandoned := jobStatus(j.Status)
	res, err := d.db.ExecContext(ctx, `UPDATE jobs SET status=?, abandoned=?, finished=?, error=?, chunks=?, embedded=?,
		upserted=?, deleted=?, superseded_by=? WHERE id=?`, status, abandoned, fmtTime(j.Finished), text(j.Error),
		j.Chunks, j.Embedded, j.Upserted, j.Deleted, j.SupersededBy, j.ID)
	if err != nil {
		return unavailable(err, "update job")
	}
	return affected(res, "update job", func() error {
		return citebook.Errorf(citebook.ENOTFOUND, "job %d not found", j.ID)
	})
}

// TouchJob records that a running job's process is alive at t.
func (d *DB) TouchJob(ctx context.Context, id int64, t time.Time) error {
	_, err := d.db.ExecContext(ctx, `UPDATE jobs SET heartbeat=? WHERE id=? AND status='running'`, fmtTime(t), id)
	return unavailable(err, "touch job")
}

// jobStatus is how a status is stored: the status column's CHECK predates
// abandoned jobs, which are stored as failed with the abandoned flag (so the
// migration only adds columns).
func jobStatus(s index.JobStatus) (status string, abandoned bool) {
	if s == index.JobAbandoned {
		return string(index.JobFailed), true
	}
	return string(s), false
}

const jobCols = `id, book_id, version, status, abandoned, started, finished, error, chunks, embedded, upserted, deleted,
	host, pid, pid_start, heartbeat, superseded_by, ocr`

func scanJob(sc scanner) (index.Job, error) {
	var j index.Job
	var status, started, finished, heartbeat, ocr string
	var abandoned bool
	err := sc.Scan(&j.ID, &j.BookID, &j.Version, &status, &abandoned, &started, &finished, &j.Error,
		&j.Chunks, &j.Embedded, &j.Upserted, &j.Deleted,
		&j.Owner.Host, &j.Owner.PID, &j.Owner.Start, &heartbeat, &j.SupersededBy, &ocr)
	j.Status = index.JobStatus(status)
	if abandoned {
		j.Status = index.JobAbandoned
	}
	j.Started, j.Finished, j.Heartbeat = parseTime(started), parseTime(finished), parseTime(heartbeat)
	if err == nil && ocr != "" {
		j.OCR = &citebook.OCRReport{}
		err = json.Unmarshal([]byte(ocr), j.OCR)
	}
	return j, err
}

// Job returns one job or an ENOTFOUND error.
func (d *DB) Job(ctx context.Context, id int64) (*index.Job, error) {
	j, err := queryOne(ctx, d.db, "read job", func() error { return citebook.Errorf(citebook.ENOTFOUND, "job %d not found", id) },
		scanJob, `SELECT `+jobCols+` FROM jobs WHERE id=?`, id)
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// Jobs lists jobs, newest first; bookID "" lists every book's.
func (d *DB) Jobs(ctx context.Context, bookID string) ([]index.Job, error) {
	return queryAll(ctx, d.db, "list jobs", scanJob,
		`SELECT `+jobCols+` FROM jobs WHERE ?='' OR book_id=? ORDER BY id DESC`, bookID, bookID)
}

// CreateBatches inserts the planned batches of a job in one transaction.
func (d *DB) CreateBatches(ctx context.Context, bs []index.Batch) error {
	return d.inTx(ctx, "create batches", func(tx *txn) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO batches (job_id, n, status, attempts, error, chunk_ids) VALUES (?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, b := range bs {
			if b.Status == "" {
				b.Status = index.BatchPending
			}
			if b.ChunkIDs == nil {
				b.ChunkIDs = []string{}
			}
			if _, err := stmt.ExecContext(ctx, b.JobID, b.N, string(b.Status), b.Attempts, text(b.Error), jsonText(b.ChunkIDs)); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateBatch saves a batch's status, attempts and error.
func (d *DB) UpdateBatch(ctx context.Context, b index.Batch) error {
	res, err := d.db.ExecContext(ctx, `UPDATE batches SET status=?, attempts=?, error=? WHERE job_id=? AND n=?`,
		string(b.Status), b.Attempts, text(b.Error), b.JobID, b.N)
	if err != nil {
		return unavailable(err, "update batch")
	}
	return affected(res, "update batch", func() error {
		return citebook.Errorf(citebook.ENOTFOUND, "batch %d of job %d not found", b.N, b.JobID)
	})
}

// Batches lists a job's batches in order.
func (d *DB) Batches(ctx context.Context, jobID int64) ([]index.Batch, error) {
	return queryAll(ctx, d.db, "list batches", scanBatch, `SELECT job_id, n, status, attempts, error, chunk_ids
		FROM batches WHERE job_id=? ORDER BY n`, jobID)
}

func scanBatch(sc scanner) (index.Batch, error) {
	var b index.Batch
	var status, ids string
	if err := sc.Scan(&b.JobID, &b.N, &status, &b.Attempts, &b.Error, &ids); err != nil {
		return b, err
	}
	b.Status = index.BatchStatus(status)
	if err := json.Unmarshal([]byte(ids), &b.ChunkIDs); err != nil {
		return b, fmt.Errorf("batch %d of job %d: chunk IDs: %w", b.N, b.JobID, err)
	}
	return b, nil
}

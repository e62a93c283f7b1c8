package index

import (
	"context"
	"fmt"
	"time"

	"github.com/citebook/citebook"
)

// A process that is killed never records that its job stopped, so the job
// would stay "running" forever. Every job records its owner (host, PID and
// the PID's start time) and, while it runs, a heartbeat. A running job is
// dead when its owner is on this host and no longer runs, or, for another
// host (a library on shared storage), when its heartbeat is older than
// jobLease. Dead jobs are marked abandoned by RecoverJobs, which every
// command runs when it opens a library, and by the builder before it builds
// the same book. jobLease is shorter than the job queue's lease
// (RunnerOptions.Lease, 20 s), so a worker on another host that takes over
// a job whose lease ran out finds the dead worker's build stale, not live.
const (
	heartbeatEvery = 5 * time.Second
	jobLease       = 15 * time.Second
)

// RecoverJobs marks abandoned the running jobs (of one book, or of every
// book when bookID is "") whose process is gone, with the reason, and
// fails their unfinished versions so a resume or a new build takes over.
// It returns the jobs it marked.
func RecoverJobs(ctx context.Context, meta Meta, bookID string) ([]Job, error) {
	dead, _, err := recoverJobs(ctx, meta, bookID, ThisProcess(), time.Now().UTC())
	return dead, err
}

// recoverJobs abandons dead running jobs and returns them and the running
// jobs whose process still runs.
func recoverJobs(ctx context.Context, meta Meta, bookID string, self Owner, now time.Time) (dead, live []Job, err error) {
	jobs, err := meta.Jobs(ctx, bookID)
	if err != nil {
		return nil, nil, err
	}
	for _, j := range jobs {
		if j.Status != JobRunning {
			continue
		}
		alive, known := ownerAlive(j.Owner, self)
		if !known {
			alive = now.Sub(j.Heartbeat) < jobLease
		}
		if alive {
			live = append(live, j)
			continue
		}
		if err := abandon(ctx, meta, &j, now, fmt.Sprintf("its process (%s) ended without finishing", j.Owner)); err != nil {
			return dead, live, err
		}
		dead = append(dead, j)
	}
	return dead, live, nil
}

// abandon marks a running job abandoned and, unless the job got as far as
// activating its version, fails that version.
func abandon(ctx context.Context, meta Meta, j *Job, now time.Time, why string) error {
	vs, err := meta.Versions(ctx, j.BookID)
	if err != nil {
		return err
	}
	j.Status, j.Finished = JobAbandoned, now
	j.Error = why + "; `citebook index FILE --resume` continues the build"
	for _, v := range vs {
		if v.Number != j.Version {
			continue
		}
		switch v.Status {
		case citebook.VersionCompleted:
			j.Error = why + fmt.Sprintf(" after version %d was served; `citebook index --verify --repair --book %s` removes what it left",
				j.Version, j.BookID)
		case citebook.VersionFailed:
		default:
			if err := meta.SetVersionStatus(ctx, j.BookID, v.Number, citebook.VersionFailed, "abandoned: "+why); err != nil {
				return err
			}
		}
	}
	return meta.UpdateJob(ctx, *j)
}

// claimBook prepares this process to build a book: dead jobs of the book
// are abandoned, and a job another live process is running refuses the
// build (two builders of one book would undo each other's work). A running
// job of this process is a leftover (the book lock admits one build at a
// time) and is abandoned too.
func (b *Builder) claimBook(ctx context.Context, bookID string) error {
	now := time.Now().UTC()
	self := ThisProcess()
	_, live, err := recoverJobs(ctx, b.meta, bookID, self, now)
	if err != nil {
		return err
	}
	for _, j := range live {
		if j.Owner == self || (b.opt.Owner != nil && j.Owner == *b.opt.Owner) {
			if err := abandon(ctx, b.meta, &j, now, "it stopped without finishing"); err != nil {
				return err
			}
			continue
		}
		return citebook.Errorf(citebook.ECONFLICT, "book %q is being indexed by job %d (%s, started %s); wait for it to end",
			bookID, j.ID, j.Owner, j.Started.Format(time.RFC3339))
	}
	return nil
}

// supersede records that job by resumed or replaced the book's earlier
// unfinished jobs.
func (b *Builder) supersede(ctx context.Context, bookID string, by int64) error {
	jobs, err := b.meta.Jobs(ctx, bookID)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.ID >= by || j.SupersededBy != 0 || (j.Status != JobFailed && j.Status != JobAbandoned) {
			continue
		}
		j.SupersededBy = by
		if err := b.meta.UpdateJob(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

// heartbeat keeps the job's lease fresh until the returned stop is called.
func (b *Builder) heartbeat(ctx context.Context, id int64) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if err := b.meta.TouchJob(ctx, id, now.UTC()); err != nil && ctx.Err() == nil {
					b.log.WarnContext(ctx, "job heartbeat not recorded", "job", id, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

package index

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/citebook/citebook"
)

// Indexer is what a Runner runs: the Builder's Index and Delete.
type Indexer interface {
	Index(ctx context.Context, in BookInput) (*JobResult, error)
	Delete(ctx context.Context, bookID string) error
}

// JobLog is the part of the metadata database a Runner reads: the builds
// recorded there (by this process before a restart, or by another process
// such as the CLI) and the books they belong to.
type JobLog interface {
	Book(ctx context.Context, id string) (*citebook.Book, error)
	Job(ctx context.Context, id int64) (*Job, error)
	Jobs(ctx context.Context, bookID string) ([]Job, error)
}

// RunnerOptions tune a Runner; zero fields take the defaults in
// withDefaults, the one place they are written.
type RunnerOptions struct {
	// Workers is how many jobs run at once in this process (default
	// DefaultWorkers), so one large book never holds the whole queue.
	Workers int
	// QueueOnly makes a runner that queues jobs for other processes and
	// runs none itself (`serve --index-workers 0`); OwnOnly one that runs
	// only the jobs its Run calls queue (the CLI), never other processes'.
	QueueOnly, OwnOnly bool
	// SlowAfter is how long a job may run before it stops holding a worker
	// slot (default 1 min): a huge book then keeps running while the jobs
	// behind it start, up to MaxRunning jobs at once (default 2×Workers).
	SlowAfter  time.Duration
	MaxRunning int
	// Deadline bounds one job from its start (default 30 min); a job past
	// it is cancelled and fails with that reason. Negative means none.
	Deadline time.Duration
	// Grace is how long a cancelled build is given to notice and record its
	// end before the runner reports it and frees its slot (default 10 s).
	Grace time.Duration
	// MaxQueued bounds the shared queue (default 1024); Submit beyond it
	// answers unavailable so clients back off.
	MaxQueued int
	// Lease is how long a claim on a job lasts without renewal (default
	// 20 s, longer than a build record's heartbeat lease so the builder
	// taking over sees the dead one's build as stale): a worker that dies
	// loses its jobs to other workers after it (at once when it ran on
	// this host and its process is gone).
	// RenewEvery (default 1 s) is also how soon a cancel requested by
	// another process reaches the build, and PollEvery (default 500 ms)
	// how often an idle runner looks for jobs other processes queued.
	Lease      time.Duration
	RenewEvery time.Duration
	PollEvery  time.Duration
	Logger     *slog.Logger
}

// DefaultJobDeadline bounds one index job unless configured otherwise.
const DefaultJobDeadline = 30 * time.Minute

// DefaultWorkers is how many index jobs run at once unless configured otherwise.
const DefaultWorkers = 2

func (o RunnerOptions) withDefaults() RunnerOptions {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxRunning < o.Workers {
		o.MaxRunning = 2 * o.Workers
	}
	if o.SlowAfter <= 0 {
		o.SlowAfter = time.Minute
	}
	if o.Deadline == 0 {
		o.Deadline = DefaultJobDeadline
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 1024
	}
	if o.Lease <= 0 {
		o.Lease = 20 * time.Second
	}
	if o.RenewEvery <= 0 {
		o.RenewEvery = min(time.Second, o.Lease/3)
	}
	if o.PollEvery <= 0 {
		o.PollEvery = 500 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Runner runs index jobs from the shared queue (Queue): the server submits
// uploads and re-indexes to it and the CLI runs its books through it, so
// all get the same deadline, cancellation and records, and any process
// running a Runner takes its share of the work. Jobs are picked fairly
// across every process — the tenant with the fewest running jobs first,
// then the tenant served longest ago, oldest job first within it, never
// two builds of one book at once — and a job that has run for SlowAfter no
// longer blocks the ones behind it in this process.
type Runner struct {
	b    Indexer
	log  JobLog
	q    Queue
	opt  RunnerOptions
	lg   *slog.Logger
	self Worker

	ctx  context.Context // cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup // running builds, the scheduler and the lease keeper

	mu      sync.Mutex
	jobs    map[string]*entry // this runner's jobs: Run's, waiting or running, and the ones it claimed
	running []*entry          // builds whose slot is held (not yet reported ended)
	alive   map[string]int    // builds not yet returned, by book
	closed  bool
	wake    chan struct{}
	renew   chan struct{} // renew leases now (a cancel may have been requested)
	warned  time.Time     // when a queue error was last logged
}

// entry is one job this runner runs or waits for.
type entry struct {
	job       Job
	in        BookInput
	res       *JobResult
	err       error
	cancel    context.CancelFunc
	requested bool          // cancelled by a caller, not by the deadline
	lost      bool          // another worker took the job over
	waited    bool          // a Run call waits for it; only this runner runs it
	ended     chan struct{} // closed when the job's status is final
	built     chan struct{} // closed when the build call returned
}

// NewRunner starts a runner on the shared queue q; Close stops it.
func NewRunner(b Indexer, log JobLog, q Queue, opts RunnerOptions) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	var raw [6]byte
	_, _ = rand.Read(raw[:])
	r := &Runner{b: b, log: log, q: q, opt: opts.withDefaults(), ctx: ctx, stop: cancel,
		self: Worker{ID: "w_" + hex.EncodeToString(raw[:]), Owner: ThisProcess()},
		jobs: map[string]*entry{}, alive: map[string]int{}, wake: make(chan struct{}, 1),
		renew: make(chan struct{}, 1)}
	r.lg = r.opt.Logger
	if !r.opt.QueueOnly {
		r.wg.Add(2)
		go r.schedule()
		go r.keepLeases()
	}
	return r
}

// Wake makes the runner look for jobs and renew its leases now: another
// process queued a job or asked to cancel one.
func (r *Runner) Wake() {
	r.poke()
	select {
	case r.renew <- struct{}{}:
	default:
	}
}

// WorkerID names this runner in the queue (`citebook jobs` shows it).
func (r *Runner) WorkerID() string { return r.self.ID }

func newHandle() string {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	return "job_" + hex.EncodeToString(raw[:])
}

// Submit queues a build and returns at once with the queued job; any
// runner sharing the queue may run it.
func (r *Runner) Submit(ctx context.Context, in BookInput) (Job, error) {
	if in.BookID == "" || in.Tenant == "" || in.Path == "" {
		return Job{}, citebook.Errorf(citebook.EINVALID, "a book needs an ID, a tenant and a file")
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return Job{}, citebook.Errorf(citebook.EUNAVAILABLE, "the index queue is shutting down")
	}
	j := Job{Handle: newHandle(), BookID: in.BookID, Tenant: in.Tenant, Status: citebook.JobQueued, Queued: time.Now().UTC()}
	if err := r.q.Enqueue(ctx, QueueEntry{Job: j, Input: in}, r.opt.MaxQueued); err != nil {
		return Job{}, err
	}
	r.poke()
	return j, nil
}

// Run indexes one book through the queue in this process and waits for
// it, the way the CLI indexes: the job is visible to (and cancellable from)
// every process sharing the queue, but only this runner runs it. Cancelling
// ctx (Ctrl-C) cancels the job, which then records its end within the
// grace period.
func (r *Runner) Run(ctx context.Context, in BookInput) (*JobResult, error) {
	if in.BookID == "" || in.Tenant == "" || in.Path == "" {
		return nil, citebook.Errorf(citebook.EINVALID, "a book needs an ID, a tenant and a file")
	}
	if r.opt.QueueOnly {
		return nil, citebook.Errorf(citebook.EINTERNAL, "a queue-only runner runs no jobs")
	}
	e := &entry{in: in, waited: true, ended: make(chan struct{}), built: make(chan struct{}),
		job: Job{Handle: newHandle(), BookID: in.BookID, Tenant: in.Tenant, Status: citebook.JobQueued, Queued: time.Now().UTC()}}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "the index queue is shutting down")
	}
	r.jobs[e.job.Handle] = e
	r.mu.Unlock()
	if err := r.q.Enqueue(ctx, QueueEntry{Job: e.job, Input: in, Only: r.self.ID}, 0); err != nil {
		r.mu.Lock()
		delete(r.jobs, e.job.Handle)
		r.mu.Unlock()
		return nil, err
	}
	r.poke()
	select {
	case <-e.ended:
	case <-ctx.Done():
		_, _ = r.Cancel(context.WithoutCancel(ctx), e.job.Handle)
		<-e.ended
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.jobs, e.job.Handle)
	return e.res, e.err
}

// Job returns a job by handle: one of the queue's, or a recorded build
// ("index-<ID>") from the metadata database.
func (r *Runner) Job(ctx context.Context, handle string) (Job, error) {
	if strings.HasPrefix(handle, "job_") {
		e, err := r.q.Entry(ctx, handle)
		return e.Job, err
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(handle, "index-"), 10, 64)
	if err != nil || !strings.HasPrefix(handle, "index-") {
		return Job{}, citebook.Errorf(citebook.ENOTFOUND, "no job %q", handle)
	}
	rec, err := r.log.Job(ctx, n)
	if err != nil {
		return Job{}, err
	}
	b, err := r.log.Book(ctx, rec.BookID)
	if err != nil {
		return Job{}, err
	}
	out := recorded(*rec)
	out.Tenant = b.Tenant
	return out, nil
}

func recorded(j Job) Job {
	j.Handle = "index-" + strconv.FormatInt(j.ID, 10)
	return j
}

// Jobs returns a book's jobs, newest first: those of the queue, then the
// recorded history they do not already cover.
func (r *Runner) Jobs(ctx context.Context, bookID string) ([]Job, error) {
	es, err := r.q.Entries(ctx, bookID)
	if err != nil {
		return nil, err
	}
	past, err := r.log.Jobs(ctx, bookID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]Job{}
	for _, j := range past {
		byID[j.ID] = j
	}
	var out []Job
	seen := map[int64]bool{}
	for _, e := range es {
		j := e.Job
		if rec, ok := byID[j.ID]; ok && j.ID != 0 {
			seen[j.ID] = true
			// The build record knows best why a build of a dead process
			// ended (abandoned, and what to run next).
			if rec.Status == JobAbandoned && j.Status != citebook.JobQueued {
				j.Status, j.Error = rec.Status, rec.Error
			}
		}
		out = append(out, j)
	}
	for _, j := range past {
		if !seen[j.ID] {
			out = append(out, recorded(j))
		}
	}
	return out, nil
}

// Cancel cancels a queued or running job, wherever it runs. A queued job
// ends at once; a running one is told to stop (in this process at once,
// in another at its next lease renewal) and ends once its build notices
// (or after the grace period). The job is returned as it stands.
func (r *Runner) Cancel(ctx context.Context, handle string) (Job, error) {
	r.mu.Lock()
	if e, ok := r.jobs[handle]; ok && e.job.Status == citebook.JobRunning {
		r.cancelLocked(e)
		j := e.job
		r.mu.Unlock()
		if _, err := r.q.RequestCancel(ctx, handle); err != nil && citebook.ErrorCode(err) != citebook.ECONFLICT {
			r.lg.Warn("cannot record a cancel in the job queue", "job", handle, "err", err)
		}
		return j, nil
	}
	r.mu.Unlock()
	qe, err := r.q.RequestCancel(ctx, handle)
	if err != nil {
		return qe.Job, err
	}
	if qe.Job.Status == citebook.JobCancelled { // it was queued
		r.mu.Lock()
		if e, ok := r.jobs[handle]; ok && e.job.Status == citebook.JobQueued {
			e.requested = true
			e.err = citebook.Errorf(citebook.ECONFLICT, "index job %s was cancelled before it started", handle)
			r.endLocked(e, citebook.JobCancelled, "cancelled")
			close(e.built)
		}
		r.mu.Unlock()
		go r.cleanup(qe.Input, citebook.JobCancelled, nil)
	}
	return qe.Job, nil
}

// cancelLocked cancels the running build of e; callers hold mu.
func (r *Runner) cancelLocked(e *entry) {
	e.requested = true
	if e.cancel != nil {
		e.cancel()
	}
}

// CancelBook cancels the tenant's queued and running jobs of a book, in
// any process, and waits (until ctx ends) for their builds to stop. It
// reports how many jobs it cancelled; the book itself may not exist yet.
func (r *Runner) CancelBook(ctx context.Context, tenant, bookID string) (int, error) {
	es, err := r.q.Entries(ctx, bookID)
	if err != nil {
		return 0, err
	}
	var remote []string
	var waits []chan struct{}
	n := 0
	for _, qe := range es {
		if qe.Job.Tenant != tenant || qe.Job.Status.Ended() {
			continue
		}
		j, err := r.Cancel(ctx, qe.Job.Handle)
		if citebook.ErrorCode(err) == citebook.ECONFLICT {
			continue // it ended meanwhile
		} else if err != nil {
			return n, err
		}
		n++
		if j.Status == citebook.JobRunning {
			remote = append(remote, qe.Job.Handle)
		}
	}
	r.mu.Lock()
	for _, e := range r.jobs {
		if e.in.BookID == bookID && e.job.Tenant == tenant && e.requested && !closed(e.built) {
			waits = append(waits, e.built) // stopping here, maybe cancelled earlier
		}
	}
	r.mu.Unlock()
	stopping := citebook.Errorf(citebook.EUNAVAILABLE, "book %q is still stopping its index job; try again", bookID)
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return n, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "%s", citebook.ErrorMessage(stopping))
		}
	}
	// Jobs running in other processes: their workers see the cancel at
	// their next renewal and record the end.
	for _, h := range remote {
		for {
			e, err := r.q.Entry(ctx, h)
			if err != nil || e.Job.Status.Ended() {
				break
			}
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return n, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "%s", citebook.ErrorMessage(stopping))
			}
		}
	}
	return n, nil
}

// Delete removes a book from every store after cancelling its jobs, so a
// book can be deleted while it is being indexed.
func (r *Runner) Delete(ctx context.Context, tenant, bookID string) error {
	n, err := r.CancelBook(ctx, tenant, bookID)
	if err != nil {
		return err
	}
	err = r.b.Delete(ctx, bookID)
	if n > 0 && citebook.ErrorCode(err) == citebook.ENOTFOUND {
		return nil // the cancelled first build's clean-up removed it already
	}
	return err
}

// Close stops taking jobs and waits for the running ones to stop or ctx to
// expire. Jobs queued by Submit stay queued for other workers (or the next
// start); running ones are stopped and handed back to the queue, so the
// next worker resumes them from their last completed batch. A build cut
// short never replaces the active version.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	var waiting []*entry
	for _, e := range r.jobs {
		if e.job.Status == citebook.JobQueued {
			waiting = append(waiting, e)
		}
	}
	r.mu.Unlock()
	for _, e := range waiting {
		_, _ = r.q.RequestCancel(ctx, e.job.Handle)
		r.mu.Lock()
		if e.job.Status == citebook.JobQueued {
			e.err = citebook.Errorf(citebook.EUNAVAILABLE, "the process stopped before index job %s started; submit it again", e.job.Handle)
			r.endLocked(e, citebook.JobFailed, citebook.ErrorMessage(e.err))
			close(e.built)
		}
		r.mu.Unlock()
	}
	r.stop()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// schedule claims jobs whenever a slot frees up, a job is queued here, a
// running job turns slow, or (PollEvery) another process may have queued
// one.
func (r *Runner) schedule() {
	defer r.wg.Done()
	tick := time.NewTicker(max(min(r.opt.SlowAfter/4, r.opt.PollEvery), 10*time.Millisecond))
	defer tick.Stop()
	for {
		r.dispatch()
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		case <-tick.C:
		}
	}
}

// warn logs a queue error at most every ten seconds (a database outage
// would otherwise log at every poll).
func (r *Runner) warn(msg string, err error) {
	r.mu.Lock()
	quiet := time.Since(r.warned) < 10*time.Second
	if !quiet {
		r.warned = time.Now()
	}
	r.mu.Unlock()
	if !quiet && r.ctx.Err() == nil {
		r.lg.Warn(msg, "err", err)
	}
}

// dispatch claims and starts as many jobs as the slots allow.
func (r *Runner) dispatch() {
	r.reap()
	for {
		r.mu.Lock()
		// busy counts the jobs holding a worker slot; alive every build
		// still running, slow or stopping ones included, which MaxRunning
		// bounds so memory and CPU stay bounded.
		busy, alive := 0, 0
		for _, e := range r.running {
			if time.Since(e.job.Started) < r.opt.SlowAfter {
				busy++
			}
		}
		books := make([]string, 0, len(r.alive))
		for b, n := range r.alive {
			alive += n
			books = append(books, b)
		}
		full := r.closed || busy >= r.opt.Workers || alive >= r.opt.MaxRunning
		r.mu.Unlock()
		if full {
			return
		}
		qe, err := r.q.Claim(r.ctx, Claim{Worker: r.self, Lease: r.opt.Lease, Busy: books, Own: r.opt.OwnOnly})
		if err != nil {
			r.warn("cannot claim index jobs", err)
			return
		}
		if qe == nil {
			return
		}
		r.mu.Lock()
		e, ok := r.jobs[qe.Job.Handle]
		if !ok {
			e = &entry{in: qe.Input, ended: make(chan struct{}), built: make(chan struct{})}
			r.jobs[qe.Job.Handle] = e
		}
		e.in.Resume = qe.Input.Resume
		e.job = qe.Job
		if qe.Attempts > 1 {
			r.lg.Info("index job taken over from a worker that stopped", "job", qe.Job.Handle, "book", qe.Job.BookID,
				"attempt", qe.Attempts)
		}
		if r.closed { // Close began while claiming: hand it back
			delete(r.jobs, qe.Job.Handle)
			r.mu.Unlock()
			_ = r.q.Release(context.WithoutCancel(r.ctx), qe.Job.Handle, r.self)
			return
		}
		r.start(e)
		r.mu.Unlock()
	}
}

// reap frees the jobs of workers on this host whose process is gone, so
// another worker takes them over at once instead of after their lease; a
// job only its dead process could run (the CLI's) is recorded as failed.
func (r *Runner) reap() {
	es, err := r.q.Entries(r.ctx, "")
	if err != nil {
		r.warn("cannot read the job queue", err)
		return
	}
	now := time.Now()
	for _, e := range es {
		if e.Job.Status != citebook.JobRunning || e.Worker == r.self.ID {
			continue
		}
		dead := now.After(e.Lease)
		if alive, known := ownerAlive(e.Job.Owner, r.self.Owner); known && !alive {
			dead = true
		}
		if !dead {
			continue
		}
		switch {
		case e.Only != "":
			j := e.Job
			j.Status = citebook.JobFailed
			j.Error = fmt.Sprintf("its process (%s) ended without finishing; `citebook index FILE --resume` continues the build", e.Job.Owner)
			err = r.q.Finish(r.ctx, e.Job.Handle, Worker{ID: e.Worker}, j)
		case !now.After(e.Lease):
			err = r.q.Expire(r.ctx, e.Job.Handle, e.Worker)
		}
		if err != nil {
			r.warn("cannot free the job of a stopped worker", err)
		}
	}
}

// keepLeases renews the leases of this runner's running jobs, and stops a
// build whose job was cancelled from another process or taken over.
func (r *Runner) keepLeases() {
	defer r.wg.Done()
	t := time.NewTicker(r.opt.RenewEvery)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		case <-r.renew:
		}
		r.mu.Lock()
		var held []*entry
		for _, e := range r.jobs {
			if e.job.Status == citebook.JobRunning && !e.lost {
				held = append(held, e)
			}
		}
		r.mu.Unlock()
		for _, e := range held {
			rn, err := r.q.Renew(r.ctx, e.job.Handle, r.self, r.opt.Lease)
			if err != nil {
				r.warn("cannot renew the lease of an index job", err)
				continue
			}
			r.mu.Lock()
			switch {
			case rn.Lost && e.job.Status == citebook.JobRunning:
				r.lg.Warn("index job lost: its lease ran out and another worker took it over", "job", e.job.Handle, "book", e.in.BookID)
				e.lost = true
				if e.cancel != nil {
					e.cancel()
				}
			case rn.Cancel && !e.requested:
				r.lg.Info("index job cancelled by another process", "job", e.job.Handle, "book", e.in.BookID)
				r.cancelLocked(e)
			}
			r.mu.Unlock()
		}
	}
}

// start runs e; callers hold mu.
func (r *Runner) start(e *entry) {
	r.running = append(r.running, e)
	r.alive[e.in.BookID]++
	if e.job.Started.IsZero() {
		e.job.Started = time.Now().UTC()
	}
	e.job.Status = citebook.JobRunning
	ctx, cancel := r.ctx, context.CancelFunc(func() {})
	if r.opt.Deadline > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.opt.Deadline)
	}
	ctx, cancel2 := context.WithCancel(ctx)
	e.cancel = func() { cancel2(); cancel() }
	handle := e.job.Handle
	e.in.Recorded = func(id int64) {
		r.mu.Lock()
		e.job.ID = id
		r.mu.Unlock()
		if err := r.q.Link(context.WithoutCancel(ctx), handle, r.self, id); err != nil {
			r.lg.Warn("cannot link a queued job to its build record", "job", handle, "build", id, "err", err)
		}
	}
	r.wg.Add(1)
	go r.execute(ctx, e)
}

type outcome struct {
	res *JobResult
	err error
}

// execute runs one build. If the build does not return within Grace of its
// context ending (a parser that does not check the context), the job is
// reported ended and its slot freed; the book stays busy until the build
// really returns.
func (r *Runner) execute(ctx context.Context, e *entry) {
	defer r.wg.Done()
	r.lg.Info("index job started", "job", e.job.Handle, "book", e.in.BookID, "tenant", e.in.Tenant, "worker", r.self.ID)
	outc := make(chan outcome, 1)
	go func() {
		res, err := r.b.Index(ctx, e.in)
		outc <- outcome{res, err}
	}()
	var out outcome
	select {
	case out = <-outc:
		r.finish(ctx, e, out)
		r.built(e)
	case <-ctx.Done():
		select {
		case out = <-outc:
			r.finish(ctx, e, out)
			r.built(e)
		case <-time.After(r.opt.Grace):
			r.finish(ctx, e, outcome{})
			r.lg.Warn("index build did not stop in time; its job is reported ended and the build left to finish",
				"job", e.job.Handle, "book", e.in.BookID)
			go func() { <-outc; r.built(e) }()
		}
	}
}

// finish records a job's end; a build cut short by its context is reported
// as cancelled or past its deadline rather than with the store error it
// happened to hit. A job stopped by shutdown goes back to the queue, and
// one another worker took over is left to it.
func (r *Runner) finish(ctx context.Context, e *entry, out outcome) {
	r.mu.Lock()
	e.res, e.err = out.res, out.err
	if res := out.res; res != nil {
		e.job.ID, e.job.Version, e.job.Chunks = res.JobID, res.Version, res.Chunks
		e.job.Embedded, e.job.Upserted, e.job.Deleted = res.Embedded, res.Upserted, res.Deleted
	}
	r.running = slices.DeleteFunc(r.running, func(x *entry) bool { return x == e })
	status, msg, release := citebook.JobCompleted, "", false
	switch {
	case out.err == nil && out.res != nil:
	case e.requested:
		status, msg = citebook.JobCancelled, "cancelled"
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.ECONFLICT, "index job %s was cancelled", e.job.Handle)
	case e.lost:
		status = citebook.JobFailed
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.EUNAVAILABLE, "index job %s was taken over by another worker", e.job.Handle)
		msg = citebook.ErrorMessage(e.err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status = citebook.JobFailed
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.ETOOLARGE,
			"index job %s ran past its deadline of %s", e.job.Handle, r.opt.Deadline)
		msg = citebook.ErrorMessage(e.err)
	case r.ctx.Err() != nil:
		status = citebook.JobFailed
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.EUNAVAILABLE, "index job %s stopped: shutting down", e.job.Handle)
		msg = citebook.ErrorMessage(e.err)
		release = !e.waited
	default:
		status, msg = citebook.JobFailed, citebook.ErrorMessage(out.err)
	}
	final := e.job
	final.Status, final.Error, final.Finished = status, msg, time.Now().UTC()
	lost := e.lost
	r.mu.Unlock()

	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var err error
	switch {
	case lost:
	case release:
		err = r.q.Release(wctx, e.job.Handle, r.self)
		r.lg.Info("index job handed back to the queue at shutdown; the next worker resumes it", "job", e.job.Handle, "book", e.in.BookID)
	default:
		err = r.q.Finish(wctx, e.job.Handle, r.self, final)
	}
	if err != nil {
		r.lg.Error("cannot record an index job's end in the queue", "job", e.job.Handle, "err", err)
	}

	r.mu.Lock()
	r.endLocked(e, status, msg)
	r.mu.Unlock()
	if status == citebook.JobCompleted {
		r.lg.Info("index job completed", "job", e.job.Handle, "book", e.in.BookID, "version", final.Version, "chunks", final.Chunks)
	} else if !release {
		r.lg.Error("index job ended", "job", e.job.Handle, "book", e.in.BookID, "status", status, "err", e.err)
	}
	r.poke()
}

// endLocked makes e's status final; callers hold mu.
func (r *Runner) endLocked(e *entry, status citebook.JobStatus, msg string) {
	e.job.Status, e.job.Error, e.job.Finished = status, msg, time.Now().UTC()
	close(e.ended)
}

// built marks e's build as returned, freeing its book, and removes what a
// failed first build of an owned file left behind.
func (r *Runner) built(e *entry) {
	r.mu.Lock()
	if r.alive[e.in.BookID]--; r.alive[e.in.BookID] <= 0 {
		delete(r.alive, e.in.BookID)
	}
	close(e.built)
	status, err, lost := e.job.Status, e.err, e.lost
	r.mu.Unlock()
	e.cancel() // releases the deadline's timer
	r.poke()
	if !lost {
		r.cleanup(e.in, status, err)
	}
	r.mu.Lock()
	if !e.waited { // Run removes its own entries
		delete(r.jobs, e.job.Handle)
	}
	r.mu.Unlock()
}

// cleanup removes the book and file of an owned input whose first build was
// cancelled or failed on the input itself (unreadable, past its deadline),
// unless another job of the book is pending. A transient failure (embedder
// down) keeps both so the book can be indexed again.
func (r *Runner) cleanup(in BookInput, status citebook.JobStatus, err error) {
	if !in.Owned {
		return
	}
	switch code := citebook.ErrorCode(err); {
	case status == citebook.JobCompleted:
		return
	case status == citebook.JobCancelled, code == citebook.EINVALID, code == citebook.ETOOLARGE:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if es, err := r.q.Entries(ctx, in.BookID); err != nil ||
		slices.ContainsFunc(es, func(x QueueEntry) bool { return !x.Job.Status.Ended() }) {
		return
	}
	b, berr := r.log.Book(ctx, in.BookID)
	switch {
	case berr == nil && b.Active > 0:
		return // served already: the file belongs to that version
	case berr == nil:
		if err := r.b.Delete(ctx, in.BookID); err != nil && citebook.ErrorCode(err) != citebook.ENOTFOUND {
			r.lg.Warn("cannot remove the book of a failed upload", "book", in.BookID, "err", err)
			return
		}
	case citebook.ErrorCode(berr) != citebook.ENOTFOUND:
		return
	}
	if err := os.Remove(in.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.lg.Warn("cannot remove the file of a failed upload", "path", in.Path, "err", err)
		return
	}
	r.lg.Info("removed a failed upload", "book", in.BookID, "path", in.Path, "status", status)
}

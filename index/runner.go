package index

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	// Workers is how many jobs run at once (default DefaultWorkers), so one large book
	// never holds the whole queue.
	Workers int
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
	// MaxQueued bounds the queue (default 1024); Submit beyond it answers
	// unavailable so clients back off.
	MaxQueued int
	// MaxKept is how many ended jobs stay known by handle (default 1000);
	// older ones are still in the recorded history.
	MaxKept int
	Logger  *slog.Logger
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
	if o.MaxKept <= 0 {
		o.MaxKept = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Runner is the one queue of index jobs: the server submits uploads and
// re-indexes to it and the CLI runs its books through it, so both get the
// same deadline, cancellation and records. Jobs are picked fairly — the
// tenant with the fewest running jobs first, oldest job first within it,
// never two builds of one book at once — and a job that has run for
// SlowAfter no longer blocks the ones behind it.
type Runner struct {
	b   Indexer
	log JobLog
	opt RunnerOptions
	lg  *slog.Logger

	ctx  context.Context // cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup // running builds and the scheduler

	mu      sync.Mutex
	jobs    map[string]*entry
	order   []*entry          // every known job, oldest first
	queue   []*entry          // queued, oldest first
	running []*entry          // builds whose slot is held (not yet reported ended)
	alive   map[string]int    // builds not yet returned, by book
	served  map[string]uint64 // when each tenant last had a job started (r.seq)
	seq     uint64
	closed  bool
	wake    chan struct{}
}

// entry is one job of the runner.
type entry struct {
	job       Job
	in        BookInput
	res       *JobResult
	err       error
	cancel    context.CancelFunc
	requested bool          // cancelled by a caller, not by the deadline
	ended     chan struct{} // closed when the job's status is final
	built     chan struct{} // closed when the build call returned
}

// NewRunner starts a runner; Close stops it.
func NewRunner(b Indexer, log JobLog, opts RunnerOptions) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{b: b, log: log, opt: opts.withDefaults(), ctx: ctx, stop: cancel,
		jobs: map[string]*entry{}, alive: map[string]int{}, served: map[string]uint64{}, wake: make(chan struct{}, 1)}
	r.lg = r.opt.Logger
	r.wg.Add(1)
	go r.schedule()
	return r
}

// Submit queues a build and returns at once with the queued job.
func (r *Runner) Submit(_ context.Context, in BookInput) (Job, error) {
	if in.BookID == "" || in.Tenant == "" || in.Path == "" {
		return Job{}, citebook.Errorf(citebook.EINVALID, "a book needs an ID, a tenant and a file")
	}
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	e := &entry{in: in, ended: make(chan struct{}), built: make(chan struct{}),
		job: Job{Handle: "job_" + hex.EncodeToString(raw[:]), BookID: in.BookID, Tenant: in.Tenant,
			Status: citebook.JobQueued, Queued: time.Now().UTC()}}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return Job{}, citebook.Errorf(citebook.EUNAVAILABLE, "the index queue is shutting down")
	case len(r.queue) >= r.opt.MaxQueued:
		return Job{}, citebook.Errorf(citebook.EUNAVAILABLE, "too many index jobs queued; try again later")
	}
	r.jobs[e.job.Handle] = e
	r.order = append(r.order, e)
	r.queue = append(r.queue, e)
	r.forgetOld()
	r.poke()
	return e.job, nil
}

// Run indexes one book through the queue and waits for it, the way the CLI
// indexes: cancelling ctx (Ctrl-C) cancels the job, which then records its
// end within the grace period.
func (r *Runner) Run(ctx context.Context, in BookInput) (*JobResult, error) {
	j, err := r.Submit(ctx, in)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	e := r.jobs[j.Handle]
	r.mu.Unlock()
	select {
	case <-e.ended:
	case <-ctx.Done():
		_, _ = r.Cancel(context.WithoutCancel(ctx), j.Handle)
		<-e.ended
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return e.res, e.err
}

// Job returns a job by handle: one this runner knows, or a recorded build
// ("index-<ID>") from the metadata database.
func (r *Runner) Job(ctx context.Context, handle string) (Job, error) {
	r.mu.Lock()
	e, ok := r.jobs[handle]
	var j Job
	if ok {
		j = e.job
	}
	r.mu.Unlock()
	if ok {
		return j, nil
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

// Jobs returns a book's jobs, newest first: those this runner queued or ran,
// then the recorded history they do not already cover.
func (r *Runner) Jobs(ctx context.Context, bookID string) ([]Job, error) {
	r.mu.Lock()
	var out []Job
	seen := map[int64]bool{}
	for _, e := range slices.Backward(r.order) {
		if e.job.BookID == bookID {
			out = append(out, e.job)
			seen[e.job.ID] = true
		}
	}
	r.mu.Unlock()
	past, err := r.log.Jobs(ctx, bookID)
	if err != nil {
		return nil, err
	}
	for _, j := range past {
		if !seen[j.ID] {
			out = append(out, recorded(j))
		}
	}
	return out, nil
}

// Cancel cancels a queued or running job. A queued job ends at once; a
// running one is told to stop and ends once its build notices (or after
// the grace period). The job is returned as it stands.
func (r *Runner) Cancel(_ context.Context, handle string) (Job, error) {
	r.mu.Lock()
	e, ok := r.jobs[handle]
	if !ok {
		r.mu.Unlock()
		return Job{}, citebook.Errorf(citebook.ENOTFOUND, "no job %q", handle)
	}
	if e.job.Status.Ended() {
		j := e.job
		r.mu.Unlock()
		return j, citebook.Errorf(citebook.ECONFLICT, "job %s already ended (%s)", handle, j.Status)
	}
	r.cancelLocked(e)
	j := e.job
	r.mu.Unlock()
	return j, nil
}

// cancelLocked cancels e; callers hold mu.
func (r *Runner) cancelLocked(e *entry) {
	e.requested = true
	if e.job.Status == citebook.JobQueued {
		r.queue = slices.DeleteFunc(r.queue, func(x *entry) bool { return x == e })
		e.err = citebook.Errorf(citebook.ECONFLICT, "index job %s was cancelled before it started", e.job.Handle)
		r.endLocked(e, citebook.JobCancelled, "cancelled")
		close(e.built)
		go r.cleanup(e)
		return
	}
	if e.cancel != nil {
		e.cancel()
	}
}

// CancelBook cancels the tenant's queued and running jobs of a book and
// waits (until ctx ends) for their builds to stop. It reports how many jobs
// it cancelled; the book itself may not exist yet.
func (r *Runner) CancelBook(ctx context.Context, tenant, bookID string) (int, error) {
	r.mu.Lock()
	var waits []chan struct{}
	for _, e := range r.order {
		if e.job.BookID != bookID || e.job.Tenant != tenant {
			continue
		}
		if !e.job.Status.Ended() {
			r.cancelLocked(e)
			waits = append(waits, e.built)
		} else if e.requested && !closed(e.built) {
			waits = append(waits, e.built) // cancelled earlier and still stopping
		}
	}
	n := len(waits)
	r.mu.Unlock()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return n, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "book %q is still stopping its index job; try again", bookID)
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

// Close stops taking jobs, cancels the queued and running ones and waits
// for them to end or ctx to expire; a build cut short fails and never
// replaces the active version.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	for _, e := range r.queue {
		e.err = citebook.Errorf(citebook.EUNAVAILABLE, "the server stopped before index job %s started; submit it again", e.job.Handle)
		r.endLocked(e, citebook.JobFailed, citebook.ErrorMessage(e.err))
		close(e.built)
	}
	r.queue = nil
	r.mu.Unlock()
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

// schedule starts queued jobs whenever a slot frees up, a job is queued or
// a running job turns slow.
func (r *Runner) schedule() {
	defer r.wg.Done()
	tick := time.NewTicker(max(r.opt.SlowAfter/4, 10*time.Millisecond))
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

// dispatch starts as many queued jobs as the slots allow.
func (r *Runner) dispatch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.closed {
		// busy counts the jobs holding a worker slot; alive every build
		// still running, slow or stopping ones included, which MaxRunning
		// bounds so memory and CPU stay bounded.
		busy, alive := 0, 0
		for _, e := range r.running {
			if time.Since(e.job.Started) < r.opt.SlowAfter {
				busy++
			}
		}
		for _, n := range r.alive {
			alive += n
		}
		if busy >= r.opt.Workers || alive >= r.opt.MaxRunning {
			return
		}
		e := r.next()
		if e == nil {
			return
		}
		r.start(e)
	}
}

// next picks the queued job to run: never a book with a build still alive,
// then the tenant with the fewest running jobs, then the tenant served
// longest ago (round robin), then the oldest job.
func (r *Runner) next() *entry {
	perTenant := map[string]int{}
	for _, e := range r.running {
		perTenant[e.job.Tenant]++
	}
	var best *entry
	for _, e := range r.queue {
		if r.alive[e.in.BookID] > 0 {
			continue
		}
		if best == nil {
			best = e
			continue
		}
		t, bt := e.job.Tenant, best.job.Tenant
		if perTenant[t] < perTenant[bt] || perTenant[t] == perTenant[bt] && r.served[t] < r.served[bt] {
			best = e
		}
	}
	return best
}

// start runs e; callers hold mu.
func (r *Runner) start(e *entry) {
	r.queue = slices.DeleteFunc(r.queue, func(x *entry) bool { return x == e })
	r.running = append(r.running, e)
	r.alive[e.in.BookID]++
	r.seq++
	r.served[e.job.Tenant] = r.seq
	e.job.Status, e.job.Started = citebook.JobRunning, time.Now().UTC()
	ctx, cancel := r.ctx, context.CancelFunc(func() {})
	if r.opt.Deadline > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.opt.Deadline)
	}
	ctx, cancel2 := context.WithCancel(ctx)
	e.cancel = func() { cancel2(); cancel() }
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
	r.lg.Info("index job started", "job", e.job.Handle, "book", e.in.BookID, "tenant", e.in.Tenant)
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
// happened to hit.
func (r *Runner) finish(ctx context.Context, e *entry, out outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.res, e.err = out.res, out.err
	if res := out.res; res != nil {
		e.job.ID, e.job.Version, e.job.Chunks = res.JobID, res.Version, res.Chunks
		e.job.Embedded, e.job.Upserted, e.job.Deleted = res.Embedded, res.Upserted, res.Deleted
	}
	r.running = slices.DeleteFunc(r.running, func(x *entry) bool { return x == e })
	status, msg := citebook.JobCompleted, ""
	switch {
	case out.err == nil && out.res != nil:
	case e.requested:
		status, msg = citebook.JobCancelled, "cancelled"
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.ECONFLICT, "index job %s was cancelled", e.job.Handle)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status = citebook.JobFailed
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.ETOOLARGE,
			"index job %s ran past its deadline of %s", e.job.Handle, r.opt.Deadline)
		msg = citebook.ErrorMessage(e.err)
	case r.ctx.Err() != nil:
		status = citebook.JobFailed
		e.err = citebook.Wrap(errors.Join(out.err, ctx.Err()), citebook.EUNAVAILABLE, "index job %s stopped: shutting down", e.job.Handle)
		msg = citebook.ErrorMessage(e.err)
	default:
		status, msg = citebook.JobFailed, citebook.ErrorMessage(out.err)
	}
	r.endLocked(e, status, msg)
	if status == citebook.JobCompleted {
		r.lg.Info("index job completed", "job", e.job.Handle, "book", e.in.BookID, "version", e.job.Version, "chunks", e.job.Chunks)
	} else {
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
	r.mu.Unlock()
	e.cancel() // releases the deadline's timer
	r.poke()
	r.cleanup(e)
}

// cleanup removes the book and file of an owned input whose first build was
// cancelled or failed on the input itself (unreadable, past its deadline),
// unless another job of the book is pending. A transient failure (embedder
// down) keeps both so the book can be indexed again.
func (r *Runner) cleanup(e *entry) {
	if !e.in.Owned {
		return
	}
	r.mu.Lock()
	status, err := e.job.Status, e.err
	pending := slices.ContainsFunc(r.order, func(x *entry) bool {
		return x != e && x.in.BookID == e.in.BookID && !x.job.Status.Ended()
	})
	r.mu.Unlock()
	switch code := citebook.ErrorCode(err); {
	case pending, status == citebook.JobCompleted:
		return
	case status == citebook.JobCancelled, code == citebook.EINVALID, code == citebook.ETOOLARGE:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, berr := r.log.Book(ctx, e.in.BookID)
	switch {
	case berr == nil && b.Active > 0:
		return // served already: the file belongs to that version
	case berr == nil:
		if err := r.b.Delete(ctx, e.in.BookID); err != nil && citebook.ErrorCode(err) != citebook.ENOTFOUND {
			r.lg.Warn("cannot remove the book of a failed upload", "book", e.in.BookID, "err", err)
			return
		}
	case citebook.ErrorCode(berr) != citebook.ENOTFOUND:
		return
	}
	if err := os.Remove(e.in.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.lg.Warn("cannot remove the file of a failed upload", "path", e.in.Path, "err", err)
		return
	}
	r.lg.Info("removed a failed upload", "book", e.in.BookID, "path", e.in.Path, "status", status)
}

// forgetOld drops the oldest ended jobs beyond MaxKept; callers hold mu.
func (r *Runner) forgetOld() {
	ended := 0
	for _, e := range r.order {
		if e.job.Status.Ended() {
			ended++
		}
	}
	for i := 0; ended > r.opt.MaxKept && i < len(r.order); {
		if e := r.order[i]; e.job.Status.Ended() {
			delete(r.jobs, e.job.Handle)
			r.order = slices.Delete(r.order, i, i+1)
			ended--
			continue
		}
		i++
	}
}

package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest"
)

// Embedder turns chunk texts into vectors. Version identifies the model so
// vectors of different models are never mixed in one library.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	Version() citebook.EmbeddingVersion
}

// DefaultBatchSize is the number of chunks a build records as one batch
// unless configured otherwise.
const DefaultBatchSize = 200

// BuilderOptions tune a Builder; the zero value is usable.
type BuilderOptions struct {
	// BatchSize is the number of chunks embedded and upserted together
	// (default DefaultBatchSize): the unit of progress, retry and resumption.
	BatchSize int
	// Attempts is how often a batch is tried before the build fails
	// (default 3), with RetryDelay doubling between tries (default 1 s).
	Attempts   int
	RetryDelay time.Duration
	// Reembed allows indexing with an embedder other than the one the
	// library was built with; every chunk of the book is embedded again.
	Reembed bool
	// Chunking is the child token budget; zero fields take the defaults.
	Chunking ingest.ChunkOptions
	// Progress, when set, is told how many of the chunks to embed are done.
	Progress func(done, total int)
	// Parse reads a book file; nil means ingest.ParseFile.
	Parse func(ctx context.Context, path string) (*ingest.Document, error)
	// Revision names the parsing rules (empty means ingest.Revision); a
	// different revision parses a file with unchanged bytes again.
	Revision string
	// Logger receives operator logs; nil means slog.Default().
	Logger *slog.Logger
	// FailPoint, when set, is called with the name of each step of a build
	// as it is reached (see failpoints.go). Crash tests use it to stop a
	// build exactly where a kill -9 could; production leaves it nil.
	FailPoint func(name string)
	// Owner is recorded on every job so other processes can tell whether
	// it still runs; nil means this process (ThisProcess).
	Owner *Owner
}

// BookInput is one book to index (citebook.BookInput).
type BookInput = citebook.BookInput

// Job result statuses beyond the job states.
const (
	// StatusUnchanged means the book's content, access groups and embedding
	// model match the served version: nothing was embedded or written.
	StatusUnchanged = "unchanged"
)

// JobResult is what indexing one book did; its JSON is the contract of
// `citebook index --json` and the HTTP API.
type JobResult struct {
	JobID     int64  `json:"job_id"`
	BookID    string `json:"book_id"`
	Version   int    `json:"version"`
	Status    string `json:"status"` // completed, failed or unchanged
	Chunks    int    `json:"chunks"`
	Embedded  int    `json:"embedded"`
	Upserted  int    `json:"upserted"`
	Deleted   int    `json:"deleted"`
	Unchanged bool   `json:"unchanged"`
	Error     string `json:"error,omitempty"`
}

// Builder indexes books: it embeds only what changed, writes both stores in
// recorded batches and switches a book to its new version in one metadata
// transaction once every batch is in, so readers never see half a build.
// Calls for different books may run concurrently; calls for one book are
// serialised within this Builder. Across processes the job queue claims
// one job per book at a time (Runner), and a build refuses a book whose
// build record another live process holds (claimBook).
type Builder struct {
	meta Meta
	vec  VectorStore
	lex  LexicalIndex
	emb  Embedder
	opt  BuilderOptions
	log  *slog.Logger
	tok  func() (*ingest.Tokenizer, error)
	self Owner

	mu    sync.Mutex
	books map[string]*sync.Mutex
}

// NewBuilder wires a builder to its stores and embedder.
func NewBuilder(meta Meta, vec VectorStore, lex LexicalIndex, emb Embedder, opts BuilderOptions) *Builder {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = time.Second
	}
	if opts.Parse == nil {
		opts.Parse = ingest.ParseFile
	}
	if opts.Revision == "" {
		opts.Revision = ingest.Revision
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Builder{meta: meta, vec: vec, lex: lex, emb: emb, opt: opts, log: log,
		tok: sync.OnceValues(ingest.NewTokenizer), books: map[string]*sync.Mutex{}, self: ThisProcess()}
}

// owner is the identity recorded on this builder's jobs.
func (b *Builder) owner() Owner {
	if b.opt.Owner != nil {
		return *b.opt.Owner
	}
	return b.self
}

// lockBook serialises builds of one book inside this process.
func (b *Builder) lockBook(id string) func() {
	b.mu.Lock()
	m, ok := b.books[id]
	if !ok {
		m = &sync.Mutex{}
		b.books[id] = m
	}
	b.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// build is the state of one Index call.
type build struct {
	in       BookInput
	book     *citebook.Book // nil for a new book
	active   *citebook.Version
	latest   *citebook.Version
	ev       citebook.EmbeddingVersion
	version  int
	job      Job
	progress func(done, total int)
}

// Index builds a new version of a book, or reports it unchanged. A failure
// marks the version and job failed, keeps the previous version served and
// returns the result with the error.
func (b *Builder) Index(ctx context.Context, in BookInput) (*JobResult, error) {
	if in.BookID == "" || in.Tenant == "" || in.Path == "" {
		return nil, citebook.Errorf(citebook.EINVALID, "a book needs an ID, a tenant and a file")
	}
	defer b.lockBook(in.BookID)()
	st := &build{in: in, ev: b.emb.Version(), progress: in.Progress}
	if st.progress == nil {
		st.progress = b.opt.Progress
	}
	if st.progress == nil {
		st.progress = func(int, int) {}
	}

	data, err := os.ReadFile(in.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, citebook.Wrap(err, citebook.ENOTFOUND, "file %s not found", in.Path)
	} else if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read %s", in.Path)
	}
	sourceHash := b.sourceHash(data)

	lib, haveLib, err := b.meta.EmbeddingVersion(ctx)
	if err != nil {
		return nil, err
	}
	if haveLib && lib != st.ev && !b.opt.Reembed {
		return nil, citebook.Errorf(citebook.EINVALID,
			"the library is embedded with %s but the embedder is %s; use the same embedder or re-embed (--reembed)", lib, st.ev)
	}
	if err := b.claimBook(ctx, in.BookID); err != nil {
		return nil, err
	}
	if err := b.loadBook(ctx, st); err != nil {
		return nil, err
	}
	aclSame := st.book != nil && slices.Equal(normGroups(st.book.Groups), normGroups(in.Groups))
	if st.active != nil && aclSame && st.active.Embedding == st.ev.String() && st.active.SourceHash == sourceHash {
		return b.unchanged(ctx, st)
	}

	doc, err := b.opt.Parse(ctx, in.Path)
	if err != nil {
		if citebook.ErrorCode(err) == citebook.EINTERNAL {
			err = citebook.Wrap(err, citebook.EINVALID, "cannot parse %s", in.Path)
		}
		return nil, err
	}
	tok, err := b.tok()
	if err != nil {
		return nil, err
	}
	parents, chunks := ingest.Split(doc, in.BookID, tok, b.opt.Chunking)
	if len(chunks) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "%s has no text to index", in.Path)
	}
	contentHash := hashChunkSet(parents, chunks)
	if st.active != nil && aclSame && st.active.Embedding == st.ev.String() && st.active.ContentHash == contentHash {
		if st.active.SourceHash != sourceHash {
			// Parsed again only because the bytes were hashed under other
			// rules; remember that these rules give the same content.
			if err := b.meta.SetSourceHash(ctx, in.BookID, st.active.Number, sourceHash); err != nil {
				return nil, err
			}
		}
		return b.unchanged(ctx, st)
	}
	for i := range chunks {
		chunks[i].Tenant, chunks[i].Groups, chunks[i].Embedding = in.Tenant, normGroups(in.Groups), st.ev.String()
	}

	title := in.Title
	if title == "" {
		title = doc.Title
	}
	if title == "" && st.book != nil {
		title = st.book.Title
	}
	if err := b.meta.PutBook(ctx, citebook.Book{ID: in.BookID, Title: title, Format: doc.Format, Language: doc.Language,
		Tenant: in.Tenant, Groups: normGroups(in.Groups), Source: in.Path, Pages: doc.Pages}); err != nil {
		return nil, err
	}
	b.point(fpBookSaved)
	if !haveLib {
		if err := b.meta.SetEmbeddingVersion(ctx, st.ev); err != nil {
			return nil, err
		}
	}

	// Resume the newest version when it is an unfinished build of this very
	// content; otherwise abandon unfinished builds and start a new version.
	activeN := 0
	if st.active != nil {
		activeN = st.active.Number
	}
	resume := in.Resume && st.latest != nil && st.latest.Number > activeN &&
		st.latest.Status != citebook.VersionCompleted && st.latest.ContentHash == contentHash &&
		st.latest.Embedding == st.ev.String()
	if in.Resume && !resume {
		b.log.InfoContext(ctx, "nothing to resume; building a new version", "book", in.BookID)
	}
	force := map[string]bool{}
	discarded := false
	if resume {
		st.version = st.latest.Number
		if err := b.reloadBook(ctx, in.BookID); err != nil {
			return nil, err
		}
	} else {
		if discarded, err = b.discardUnfinished(ctx, st, force); err != nil {
			return nil, err
		}
		b.point(fpDiscarded)
		st.version = 1
		if st.latest != nil {
			st.version = st.latest.Number + 1
		}
		if err := b.meta.CreateVersion(ctx, citebook.Version{BookID: in.BookID, Number: st.version, ContentHash: contentHash,
			SourceHash: sourceHash, Status: citebook.VersionQueued, Embedding: st.ev.String(), Chunks: len(chunks)}); err != nil {
			return nil, err
		}
		b.point(fpVersionCreated)
	}

	st.job = Job{BookID: in.BookID, Version: st.version, Status: JobRunning, Chunks: len(chunks), Owner: b.owner(), OCR: doc.OCR}
	if err := b.meta.CreateJob(ctx, &st.job); err != nil {
		return nil, err
	}
	defer b.heartbeat(ctx, st.job.ID)()
	if in.Recorded != nil {
		in.Recorded(st.job.ID)
	}
	b.point(fpJobCreated)
	if err := b.supersede(ctx, in.BookID, st.job.ID); err != nil {
		return b.fail(ctx, st, err)
	}
	b.log.InfoContext(ctx, "indexing", "book", in.BookID, "version", st.version, "job", st.job.ID,
		"chunks", len(chunks), "resume", resume)
	if err := b.meta.SetVersionStatus(ctx, in.BookID, st.version, citebook.VersionIndexing, ""); err != nil {
		return b.fail(ctx, st, err)
	}
	b.point(fpIndexing)
	if err := b.run(ctx, st, parents, chunks, force, discarded, resume); err != nil {
		return b.fail(ctx, st, err)
	}
	return b.result(st), nil
}

// reloadBook re-reads a book into the stores held in this process's memory
// from their files before a resume: the build may have been started by
// another process (a worker that died, its job taken over), whose batches
// are in the files but not in this process's memory, and a resume skips
// only the batches the stores hold.
func (b *Builder) reloadBook(ctx context.Context, bookID string) error {
	for _, s := range []any{b.vec, b.lex} {
		if r, ok := s.(Reloader); ok {
			if err := r.ReloadBooks(ctx, []string{bookID}); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadBook reads the book and its active and newest versions, refusing to
// move a book between tenants.
func (b *Builder) loadBook(ctx context.Context, st *build) error {
	book, err := b.meta.Book(ctx, st.in.BookID)
	if citebook.ErrorCode(err) == citebook.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if book.Tenant != st.in.Tenant {
		return citebook.Errorf(citebook.ECONFLICT, "book %q belongs to another tenant", st.in.BookID)
	}
	st.book = book
	vs, err := b.meta.Versions(ctx, book.ID)
	if err != nil {
		return err
	}
	for i := range vs {
		if vs[i].Number == book.Active {
			st.active = &vs[i]
		}
		st.latest = &vs[i]
	}
	return nil
}

// unchanged reports a book whose served version already matches; only a new
// title is recorded.
func (b *Builder) unchanged(ctx context.Context, st *build) (*JobResult, error) {
	if st.in.Title != "" && st.in.Title != st.book.Title {
		nb := *st.book
		nb.Title = st.in.Title
		if err := b.meta.PutBook(ctx, nb); err != nil {
			return nil, err
		}
	}
	b.log.InfoContext(ctx, "unchanged", "book", st.in.BookID, "version", st.active.Number)
	return &JobResult{BookID: st.in.BookID, Version: st.active.Number, Status: StatusUnchanged,
		Chunks: st.active.Chunks, Unchanged: true}, nil
}

// discardUnfinished abandons builds newer than the active version: their
// metadata rows and retirements are undone, chunks only they wrote are
// deleted from the stores, and chunks they rewrote in place are marked in
// force so this build writes them again.
func (b *Builder) discardUnfinished(ctx context.Context, st *build, force map[string]bool) (bool, error) {
	if st.book == nil {
		return false, nil
	}
	vs, err := b.meta.Versions(ctx, st.in.BookID)
	if err != nil {
		return false, err
	}
	activeIDs := map[string]bool{}
	if st.active != nil {
		ids, err := b.meta.ChunkIDs(ctx, st.in.BookID, st.active.Number)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			activeIDs[id] = true
		}
	}
	written, err := b.batchIDs(ctx, st.in.BookID, func(v int) bool { return v > st.book.Active }, false)
	if err != nil {
		return false, err
	}
	abandoned := false
	for _, v := range vs {
		if v.Number <= st.book.Active || v.Status == citebook.VersionCompleted {
			continue
		}
		abandoned = true
		if err := b.meta.DiscardVersion(ctx, st.in.BookID, v.Number); err != nil {
			return false, err
		}
		b.point(fpDiscardRows)
		if v.Status != citebook.VersionFailed {
			if err := b.meta.SetVersionStatus(ctx, st.in.BookID, v.Number, citebook.VersionFailed, "abandoned by a newer build"); err != nil {
				return false, err
			}
		}
	}
	var orphans []string
	for id := range written {
		if activeIDs[id] {
			force[id] = true
		} else {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(orphans)
	if err := b.deleteBoth(ctx, orphans, fpDiscardDelete); err != nil {
		return false, err
	}
	return abandoned, nil
}

// batchIDs returns the chunk IDs of the batches of the book's jobs on
// versions keep accepts (only done batches with onlyDone): what those builds
// wrote or may have written.
func (b *Builder) batchIDs(ctx context.Context, bookID string, keep func(int) bool, onlyDone bool) (map[string]bool, error) {
	jobs, err := b.meta.Jobs(ctx, bookID)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, j := range jobs {
		if !keep(j.Version) {
			continue
		}
		bs, err := b.meta.Batches(ctx, j.ID)
		if err != nil {
			return nil, err
		}
		for _, bt := range bs {
			if onlyDone && bt.Status != BatchDone {
				continue
			}
			for _, id := range bt.ChunkIDs {
				out[id] = true
			}
		}
	}
	return out, nil
}

// run does the work of a build once its version and job exist.
func (b *Builder) run(ctx context.Context, st *build, parents []citebook.Parent, chunks []citebook.Chunk,
	force map[string]bool, discarded, resume bool) error {
	bookID, v := st.in.BookID, st.version
	var prev []citebook.Chunk
	var prevParents []citebook.Parent
	if st.active != nil {
		var err error
		if prev, err = b.meta.ChunksAt(ctx, bookID, st.active.Number); err != nil {
			return err
		}
		if prevParents, err = b.meta.Parents(ctx, bookID, st.active.Number); err != nil {
			return err
		}
	}
	p := plan(prev, chunks, v, force)

	// What the stores really hold decides what is written: a kept chunk a
	// store lost (or one an abandoned build retired) is written again, and
	// a resumed build skips only done chunks both stores still serve.
	all := make([]string, len(chunks))
	for i, c := range chunks {
		all[i] = c.ID
	}
	have, err := b.visibleIn(ctx, bookID, all, v)
	if err != nil {
		return err
	}
	lost := 0
	for _, id := range p.kept {
		if !have[id] {
			force[id] = true
			lost++
		}
	}
	if lost > 0 {
		b.log.WarnContext(ctx, "chunks of the served version missing from a store are written again", "book", bookID, "chunks", lost)
		p = plan(prev, chunks, v, force)
	}
	var done map[string]bool
	if resume {
		if done, err = b.batchIDs(ctx, bookID, func(n int) bool { return n == v }, true); err != nil {
			return err
		}
		for id := range done {
			if !have[id] {
				delete(done, id)
			}
		}
	}
	var todo []citebook.Chunk
	skipped := 0
	for _, c := range p.embed {
		if done[c.ID] {
			skipped++
			continue
		}
		todo = append(todo, c)
	}
	if err := b.embedBatches(ctx, st, todo, skipped, len(p.embed)); err != nil {
		return err
	}

	// Retire what the new version no longer has; the active version still
	// sees it because its Retired is newer than the active version.
	if err := b.vec.Retire(ctx, bookID, p.removed, v); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot retire chunks in the vector store")
	}
	b.point(fpRetiredVectors)
	if err := b.lex.Retire(ctx, bookID, p.removed, v); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot retire chunks in the lexical index")
	}
	b.point(fpRetiredLexical)
	if discarded {
		// An earlier attempt may have retired chunks this version keeps.
		if err := b.vec.Retire(ctx, bookID, p.kept, 0); err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot restore chunks in the vector store")
		}
		if err := b.lex.Retire(ctx, bookID, p.kept, 0); err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot restore chunks in the lexical index")
		}
		b.point(fpRestoredKept)
	}

	// Metadata rows of the new version, invisible to readers until Activate.
	newParents, retireParents := planParents(prevParents, parents)
	if err := b.meta.RetireParents(ctx, bookID, retireParents, v); err != nil {
		return err
	}
	if err := b.meta.SaveParents(ctx, v, newParents); err != nil {
		return err
	}
	b.point(fpParentRows)
	if err := b.meta.RetireChunks(ctx, bookID, p.retireRows, v); err != nil {
		return err
	}
	if err := b.meta.SaveChunks(ctx, p.rows); err != nil {
		return err
	}
	b.point(fpChunkRows)
	if err := b.checkComplete(ctx, bookID, v, chunks); err != nil {
		return err
	}
	b.point(fpVerified)
	if err := b.meta.Activate(ctx, bookID, v); err != nil {
		return err
	}
	b.point(fpActivated)
	if b.opt.Reembed {
		if err := b.meta.SetEmbeddingVersion(ctx, st.ev); err != nil {
			return err
		}
	}
	b.log.InfoContext(ctx, "activated", "book", bookID, "version", v)

	// The new version is served; what it retired can go.
	if err := b.deleteBoth(ctx, p.removed, fpRetiredDelete); err != nil {
		b.log.WarnContext(ctx, "retired chunks left in a store; `citebook index --verify --repair` removes them",
			"book", bookID, "version", v, "err", err)
	} else {
		st.job.Deleted = len(p.removed)
	}
	if err := b.meta.DeleteRetired(ctx, bookID, v); err != nil {
		b.log.WarnContext(ctx, "retired metadata rows left", "book", bookID, "err", err)
	}
	b.point(fpRetiredRows)
	st.job.Status, st.job.Finished = JobCompleted, time.Now().UTC()
	if err := b.meta.UpdateJob(ctx, st.job); err != nil {
		b.log.WarnContext(ctx, "job record not updated", "job", st.job.ID, "err", err)
	}
	b.point(fpJobCompleted)
	return nil
}

// deleteBoth removes chunks from both stores; fp names the step for fail
// points (fp+"-vectors" is reached between the two stores).
func (b *Builder) deleteBoth(ctx context.Context, ids []string, fp string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := b.vec.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot delete chunks from the vector store")
	}
	b.point(fp + "-vectors")
	if err := b.lex.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot delete chunks from the lexical index")
	}
	b.point(fp + "-lexical")
	return nil
}

// embedBatches embeds and upserts chunks in recorded batches, retrying each
// a few times before giving up.
func (b *Builder) embedBatches(ctx context.Context, st *build, todo []citebook.Chunk, skipped, total int) error {
	var batches []Batch
	for n, i := 0, 0; i < len(todo); n, i = n+1, i+b.opt.BatchSize {
		part := todo[i:min(i+b.opt.BatchSize, len(todo))]
		ids := make([]string, len(part))
		for k, c := range part {
			ids[k] = c.ID
		}
		batches = append(batches, Batch{JobID: st.job.ID, N: n, Status: BatchPending, ChunkIDs: ids})
	}
	if err := b.meta.CreateBatches(ctx, batches); err != nil {
		return err
	}
	b.point(fpBatchesPlanned)
	done := skipped
	st.progress(done, total)
	for i := range batches {
		bt := &batches[i]
		part := todo[i*b.opt.BatchSize : i*b.opt.BatchSize+len(bt.ChunkIDs)]
		b.point(batchPoint(bt.N, "start"))
		err := b.writeBatch(ctx, bt, part)
		if err != nil {
			bt.Status, bt.Error = BatchFailed, err.Error()
		} else {
			bt.Status, bt.Error = BatchDone, ""
			st.job.Embedded += len(part)
			st.job.Upserted += len(part)
		}
		if uerr := b.meta.UpdateBatch(context.WithoutCancel(ctx), *bt); uerr != nil && err == nil {
			err = uerr
		}
		if err != nil {
			return fmt.Errorf("batch %d of %d: %w", bt.N+1, len(batches), err)
		}
		b.point(batchPoint(bt.N, "recorded"))
		done += len(part)
		st.progress(done, total)
	}
	return nil
}

// writeBatch embeds one batch and writes it to both stores, retrying with a
// growing delay; a cancelled context stops at once.
func (b *Builder) writeBatch(ctx context.Context, bt *Batch, part []citebook.Chunk) error {
	texts := embedTexts(part)
	delay := b.opt.RetryDelay
	var err error
	for try := 1; try <= b.opt.Attempts; try++ {
		bt.Attempts++
		if err = b.tryBatch(ctx, bt.N, part, texts); err == nil || ctx.Err() != nil || try == b.opt.Attempts {
			return err
		}
		b.log.WarnContext(ctx, "batch failed; retrying", "batch", bt.N, "attempt", bt.Attempts, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
	return err
}

func (b *Builder) tryBatch(ctx context.Context, n int, part []citebook.Chunk, texts []string) error {
	if err := b.upsertVectors(ctx, part, texts); err != nil {
		return err
	}
	b.point(batchPoint(n, "vectors"))
	if err := b.lex.Upsert(ctx, part); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write the lexical index")
	}
	b.point(batchPoint(n, "lexical"))
	return nil
}

// upsertVectors embeds texts (texts[i] belongs to part[i]) and writes the
// chunks with their vectors to the vector store; builds and repairs share
// it so both check the embedder's answer the same way.
func (b *Builder) upsertVectors(ctx context.Context, part []citebook.Chunk, texts []string) error {
	vecs, err := b.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "embedder failed")
	}
	if len(vecs) != len(part) {
		return citebook.Errorf(citebook.EUNAVAILABLE, "embedder returned %d vectors for %d texts", len(vecs), len(part))
	}
	if err := b.vec.Upsert(ctx, part, vecs); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write the vector store")
	}
	return nil
}

// embedTexts is EmbedText of every chunk.
func embedTexts(cs []citebook.Chunk) []string {
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = EmbedText(c)
	}
	return texts
}

// EmbedText is the text embedded for a chunk: its heading path gives a
// short paragraph the topic it is about, and a continued table's caption and
// header rows (IndexContext) give its figures their columns. A chunk without
// context embeds exactly as before, so a vector cache keyed on the text
// keeps serving it.
func EmbedText(c citebook.Chunk) string {
	text := c.Text
	if c.IndexContext != "" {
		text = c.IndexContext + "\n\n" + text
	}
	if len(c.HeadingPath) == 0 {
		return text
	}
	return citebook.HeadingString(c.HeadingPath) + "\n\n" + text
}

// fail records a failed build: the version and job are marked failed with
// the reason, the previous version stays served.
func (b *Builder) fail(ctx context.Context, st *build, cause error) (*JobResult, error) {
	wctx := context.WithoutCancel(ctx)
	msg := cause.Error()
	b.log.ErrorContext(ctx, "index build failed", "book", st.in.BookID, "version", st.version, "job", st.job.ID, "err", cause)
	if err := b.meta.SetVersionStatus(wctx, st.in.BookID, st.version, citebook.VersionFailed, msg); err != nil {
		b.log.ErrorContext(ctx, "cannot mark version failed", "book", st.in.BookID, "err", err)
	}
	st.job.Status, st.job.Error, st.job.Finished = JobFailed, msg, time.Now().UTC()
	if st.job.ID != 0 {
		if err := b.meta.UpdateJob(wctx, st.job); err != nil {
			b.log.ErrorContext(ctx, "cannot mark job failed", "job", st.job.ID, "err", err)
		}
	}
	res := b.result(st)
	res.Error = citebook.ErrorMessage(cause)
	code := citebook.ErrorCode(cause)
	if code == citebook.EINTERNAL {
		code = citebook.EUNAVAILABLE
	}
	return res, citebook.Wrap(cause, code, "indexing %s version %d failed (resume with --resume)", st.in.BookID, st.version)
}

func (b *Builder) result(st *build) *JobResult {
	status := string(st.job.Status)
	return &JobResult{JobID: st.job.ID, BookID: st.in.BookID, Version: st.version, Status: status,
		Chunks: st.job.Chunks, Embedded: st.job.Embedded, Upserted: st.job.Upserted, Deleted: st.job.Deleted}
}

// sourceHash identifies the file bytes together with the chunking options
// and the parsing revision, since the same file chunked differently, or
// parsed by other rules, may be different content.
func (b *Builder) sourceHash(data []byte) string {
	h := sha256.New()
	h.Write(data)
	opt, _ := json.Marshal(b.opt.Chunking)
	h.Write(opt)
	h.Write([]byte("\x00" + b.opt.Revision))
	return hex.EncodeToString(h.Sum(nil))
}

// hashChunkSet identifies a build's content: every parent and chunk with its
// placement, in order.
func hashChunkSet(parents []citebook.Parent, chunks []citebook.Chunk) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, p := range parents {
		p.Text = ""
		enc.Encode(p)
	}
	for _, c := range chunks {
		c.Text = ""
		enc.Encode(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// normGroups sorts and de-duplicates groups so their order never counts as
// an access change.
func normGroups(g []string) []string {
	out := slices.Clone(g)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

package library

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/pgnotify"
	"github.com/citebook/citebook/ingest"
)

// FailPointKey carries a builder fail point hook (index.BuilderOptions
// FailPoint, a func(string)) in the context given to Open; only the crash
// tests set one, to kill or panic at a named step.
type FailPointKey struct{}

// Library is an opened library: the metadata database, both stores, the
// embedder, a builder wired to them and the grants. Commands open one with
// Open and Close it when done.
type Library struct {
	Config  Config
	Log     *slog.Logger
	Meta    *metadb.DB
	Vectors index.VectorStore
	Lexical index.LexicalIndex
	Embed   embedder.Embedder // documents for the builder, queries for answering
	Builder *index.Builder
	// Follow reloads what another process (the CLI while serve runs)
	// changes in the in-memory stores; retrieval goes through it.
	Follow *index.Follower
	// Grants manages grants as the CLI and /v1/grants do; ACL resolves a
	// principal's filter from them.
	Grants *acl.Manager
	ACL    *acl.Resolver
	// embedding caches the library's embedding version for the pipeline.
	embedding *index.EmbeddingCache

	closers []func() error
}

// OpenMeta opens (and migrates) the metadata database of the library c
// names, for commands that need nothing else (tokens, grants, jobs); it is
// the one place that knows where and how the metadata lives.
// A Meta that is not a postgres:// URL is refused rather than taken for a
// SQLite path.
func OpenMeta(ctx context.Context, c Config) (*metadb.DB, error) {
	if c.Meta == "" {
		return metadb.Open(ctx, c.MetaPath())
	}
	if !strings.HasPrefix(c.Meta, "postgres://") && !strings.HasPrefix(c.Meta, "postgresql://") {
		return nil, citebook.Errorf(citebook.EINVALID, "--meta takes a postgres:// URL (leave it unset for SQLite in --data)")
	}
	return metadb.Open(ctx, c.Meta)
}

// Open opens the library c describes; log nil means slog.Default(). On
// error everything opened so far is closed again.
func Open(ctx context.Context, c Config, log *slog.Logger) (_ *Library, err error) {
	if log == nil {
		log = slog.Default()
	}
	l := &Library{Config: c, Log: log}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if err := os.MkdirAll(c.Data, 0o755); err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot create library directory %s", c.Data)
	}
	if l.Meta, err = OpenMeta(ctx, c); err != nil {
		return nil, err
	}
	l.closers = append(l.closers, l.Meta.Close)
	RecoverJobs(ctx, l.Meta, log)
	grants := acl.NewStore(l.Meta.SQL())
	l.Grants = acl.NewManager(grants, l.Meta, l.Meta)
	// Before the stores load, so a change committed meanwhile is reloaded.
	if l.Follow, err = index.NewFollower(ctx, l.Meta, log); err != nil {
		return nil, err
	}
	// Books and grants are read again only when the change log moved.
	l.ACL = acl.NewResolver(l.Meta, grants, l.Meta).Cache(l.Follow.Generation)
	l.embedding = index.NewEmbeddingCache(l.Meta, l.Follow.Generation)
	if l.Embed, err = embedder.New(c.Embed); err != nil {
		return nil, err
	}

	// The lexical index loads while the vector store does: each reads its
	// own files, so a restart takes the longer of the two, not the sum.
	type opened struct {
		x   *lexical.Index
		err error
	}
	lex := make(chan opened, 1)
	go func() {
		x, err := lexical.Open(ctx, filepath.Join(c.Data, "lexical"))
		lex <- opened{x, err}
	}()
	defer func() {
		if lex != nil { // returned before taking it: close it unused
			if r := <-lex; r.x != nil {
				r.x.Close()
			}
		}
	}()

	switch c.Store {
	case "", StoreEmbedded:
		vs, err := memstore.Open(ctx, filepath.Join(c.Data, "vectors"))
		if err != nil {
			return nil, err
		}
		l.Vectors = vs
		l.Follow.Follow(vs)
	case StoreMilvus:
		if c.Milvus.Addr == "" {
			return nil, citebook.Errorf(citebook.EINVALID, "--store milvus needs --milvus-addr or MILVUS_ADDR")
		}
		vs, err := milvus.Open(ctx, milvus.Config{Addr: c.Milvus.Addr, Collection: c.Milvus.Collection,
			Dim: l.Embed.Version().Dimension})
		if err != nil {
			return nil, err
		}
		l.Vectors = vs
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "unknown store %q (embedded or milvus)", c.Store)
	}
	l.closers = append(l.closers, l.Vectors.Close)

	r := <-lex
	lex = nil
	if r.err != nil {
		return nil, r.err
	}
	l.Lexical = r.x
	l.closers = append(l.closers, l.Lexical.Close)
	if r, ok := l.Lexical.(index.Reloader); ok {
		l.Follow.Follow(r)
	}

	fp, _ := ctx.Value(FailPointKey{}).(func(string))
	l.Builder = index.NewBuilder(l.Meta, l.Vectors, l.Lexical, l.Embed, index.BuilderOptions{
		Reembed: c.Reembed, Logger: log, Parse: l.parser(),
		BatchSize: c.BatchSize, FailPoint: fp})
	return l, nil
}

// Close closes everything the library opened, newest first.
func (l *Library) Close() error {
	var errs []error
	for i := len(l.closers) - 1; i >= 0; i-- {
		if err := l.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	l.closers = nil
	if err := errors.Join(errs...); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "closing the library")
	}
	return nil
}

// Runner runs jobs of the library's shared queue (the metadata's
// job_queue) through the library's builder, with the configured
// deadline; opts fills what the caller does not set.
func (l *Library) Runner(opts index.RunnerOptions) *index.Runner {
	if opts.Deadline == 0 {
		opts.Deadline = l.Config.JobDeadline
	}
	if opts.Logger == nil {
		opts.Logger = l.Log
	}
	return index.NewRunner(l.Builder, l.Meta, l.Meta, opts)
}

// ParseLimits are the parsing limits of the configuration; zero fields
// take ingest's defaults.
func (c Config) ParseLimits() ingest.Limits { return ingest.Limits{Timeout: c.ParseTimeout} }

// parser reads books with OCR for scanned PDFs when tesseract and pdftoppm
// are installed; otherwise such PDFs are refused with a note on how to
// enable OCR. The tools are looked up at the first parse, so commands that
// never parse do not pay for it; OCR progress goes to the log page by page.
func (l *Library) parser() func(ctx context.Context, path string) (*ingest.Document, error) {
	find := sync.OnceValues(func() (*ingest.Tesseract, error) {
		render, err := ingest.FindPoppler()
		if err != nil {
			return nil, err
		}
		return ingest.FindTesseract(context.Background(), render, l.Config.OCRLanguages)
	})
	return func(ctx context.Context, path string) (*ingest.Document, error) {
		limits := l.Config.ParseLimits()
		tess, err := find()
		if err != nil {
			l.Log.DebugContext(ctx, "OCR off", "reason", err)
			return ingest.ParseOptions{Limits: limits}.ParseFile(ctx, path)
		}
		return ingest.ParseOptions{Limits: limits, OCR: tess, Progress: func(done, total int) {
			l.Log.InfoContext(ctx, "OCR", "file", filepath.Base(path), "pages_done", done, "pages", total)
		}}.ParseFile(ctx, path)
	}
}

// RecoverJobs marks abandoned the index jobs whose process was killed, so
// no command shows them running forever; Open and `citebook jobs` run it. Failing to is logged, not fatal: the builder checks again before
// it builds a book.
func RecoverJobs(ctx context.Context, meta index.Meta, log *slog.Logger) {
	dead, err := index.RecoverJobs(ctx, meta, "")
	for _, j := range dead {
		log.WarnContext(ctx, "index job abandoned: its process ended without finishing", "job", j.ID, "book", j.BookID,
			"version", j.Version, "owner", j.Owner.String())
	}
	if err != nil {
		log.WarnContext(ctx, "cannot check for abandoned index jobs", "err", err)
	}
}

// Listen wakes this process when another one changes a PostgreSQL library:
// a logged switch or deletion syncs the in-memory indexes at once (not at
// the next poll) and a queued job wakes runner (index/pgnotify). On SQLite
// it does nothing; the polls stay the only way.
func (l *Library) Listen(ctx context.Context, runner *index.Runner) {
	if l.Meta.Dialect() != "postgres" {
		return
	}
	ln := pgnotify.New(l.Config.Meta, l.Log)
	ln.On(pgnotify.Changes, func(ctx context.Context) {
		if err := l.Follow.Sync(ctx); err != nil && ctx.Err() == nil {
			l.Log.Warn("cannot follow library changes", "err", err)
		}
	})
	if runner != nil {
		ln.On(pgnotify.Jobs, func(context.Context) { runner.Wake() })
	}
	go ln.Run(ctx)
}

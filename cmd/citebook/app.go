package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/pgnotify"
	"github.com/citebook/citebook/ingest"
)

// appOptions are the settings every command that touches the library
// shares. Flags win over environment variables, which win over defaults.
type appOptions struct {
	Data             string // library directory: metadata DB, embedded vectors, lexical index
	Meta             string // metadata database: "" is citebook.db in Data, or a postgres:// URL
	Store            string // "embedded" (default) or "milvus"
	MilvusAddr       string
	MilvusCollection string
	Embedder         string // "builtin" (default), "openai" or "ollama"
	EmbedURL         string
	EmbedModel       string
	EmbedQueryModel  string        // model name for questions when the server picks e5's query/passage mode by name
	EmbedBatch       int           // texts per embedding request; small for slow CPU servers (0: the embed default)
	EmbedKey         string        // from CITEBOOK_EMBED_KEY only, never a flag (flags show in ps)
	Reembed          bool          // let the builder switch the library to this embedder
	ParseTimeout     time.Duration // bound on parsing one book (0: the ingest default)
	BatchSize        int           // chunks per recorded index batch (0: the builder's default)
	OCRLanguages     string        // Tesseract language data for scanned PDFs ("eng", "eng+chi_sim")
}

// failPointKey carries a builder fail point hook (index.BuilderOptions
// FailPoint) in a command's context; only the crash tests set one, to kill
// the process at a named step.
type failPointKey struct{}

// defaultAppOptions reads the environment defaults.
func defaultAppOptions() appOptions {
	data := os.Getenv("CITEBOOK_DATA")
	if data == "" {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".citebook")
		} else {
			data = ".citebook"
		}
	}
	return appOptions{
		Data:             data,
		Meta:             os.Getenv("CITEBOOK_META"),
		Store:            "embedded",
		MilvusAddr:       os.Getenv("MILVUS_ADDR"),
		MilvusCollection: "citebook",
		Embedder:         "builtin",
		EmbedKey:         os.Getenv("CITEBOOK_EMBED_KEY"),
		OCRLanguages:     "eng",
	}
}

// addAppFlags registers the shared flags on a command, with environment
// defaults, and returns the options they fill.
func addAppFlags(fs *pflag.FlagSet) *appOptions {
	o := defaultAppOptions()
	fs.StringVar(&o.Data, "data", o.Data, "library directory (env CITEBOOK_DATA)")
	addMetaFlag(fs, &o)
	fs.StringVar(&o.Store, "store", o.Store, "vector store: embedded or milvus")
	fs.StringVar(&o.MilvusAddr, "milvus-addr", o.MilvusAddr, "Milvus address host:port (env MILVUS_ADDR)")
	fs.StringVar(&o.MilvusCollection, "milvus-collection", o.MilvusCollection, "Milvus collection")
	fs.StringVar(&o.Embedder, "embedder", o.Embedder, "embedder: builtin, openai or ollama (key in env CITEBOOK_EMBED_KEY)")
	fs.StringVar(&o.EmbedURL, "embed-url", o.EmbedURL, "embedding API base URL (openai, ollama)")
	fs.StringVar(&o.EmbedModel, "embed-model", o.EmbedModel, "embedding model name")
	fs.StringVar(&o.EmbedQueryModel, "embed-query-model", o.EmbedQueryModel, "model name for embedding questions (default: --embed-model)")
	fs.IntVar(&o.EmbedBatch, "embed-batch", o.EmbedBatch, "texts per embedding request (default 200; lower it for slow CPU servers)")
	fs.DurationVar(&o.ParseTimeout, "parse-timeout", o.ParseTimeout, "longest a book may take to parse before its job fails (default "+ingest.DefaultLimits().Timeout.String()+", "+ingest.DefaultOCRTimeout.String()+" when pages are read by OCR)")
	fs.StringVar(&o.OCRLanguages, "ocr-langs", o.OCRLanguages, "Tesseract languages for scanned PDFs, e.g. eng+chi_sim (OCR runs when tesseract is installed)")
	return &o
}

// app is an opened library: the metadata database, both stores, the
// embedder and a builder wired to them. Commands open one with openApp and
// Close it when done; commands needing more (an answerer, a server) add
// fields here and set them in openApp so wiring stays in one place.
type app struct {
	Opts    appOptions
	Log     *slog.Logger
	Meta    *metadb.DB
	Vectors index.VectorStore
	Lexical index.LexicalIndex
	Embed   embedder.Embedder // documents for the builder, queries for answering
	Builder *index.Builder
	// Queue is the library's shared queue of index jobs.
	Queue index.Queue
	// Follow reloads what another process (the CLI while serve runs)
	// changes in the in-memory stores; retrieval goes through it.
	Follow *index.Follower

	closers []func() error
}

// metaPath is where the metadata database of a library lives by default.
func metaPath(data string) string { return filepath.Join(data, "citebook.db") }

// addMetaFlag registers --meta, for every command that opens the metadata.
func addMetaFlag(fs *pflag.FlagSet, o *appOptions) {
	fs.StringVar(&o.Meta, "meta", o.Meta, "metadata database: a postgres:// URL shared by several servers (env CITEBOOK_META; default citebook.db in --data)")
}

// metaTarget is what metadb.Open takes for o: the --meta URL, else the
// SQLite file in the data dir.
func (o appOptions) metaTarget() string {
	if o.Meta != "" {
		return o.Meta
	}
	return metaPath(o.Data)
}

// openMeta opens the metadata database of o alone (jobs, tokens, grants
// need nothing else). A --meta value that is not a postgres:// URL is
// refused rather than taken for a SQLite path.
func openMeta(ctx context.Context, o appOptions) (*metadb.DB, error) {
	if o.Meta != "" && !strings.HasPrefix(o.Meta, "postgres://") && !strings.HasPrefix(o.Meta, "postgresql://") {
		return nil, citebook.Errorf(citebook.EINVALID, "--meta takes a postgres:// URL (leave it unset for SQLite in --data)")
	}
	return metadb.Open(ctx, o.metaTarget())
}

// openApp opens the library described by o. On error everything opened so
// far is closed again.
func openApp(ctx context.Context, o appOptions) (_ *app, err error) {
	a := &app{Opts: o, Log: slog.Default()}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if err := os.MkdirAll(o.Data, 0o755); err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot create library directory %s", o.Data)
	}
	if a.Meta, err = openMeta(ctx, o); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, a.Meta.Close)
	a.Queue = a.Meta
	recoverJobs(ctx, a.Meta, a.Log)
	// Before the stores load, so a change committed meanwhile is reloaded.
	if a.Follow, err = index.NewFollower(ctx, a.Meta, a.Log); err != nil {
		return nil, err
	}

	emb, err := embedder.New(embedder.Config{Provider: o.Embedder, BaseURL: o.EmbedURL, Model: o.EmbedModel,
		QueryModel: o.EmbedQueryModel, APIKey: o.EmbedKey, BatchSize: o.EmbedBatch})
	if err != nil {
		return nil, err
	}
	a.Embed = emb

	// The lexical index loads while the vector store does: each reads its
	// own files, so a restart takes the longer of the two, not the sum.
	type opened struct {
		x   *lexical.Index
		err error
	}
	lex := make(chan opened, 1)
	go func() {
		x, err := lexical.Open(ctx, filepath.Join(o.Data, "lexical"))
		lex <- opened{x, err}
	}()
	defer func() {
		if lex != nil { // returned before taking it: close it unused
			if r := <-lex; r.x != nil {
				r.x.Close()
			}
		}
	}()

	switch o.Store {
	case "", "embedded":
		vs, err := memstore.Open(ctx, filepath.Join(o.Data, "vectors"))
		if err != nil {
			return nil, err
		}
		a.Vectors = vs
		a.Follow.Follow(vs)
	case "milvus":
		if o.MilvusAddr == "" {
			return nil, citebook.Errorf(citebook.EINVALID, "--store milvus needs --milvus-addr or MILVUS_ADDR")
		}
		vs, err := milvus.Open(ctx, milvus.Config{Addr: o.MilvusAddr, Collection: o.MilvusCollection,
			Dim: emb.Version().Dimension})
		if err != nil {
			return nil, err
		}
		a.Vectors = vs
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "unknown store %q (embedded or milvus)", o.Store)
	}
	a.closers = append(a.closers, a.Vectors.Close)

	r := <-lex
	lex = nil
	if r.err != nil {
		return nil, r.err
	}
	a.Lexical = r.x
	a.closers = append(a.closers, a.Lexical.Close)
	if r, ok := a.Lexical.(index.Reloader); ok {
		a.Follow.Follow(r)
	}

	fp, _ := ctx.Value(failPointKey{}).(func(string))
	a.Builder = index.NewBuilder(a.Meta, a.Vectors, a.Lexical, a.Embed, index.BuilderOptions{
		Reembed: o.Reembed, Logger: a.Log, Parse: a.parser(),
		BatchSize: o.BatchSize, FailPoint: fp})
	return a, nil
}

// Close closes everything the app opened, newest first.
func (a *app) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	a.closers = nil
	if err := errors.Join(errs...); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "closing the library")
	}
	return nil
}

// parser reads books with OCR for scanned PDFs when tesseract and pdftoppm
// are installed; otherwise such PDFs are refused with a note on how to
// enable OCR. The tools are looked up at the first parse, so commands that
// never parse do not pay for it; OCR progress goes to the log page by page.
func (a *app) parser() func(ctx context.Context, path string) (*ingest.Document, error) {
	find := sync.OnceValues(func() (*ingest.Tesseract, error) {
		render, err := ingest.FindPoppler()
		if err != nil {
			return nil, err
		}
		return ingest.FindTesseract(context.Background(), render, a.Opts.OCRLanguages)
	})
	return func(ctx context.Context, path string) (*ingest.Document, error) {
		limits := ingest.Limits{Timeout: a.Opts.ParseTimeout}
		tess, err := find()
		if err != nil {
			a.Log.DebugContext(ctx, "OCR off", "reason", err)
			return limits.ParseFile(ctx, path)
		}
		return ingest.ParseOptions{Limits: limits, OCR: tess, Progress: func(done, total int) {
			a.Log.InfoContext(ctx, "OCR", "file", filepath.Base(path), "pages_done", done, "pages", total)
		}}.ParseFile(ctx, path)
	}
}

// recoverJobs marks abandoned the index jobs whose process was killed, so
// no command shows them running forever; every command opening a library
// runs it. Failing to is logged, not fatal: the builder checks again before
// it builds a book.
func recoverJobs(ctx context.Context, meta index.Meta, log *slog.Logger) {
	dead, err := index.RecoverJobs(ctx, meta, "")
	for _, j := range dead {
		log.WarnContext(ctx, "index job abandoned: its process ended without finishing", "job", j.ID, "book", j.BookID,
			"version", j.Version, "owner", j.Owner.String())
	}
	if err != nil {
		log.WarnContext(ctx, "cannot check for abandoned index jobs", "err", err)
	}
}

// listen wakes this process when another one changes a PostgreSQL library:
// a logged switch or deletion syncs the in-memory indexes at once (not at
// the next poll) and a queued job wakes the runner (index/pgnotify). On
// SQLite it does nothing; the polls stay the only way.
func (a *app) listen(ctx context.Context, runner *index.Runner) {
	if a.Meta.Dialect() != "postgres" {
		return
	}
	l := pgnotify.New(a.Opts.Meta, a.Log)
	l.On(pgnotify.Changes, func(ctx context.Context) {
		if err := a.Follow.Sync(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("cannot follow library changes", "err", err)
		}
	})
	if runner != nil {
		l.On(pgnotify.Jobs, func(context.Context) { runner.Wake() })
	}
	go l.Run(ctx)
}

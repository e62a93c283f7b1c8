package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"golang.org/x/time/rate"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
	"github.com/citebook/citebook/web"
	"github.com/citebook/citebook/web/auth"
)

// serveFlags are the flags of `citebook serve`.
type serveFlags struct {
	cfg      *library.Config
	mcpStdio bool
	tenant   string
	user     string
	groups   []string
	admin    bool
	pprof    string
}

func newServeCmd() *cobra.Command {
	f := &serveFlags{cfg: newConfig()}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the JSON API, the MCP server and the reader page",
		Long: `Serve runs the HTTP server: the JSON API under /v1 (see /openapi.json),
MCP over streamable HTTP at /mcp, Prometheus metrics at /metrics, and the
reader page at /.

Every request needs "Authorization: Bearer <token>" (citebook tokens create).
Zero-config mode: while no token has ever been created and --addr is a
loopback address (127.0.0.1:8080, localhost:8080, [::1]:8080), requests
without a token run as the local admin --tenant/--user, so a fresh install
is usable from the same machine; the log says so. In this mode only
loopback Host names and same-origin browser requests are answered. The
first token created (even by another process, even while serving) turns
the mode off for good, also after every token is revoked. On any other
address a token is always required. Browser pages of other origins may use
the API with a token only when listed with --cors-origin.

With --mcp-stdio, serve speaks MCP on stdin/stdout instead (for desktop
agents), as the principal of --token or of --tenant/--user/--groups/--admin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fs := cmd.Flags()
	c := f.cfg
	addLibraryFlags(fs, c)
	addAnswerFlags(fs, c)
	fs.StringVar(&c.Serve.Addr, "addr", c.Serve.Addr, "listen address (env CITEBOOK_ADDR)")
	fs.Float64Var(&c.Serve.Rate, "rate", c.Serve.Rate, "requests per second allowed per token (0: unlimited)")
	fs.IntVar(&c.Serve.Burst, "burst", c.Serve.Burst, "requests a token may send at once above --rate")
	fs.Int64Var(&c.Serve.MaxUpload, "max-upload", c.Serve.MaxUpload, "largest book upload in bytes")
	fs.BoolVar(&f.mcpStdio, "mcp-stdio", false, "serve MCP on stdin/stdout instead of HTTP")
	// A token from the environment is used but never shown as the flag's
	// default in --help.
	envToken := c.Serve.Token
	fs.StringVar(&c.Serve.Token, "token", "", "with --mcp-stdio: run as this token's principal (env CITEBOOK_TOKEN)")
	c.Serve.Token = envToken
	fs.StringVar(&f.tenant, "tenant", defaultTenant, "tenant of the local principal (zero-config and --mcp-stdio)")
	fs.StringVar(&f.user, "user", "local", "user of the local principal")
	fs.StringSliceVar(&f.groups, "groups", nil, "groups of the local principal (--mcp-stdio)")
	fs.BoolVar(&f.admin, "admin", true, "the --mcp-stdio principal is a tenant admin")
	fs.IntVar(&c.Serve.Workers, "index-workers", c.Serve.Workers, "index jobs this server runs at once (a job running over a minute stops counting, so small books never wait behind a huge one); 0 leaves them to citebook worker processes")
	fs.DurationVar(&c.JobDeadline, "job-deadline", c.JobDeadline, "longest an index job may run before it is cancelled and fails")
	fs.IntVar(&c.Serve.Procs, "procs", c.Serve.Procs, "Go scheduler processors while serving (0: the CPUs; GOMAXPROCS overrides it); the default, one more than the CPUs, keeps one free to read requests while the others retrieve in turn (--search-concurrency)")
	fs.StringVar(&f.pprof, "pprof", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (profiling)")
	fs.StringSliceVar(&c.Serve.CORSOrigins, "cors-origin", c.Serve.CORSOrigins, "browser origins allowed to call the API with a token, e.g. https://app.example.com (env CITEBOOK_CORS_ORIGINS, comma-separated)")
	return cmd
}

// defaultMemoryLimit is the soft limit serve gives the Go runtime when
// GOMEMLIMIT is unset. The chunk texts, metadata and postings on the Go heap
// grow with the library (the vectors and codes sit outside it), and the
// default collector lets the heap reach twice what is live before it
// collects: 2.3 GB of RSS at 300k chunks. Below 150k chunks it stays under
// 1 GB anyway, and a limit near the live heap would only cost CPU, so none
// is set there; above, 256 MiB plus 3 MiB per 1,000 chunks (1,156 MiB at
// 300k), measured in bench/load.sh.
func defaultMemoryLimit(chunks int) int64 {
	if chunks < 150_000 {
		return 0
	}
	return 256<<20 + int64(chunks)*(3<<20)/1000
}

// memoryLimit applies defaultMemoryLimit to the metadata's count of chunk
// rows unless GOMEMLIMIT is set; a missing or unreadable database sets
// nothing (the library's own open then reports it).
func memoryLimit(ctx context.Context, c library.Config) (chunks int, limit int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, 0
	}
	if !libraryExists(c) {
		return 0, 0 // a new library: nothing to size
	}
	db, err := library.OpenMeta(ctx, c)
	if err != nil {
		return 0, 0
	}
	defer db.Close()
	if chunks, err = db.ChunkRows(ctx); err != nil {
		return 0, 0
	}
	if limit = defaultMemoryLimit(chunks); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return chunks, limit
}

func runServe(cmd *cobra.Command, f *serveFlags) error {
	ctx := cmd.Context()
	c := f.cfg
	// The limit is set before the library loads: decoding the snapshots
	// is the peak (2.2 GB at 300k chunks when set after).
	chunks, limit := memoryLimit(ctx, *c)
	a, pipeline, err := library.OpenAnswering(ctx, *c, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	if limit > 0 {
		a.Log.Info("Go memory limit set from the library size (GOMEMLIMIT overrides it)", "chunks", chunks, "limit_mib", limit>>20)
	}
	// Set once the library is loaded, so loading runs as before (its
	// workers are sized by GOMAXPROCS); see Serve.Procs.
	if os.Getenv("GOMAXPROCS") == "" && c.Serve.Procs > 0 {
		runtime.GOMAXPROCS(c.Serve.Procs)
	}
	tok, err := ingest.NewTokenizer()
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "loading the tokenizer")
	}
	tokens := auth.NewStore(a.Meta.SQL())
	runner := a.Runner(index.RunnerOptions{Workers: c.Serve.Workers, QueueOnly: c.Serve.Workers == 0})
	if c.Serve.Workers == 0 {
		a.Log.Info("index jobs are left to `citebook worker` processes on this library (--index-workers 0)")
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := runner.Close(cctx); err != nil {
			a.Log.Warn("index job still running at shutdown; it will fail and can be resumed", "err", err)
		}
	}()
	// Books another process indexes or deletes are served within a second.
	go a.Follow.Run(ctx, followEvery)
	a.Listen(ctx, runner)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg := webConfig(a, pipeline, c, runner, tokens, tok, reg)
	if r, err := ingest.FindPoppler(); err == nil {
		cfg.Renderer = r
	} else {
		a.Log.Info("page images off; the reader shows page text", "reason", err)
	}
	local := citebook.Principal{Tenant: f.tenant, User: f.user, Groups: f.groups, Admin: f.admin}
	if f.mcpStdio {
		if c.Serve.Token != "" {
			t, err := tokens.Lookup(ctx, c.Serve.Token)
			if err != nil {
				return err
			}
			local = t.Principal
		}
		srv, err := web.New(cfg)
		if err != nil {
			return err
		}
		a.Log.Info("serving MCP on stdio", "tenant", local.Tenant, "user", local.User)
		// The command's stdin/stdout are os.Stdin/os.Stdout unless a test
		// redirected them.
		tr := &mcp.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}}
		if err := srv.NewMCPServer(&local).Run(ctx, tr); err != nil && ctx.Err() == nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "MCP session ended")
		}
		return nil
	}

	issued, err := tokens.AnyIssued(ctx)
	if err != nil {
		return err
	}
	active, err := tokens.Active(ctx)
	if err != nil {
		return err
	}
	switch {
	case !issued && isLoopback(c.Serve.Addr):
		// The server re-checks per request: a token created later, by any
		// process, ends the mode at once.
		local.Groups, local.Admin = nil, true
		cfg.LocalPrincipal = &local
		a.Log.Warn("zero-config mode: no API token has been created and the server is bound to loopback, so requests without a token from this machine run as the local admin; creating a token turns this off for good",
			"tenant", local.Tenant, "user", local.User, "addr", c.Serve.Addr)
	case active == 0:
		a.Log.Warn("no API tokens exist and the server is not bound to loopback: every request will be refused until you run `citebook tokens create`",
			"addr", c.Serve.Addr)
	}
	srv, err := web.New(cfg)
	if err != nil {
		return err
	}
	if _, err := srv.SweepUploads(ctx); err != nil {
		a.Log.Warn("cannot sweep orphaned uploads", "err", err)
	}
	if f.pprof != "" {
		if err := servePprof(ctx, f.pprof, a.Log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", c.Serve.Addr)
	if err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "cannot listen on %s", c.Serve.Addr)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn)}
	a.Log.Info("serving", "addr", "http://"+ln.Addr().String(), "data", c.Data, "store", c.Store, "llm", c.LLM.Provider)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return citebook.Wrap(err, citebook.EINTERNAL, "server stopped")
	case <-ctx.Done():
	}
	a.Log.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return citebook.Wrap(err, citebook.EINTERNAL, "shutdown")
	}
	return nil
}

// followEvery is how often serve polls the metadata for changes another
// process made (searches also sync first, so this only warms the reload).
const followEvery = 500 * time.Millisecond

// nopWriteCloser keeps the MCP transport from closing stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// servePprof exposes the Go profiler on its own listener, never on the API
// port, and only on loopback since profiles reveal internals.
func servePprof(ctx context.Context, addr string, log *slog.Logger) error {
	if !isLoopback(addr) {
		return citebook.Errorf(citebook.EINVALID, "--pprof must be a loopback address such as 127.0.0.1:6060")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "cannot listen on %s", addr)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	go func() { <-ctx.Done(); hs.Close() }()
	log.Info("profiler listening", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}

// isLoopback reports whether addr binds only the loopback interface; an
// empty host (":8080") binds every interface and is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// webConfig is the server serve runs over an opened library: the pipeline
// answers and searches, tokens are checked through a one-second cache, and
// the readiness probes name their backends. BenchmarkServeSearch builds the
// same server in process.
func webConfig(a *library.Library, pipeline *qa.Pipeline, c *library.Config, runner *index.Runner, tokens *auth.Store, tok *ingest.Tokenizer, reg *prometheus.Registry) web.Config {
	return web.Config{
		Library: a.Meta, Indexer: runner, Asker: pipeline, Searcher: pipeline,
		Previewer: previewer{tok: tok, opts: ingest.DefaultChunkOptions(), limits: c.ParseLimits()},
		ACL:       a.ACL, Grants: a.Grants, CORSOrigins: c.Serve.CORSOrigins,
		Tokens: auth.NewCached(tokens), DataDir: c.Data, MaxUpload: c.Serve.MaxUpload,
		RatePerToken: rate.Limit(c.Serve.Rate), RateBurst: c.Serve.Burst, Registry: reg, Logger: a.Log,
		Ready: map[string]web.Check{
			// Each names its backend, so an operator sees which of
			// PostgreSQL and Milvus is down.
			"metadata": func(ctx context.Context) error {
				return citebook.Wrap(a.Meta.Ping(ctx), citebook.EUNAVAILABLE, "metadata database (%s) unreachable", a.Meta.Dialect())
			},
			"vectors": func(ctx context.Context) error {
				_, err := a.Vectors.IDs(ctx, "readyz-probe")
				return citebook.Wrap(err, citebook.EUNAVAILABLE, "vector store (%s) unreachable", c.Store)
			},
		},
	}
}

package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	"github.com/citebook/citebook"
)

// Config holds the server's dependencies and limits. Library, Indexer,
// Asker, Searcher, Previewer, ACL, Tokens, DataDir and Registry are required.
type Config struct {
	Library   Library
	Indexer   Indexer
	Asker     Asker
	Searcher  Searcher
	Previewer Previewer
	ACL       Authorizer
	Tokens    TokenVerifier
	// DataDir is where uploads are kept (DataDir/books) for the reader and
	// for re-indexing.
	DataDir string
	// LocalPrincipal, when set, is used for requests without a token as long
	// as Tokens.AnyIssued is false (zero-config mode), checked per request so
	// `citebook tokens create` in another process turns the mode off at
	// once, for good. serve sets it only when bound to loopback. In this mode
	// only loopback Host names and same-origin browser requests are served.
	LocalPrincipal *citebook.Principal
	// CORSOrigins are the browser origins (scheme://host[:port]) whose pages
	// may call the API with a token; every other cross-origin browser
	// request is refused.
	CORSOrigins []string
	// Grants manages ACL grants through /v1/grants.
	Grants GrantManager
	// MaxBody limits JSON bodies; MaxUpload limits uploaded books.
	MaxBody   int64
	MaxUpload int64
	// RatePerToken and RateBurst bound requests per token (and for the local
	// principal); 0 disables the limit.
	RatePerToken rate.Limit
	RateBurst    int
	// AuthFailRate and AuthFailBurst bound failed authentications per client
	// address (IPv6 by /64) and per presented secret, so tokens cannot be
	// guessed at speed; 0 takes the defaults, a negative rate disables it.
	AuthFailRate  rate.Limit
	AuthFailBurst int
	// Registry receives the server's metrics, served at /metrics to admins
	// (and to the local principal in zero-config mode).
	Registry *prometheus.Registry
	// Ready are the probes /readyz runs, by name.
	Ready  map[string]Check
	Logger *slog.Logger
	// Renderer draws page images (optional; without it the reader shows text).
	Renderer PageRenderer
	// PageCacheBytes caps the disk cache of page images; the least recently
	// written are removed past it.
	PageCacheBytes int64
}

// Server is the HTTP face of citebook.
type Server struct {
	cfg      Config
	log      *slog.Logger
	echo     *echo.Echo
	metrics  *metrics
	limits   *limiters
	failures *limiters // failed authentications by client address and by secret
	local    *zeroConfig
	pages    *pageImages // nil without a renderer
}

// Defaults chosen for books: PDFs of a few hundred pages are tens of MB.
const (
	defaultMaxBody   = 1 << 20
	defaultMaxUpload = 256 << 20
	defaultPageCache = 512 << 20 // ~2,500 page images at 1000 px
)

// Failed authentications allowed per client address and per secret: a
// burst covers a mistyped token or two, the rate leaves guessing hopeless.
const (
	defaultAuthFailRate  rate.Limit = 1
	defaultAuthFailBurst int        = 10
)

// New builds the server and registers its metrics on cfg.Registry.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Library == nil, cfg.Indexer == nil, cfg.Asker == nil, cfg.Searcher == nil,
		cfg.Previewer == nil, cfg.ACL == nil, cfg.Tokens == nil, cfg.Grants == nil, cfg.Registry == nil:
		return nil, citebook.Errorf(citebook.EINVALID, "web: missing dependency in Config")
	case cfg.DataDir == "":
		return nil, citebook.Errorf(citebook.EINVALID, "web: DataDir is required")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = defaultMaxBody
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = defaultMaxUpload
	}
	if cfg.PageCacheBytes <= 0 {
		cfg.PageCacheBytes = defaultPageCache
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.AuthFailRate == 0 {
		cfg.AuthFailRate, cfg.AuthFailBurst = defaultAuthFailRate, max(cfg.AuthFailBurst, defaultAuthFailBurst)
	}
	for _, o := range cfg.CORSOrigins {
		if err := validCORSOrigin(o); err != nil {
			return nil, err
		}
	}
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, metrics: m, limits: newLimiters(cfg.RatePerToken, cfg.RateBurst),
		failures: newLimiters(max(cfg.AuthFailRate, 0), cfg.AuthFailBurst),
		local:    &zeroConfig{p: cfg.LocalPrincipal, issued: cfg.Tokens.AnyIssued, log: cfg.Logger},
		pages:    newPageImages(cfg.Renderer, cfg.DataDir, cfg.PageCacheBytes)}
	s.echo = s.routes()
	return s, nil
}

// Handler is the whole HTTP surface, ready for an http.Server.
func (s *Server) Handler() http.Handler { return s.echo }

// routes registers every route; the OpenAPI test checks this list against
// openapi.json.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.JSONSerializer = jsonSerializer{}
	e.HTTPErrorHandler = func(err error, c echo.Context) { writeError(s.log, c, err) }
	// Rate limits key on the peer address itself: X-Forwarded-For is
	// whatever the client wants it to be.
	e.IPExtractor = echo.ExtractIPDirect()
	e.Use(s.observe)
	if len(s.cfg.CORSOrigins) > 0 {
		e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
			AllowOrigins:  s.cfg.CORSOrigins,
			AllowMethods:  []string{http.MethodGet, http.MethodPost, http.MethodDelete},
			AllowHeaders:  []string{echo.HeaderAuthorization, echo.HeaderContentType, echo.HeaderAccept, "Mcp-Session-Id", "Mcp-Protocol-Version"},
			ExposeHeaders: []string{echo.HeaderLocation, "Retry-After", "Mcp-Session-Id"},
			MaxAge:        600,
		}))
	}
	e.Use(s.zeroConfigHost)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})), s.authenticate, s.adminOnly)
	e.GET("/openapi.json", s.openapi)
	s.uiRoutes(e)

	body := s.limitBody(s.cfg.MaxBody)
	upload := s.limitBody(s.cfg.MaxUpload)
	v1 := e.Group("/v1", s.authenticate)
	v1.GET("/me", s.me)
	v1.GET("/books", s.listBooks)
	v1.POST("/books", s.uploadBook, s.adminOnly, upload)
	v1.GET("/books/:id", s.getBook)
	v1.DELETE("/books/:id", s.deleteBook, s.adminOnly)
	v1.GET("/books/:id/pages/:page", s.getPage)
	v1.GET("/books/:id/jobs", s.bookJobs, s.adminOnly)
	v1.POST("/books/:id/jobs", s.reindex, s.adminOnly, body)
	v1.GET("/jobs/:id", s.getJob, s.adminOnly)
	v1.POST("/jobs/:id/cancel", s.cancelJob, s.adminOnly)
	v1.GET("/chunks/:id", s.getChunk)
	v1.POST("/ask", s.ask, body)
	v1.POST("/search", s.search, body)
	v1.POST("/preview", s.preview, upload)
	v1.GET("/grants", s.listGrants, s.adminOnly)
	v1.POST("/grants", s.addGrant, s.adminOnly, body)
	v1.DELETE("/grants/:id", s.removeGrant, s.adminOnly)

	mcpHandler := s.mcpRoute()
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		e.Add(m, "/mcp", mcpHandler, s.authenticate, body)
	}
	return e
}

// principalKey is the echo context key of the authenticated principal.
const principalKey = "citebook.principal"

func principalOf(c echo.Context) citebook.Principal {
	p, _ := c.Get(principalKey).(citebook.Principal)
	return p
}

// authenticate resolves the bearer token to a principal, applies the
// browser origin rules (origin.go) and the per-token rate limit. Without a
// token only the zero-config local principal is accepted.
//
// Invariant: a request runs as a principal only with a valid token, or
// without one while zero-config mode is on (no token ever created, loopback
// Host, not a cross-origin browser request). A client address or secret that
// has failed too often is answered 429 before its token is even checked, so
// guessing runs at AuthFailRate, not at the server's speed.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		var (
			key   string
			p     citebook.Principal
			local bool
		)
		h := req.Header.Get(echo.HeaderAuthorization)
		scheme, secret, _ := strings.Cut(h, " ")
		secret = strings.TrimSpace(secret)
		lp, _ := c.Get(localKey).(*citebook.Principal)
		switch {
		case h == "" && lp != nil:
			key, p, local = "local", *lp, true
		case h == "":
			return citebook.Errorf(citebook.EUNAUTHORIZED, "missing bearer token (create one with: citebook tokens create)")
		default:
			failKeys := []string{"addr:" + clientNet(c.RealIP()), "secret:" + secretKey(secret)}
			if wait, ok := s.failures.unblocked(failKeys...); !ok {
				return tooMany(c, wait, "too many failed authentications")
			}
			var err error
			if !strings.EqualFold(scheme, "Bearer") || secret == "" {
				err = citebook.Errorf(citebook.EUNAUTHORIZED, "the Authorization header must be: Bearer <token>")
			} else {
				key, p, err = s.cfg.Tokens.Verify(req.Context(), secret)
			}
			if err != nil {
				if citebook.ErrorCode(err) == citebook.EUNAUTHORIZED {
					s.failures.fail(failKeys...)
				}
				return err
			}
		}
		if err := s.checkOrigin(req, local); err != nil {
			return err
		}
		if wait, ok := s.limits.allow(key); !ok {
			return tooMany(c, wait, "too many requests")
		}
		c.Set(principalKey, p)
		c.SetRequest(req.WithContext(withPrincipal(req.Context(), key, p)))
		return next(c)
	}
}

// adminOnly guards the routes that change the library.
func (s *Server) adminOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !principalOf(c).Admin {
			return citebook.Errorf(citebook.EFORBIDDEN, "this action needs an admin token")
		}
		return next(c)
	}
}

// limitBody caps the request body; a declared length over the limit is
// refused before reading, a chunked body when the limit is crossed.
func (s *Server) limitBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return citebook.Errorf(citebook.ETOOLARGE, "request body is larger than %d bytes", limit)
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			return next(c)
		}
	}
}

type ctxKey struct{}

type ctxPrincipal struct {
	key string
	p   citebook.Principal
}

// withPrincipal carries the principal to handlers that only see a
// context (the MCP tools behind /mcp).
func withPrincipal(ctx context.Context, key string, p citebook.Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, ctxPrincipal{key: key, p: p})
}

func principalFromContext(ctx context.Context) (ctxPrincipal, bool) {
	v, ok := ctx.Value(ctxKey{}).(ctxPrincipal)
	return v, ok
}

// tooMany answers 429 with Retry-After in whole seconds.
func tooMany(c echo.Context, wait time.Duration, what string) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	return citebook.Errorf(citebook.ERATELIMIT, "%s; retry in %s", what, wait.Round(time.Second))
}

// clientNet is the rate-limit key of a client address: the IPv4 address,
// or the /64 of an IPv6 one (one host usually holds the whole /64).
func clientNet(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// secretKey names a presented secret in the failure limiter without keeping
// the secret in memory.
func secretKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}

// limiters holds one token bucket per key (a token, a client address).
type limiters struct {
	mu    sync.Mutex
	r     rate.Limit
	burst int
	m     map[string]*rate.Limiter
}

func newLimiters(r rate.Limit, burst int) *limiters {
	if burst <= 0 {
		burst = max(1, int(math.Ceil(float64(r))))
	}
	return &limiters{r: r, burst: burst, m: map[string]*rate.Limiter{}}
}

// allow takes a token from key's bucket, or says how long to wait.
func (l *limiters) allow(key string) (time.Duration, bool) {
	if l.r <= 0 {
		return 0, true
	}
	l.mu.Lock()
	lim, ok := l.m[key]
	if !ok {
		lim = rate.NewLimiter(l.r, l.burst)
		l.m[key] = lim
	}
	l.mu.Unlock()
	now := time.Now()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(d, time.Second), false
	}
	return 0, true
}

// maxLimiters bounds the buckets kept; above it, full (idle) buckets are
// dropped, since a full bucket is the same as a new one.
const maxLimiters = 10000

// unblocked reports whether every key still has a token, without taking
// one, or how long until they all do.
func (l *limiters) unblocked(keys ...string) (time.Duration, bool) {
	if l.r <= 0 {
		return 0, true
	}
	now := time.Now()
	var wait time.Duration
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if lim, ok := l.m[k]; ok {
			if t := lim.TokensAt(now); t < 1 {
				wait = max(wait, time.Duration((1-t)/float64(l.r)*float64(time.Second)), time.Second)
			}
		}
	}
	return wait, wait == 0
}

// fail takes a token from every key's bucket.
func (l *limiters) fail(keys ...string) {
	if l.r <= 0 {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= maxLimiters {
		for k, lim := range l.m {
			if lim.TokensAt(now) >= float64(l.burst) {
				delete(l.m, k)
			}
		}
	}
	for _, k := range keys {
		lim, ok := l.m[k]
		if !ok {
			lim = rate.NewLimiter(l.r, l.burst)
			l.m[k] = lim
		}
		lim.AllowN(now, 1)
	}
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz runs every probe at once, each with its own short deadline, so a
// store that hangs is reported as such while the others still report their
// own state (the metadata database and Milvus are told apart); any failure
// is 503 so a load balancer stops sending traffic.
func (s *Server) readyz(c echo.Context) error {
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(s.cfg.Ready))
	for name, check := range s.cfg.Ready {
		go func() {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
			defer cancel()
			results <- result{name, check(ctx)}
		}()
	}
	checks := map[string]string{}
	ok := true
	for range s.cfg.Ready {
		r := <-results
		if r.err != nil {
			s.log.Warn("readiness check failed", "check", r.name, "err", r.err)
			checks[r.name] = citebook.ErrorMessage(r.err)
			ok = false
			continue
		}
		checks[r.name] = "ok"
	}
	status := http.StatusOK
	if !ok {
		status = HTTPStatus(citebook.EUNAVAILABLE)
	}
	return c.JSON(status, map[string]any{"ready": ok, "checks": checks})
}

func (s *Server) me(c echo.Context) error {
	return c.JSON(http.StatusOK, principalOf(c))
}

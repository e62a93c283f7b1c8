package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/citebook/citebook"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Remote is an embedder backed by an embedding server reached through
// langchaingo. Texts go out in batches of Config.BatchSize; each HTTP attempt
// has its own timeout and 429, 5xx and network failures are retried with
// exponential backoff before an EUNAVAILABLE error is returned.
type Remote struct {
	inner   embeddings.Embedder
	queries embeddings.Embedder // inner, or the Config.QueryModel embedder
	version citebook.EmbeddingVersion
	target  string // provider and URL, for error messages
}

// NewOpenAI returns an embedder for the OpenAI API or any server speaking
// its /embeddings endpoint (vLLM, LiteLLM, llama.cpp, LocalAI...).
func NewOpenAI(cfg Config) (*Remote, error) {
	cfg = withDefaults(cfg, DefaultOpenAIURL, DefaultOpenAIModel)
	if err := checkURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	key := cfg.APIKey
	if key == "" {
		if cfg.BaseURL == DefaultOpenAIURL {
			return nil, citebook.Errorf(citebook.EINVALID, "the OpenAI embedder needs an API key")
		}
		// Self-hosted compatible servers often need no key, but langchaingo
		// insists on one; any placeholder is ignored by such servers.
		key = "none"
	}
	client := func(model string) (*openai.LLM, error) {
		llm, err := openai.New(
			openai.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")),
			openai.WithToken(key),
			openai.WithEmbeddingModel(model),
			openai.WithHTTPClient(retryingClient(cfg)),
		)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "cannot configure the OpenAI embedder")
		}
		return llm, nil
	}
	llm, err := client(cfg.Model)
	if err != nil {
		return nil, err
	}
	var query embeddings.EmbedderClient
	if cfg.QueryModel != "" && cfg.QueryModel != cfg.Model {
		if query, err = client(cfg.QueryModel); err != nil {
			return nil, err
		}
	}
	return newRemote(ProviderOpenAI, cfg, llm, query)
}

// NewOllama returns an embedder for an Ollama server (its /api/embed
// endpoint, one request per text as langchaingo sends them).
func NewOllama(cfg Config) (*Remote, error) {
	cfg = withDefaults(cfg, DefaultOllamaURL, DefaultOllamaModel)
	// langchaingo calls log.Fatal on an unparsable URL; check it first.
	if err := checkURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	llm, err := ollama.New(
		ollama.WithServerURL(strings.TrimRight(cfg.BaseURL, "/")),
		ollama.WithModel(cfg.Model),
		ollama.WithHTTPClient(retryingClient(cfg)),
	)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot configure the Ollama embedder")
	}
	return newRemote(ProviderOllama, cfg, llm, nil)
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return citebook.Errorf(citebook.EINVALID, "embedding server URL %q must be an http(s) URL", raw)
	}
	return nil
}

func withDefaults(cfg Config, url, model string) Config {
	if cfg.BaseURL == "" {
		cfg.BaseURL = url
	}
	if cfg.Model == "" {
		cfg.Model = model
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	return cfg
}

// newRemote wraps client; query, when not nil, embeds questions instead
// (Config.QueryModel).
func newRemote(provider string, cfg Config, client, query embeddings.EmbedderClient) (*Remote, error) {
	// Newlines are kept: langchaingo would strip them by rewriting the
	// caller's slice in place, and current models do not need it.
	wrap := func(c embeddings.EmbedderClient) (embeddings.Embedder, error) {
		e, err := embeddings.NewEmbedder(c,
			embeddings.WithBatchSize(cfg.BatchSize),
			embeddings.WithStripNewLines(false))
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "cannot configure the %s embedder", provider)
		}
		return e, nil
	}
	inner, err := wrap(client)
	if err != nil {
		return nil, err
	}
	queries := inner
	if query != nil {
		if queries, err = wrap(query); err != nil {
			return nil, err
		}
	}
	r := &Remote{
		inner:   inner,
		queries: queries,
		version: citebook.EmbeddingVersion{Provider: provider, Model: cfg.Model, Dimension: cfg.Dimension},
		target:  provider + " at " + cfg.BaseURL,
	}
	if r.version.Dimension == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout*time.Duration(cfg.MaxRetries+1))
		defer cancel()
		v, err := r.EmbedQuery(ctx, "dimension probe")
		if err != nil {
			return nil, err
		}
		r.version.Dimension = len(v)
	}
	return r, nil
}

// Version identifies the model; its dimension was configured or probed.
func (r *Remote) Version() citebook.EmbeddingVersion { return r.version }

// EmbedDocuments embeds texts in batches, returning one vector per text.
func (r *Remote) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	vecs, err := r.inner.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, r.fail(err)
	}
	if len(vecs) != len(texts) {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "embedding service %s returned %d vectors for %d texts", r.target, len(vecs), len(texts))
	}
	for _, v := range vecs {
		if err := r.check(v); err != nil {
			return nil, err
		}
	}
	return vecs, nil
}

// EmbedQuery embeds one text.
func (r *Remote) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := r.queries.EmbedQuery(ctx, text)
	if err != nil {
		return nil, r.fail(err)
	}
	if err := r.check(v); err != nil {
		return nil, err
	}
	return v, nil
}

func (r *Remote) check(v []float32) error {
	if len(v) == 0 || (r.version.Dimension != 0 && len(v) != r.version.Dimension) {
		return citebook.Errorf(citebook.EUNAVAILABLE, "embedding service %s returned a vector of dimension %d, expected %d (model %s)",
			r.target, len(v), r.version.Dimension, r.version.Model)
	}
	return nil
}

func (r *Remote) fail(err error) error {
	return citebook.Wrap(err, citebook.EUNAVAILABLE, "embedding service %s (model %s) failed", r.target, r.version.Model)
}

// retryingClient is the http.Client handed to langchaingo: its transport
// retries and times out each attempt, which langchaingo does not.
func retryingClient(cfg Config) *http.Client {
	return &http.Client{Transport: &retryTransport{
		base:    http.DefaultTransport,
		retries: cfg.MaxRetries,
		timeout: cfg.Timeout,
		backoff: 200 * time.Millisecond,
		maxWait: 10 * time.Second,
	}}
}

// retryTransport retries 429, 5xx and network errors with exponential
// backoff and jitter (honouring Retry-After), giving each attempt its own
// timeout. Embedding requests are idempotent, so POSTs are safe to repeat.
type retryTransport struct {
	base    http.RoundTripper
	retries int
	timeout time.Duration
	backoff time.Duration
	maxWait time.Duration
}

// RoundTrip sends req, retrying as described on retryTransport.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 && req.Body != nil {
			if req.GetBody == nil {
				return nil, errors.New("request body cannot be replayed for a retry")
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(parent)
			r.Body = body
		}
		ctx, cancel := context.WithTimeout(parent, t.timeout)
		resp, err := t.base.RoundTrip(r.WithContext(ctx))
		retry := attempt < t.retries && parent.Err() == nil &&
			(err != nil || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500)
		if !retry {
			if err != nil {
				cancel()
				if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
					return nil, fmt.Errorf("no response within %s: %w", t.timeout, err)
				}
				return nil, err
			}
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		wait := t.backoff << attempt
		if resp != nil {
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s >= 0 {
				wait = time.Duration(s) * time.Second
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		cancel()
		wait = min(wait, t.maxWait)
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1)) // jitter spreads retries of parallel workers
		timer := time.NewTimer(wait)
		select {
		case <-parent.Done():
			timer.Stop()
			return nil, parent.Err()
		case <-timer.C:
		}
	}
}

// cancelOnClose releases an attempt's timeout context once the caller has
// read the response.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close closes the body and releases the attempt's context.
func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

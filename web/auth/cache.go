package auth

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/citebook/citebook"
)

// CacheTTL is how long Cached trusts a verified token: a token revoked in
// the database (by `citebook tokens revoke`, from any process) is refused
// by every server within this time.
const CacheTTL = time.Second

// verifier is what Cached wraps (a *Store).
type verifier interface {
	Verify(ctx context.Context, secret string) (string, citebook.Principal, error)
	AnyIssued(ctx context.Context) (bool, error)
}

// Cached remembers successful verifications for CacheTTL, so a busy server
// does not look every request's token up in the database (3.6% of a
// search's CPU). Failures are never remembered: a new token works at once,
// and a wrong one is counted by the caller's failure limit every time.
// Secrets are held only as their sha256.
type Cached struct {
	v      verifier
	now    func() time.Time
	issued atomic.Bool // once a token was issued, zero-config mode is off for good

	mu sync.Mutex
	m  map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	key     string
	p       citebook.Principal
	expires time.Time
}

// maxCachedTokens bounds the cache; a full cache drops expired entries, or
// starts over.
const maxCachedTokens = 4096

// NewCached wraps v.
func NewCached(v verifier) *Cached {
	return &Cached{v: v, now: time.Now, m: map[[sha256.Size]byte]cachedToken{}}
}

// Verify answers from the cache while the entry is younger than CacheTTL,
// else from the wrapped verifier.
func (c *Cached) Verify(ctx context.Context, secret string) (string, citebook.Principal, error) {
	h := sha256.Sum256([]byte(secret))
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.key, clonePrincipal(e.p), nil
	}
	key, p, err := c.v.Verify(ctx, secret)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.m, h)
		return key, p, err
	}
	if len(c.m) >= maxCachedTokens {
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCachedTokens {
			clear(c.m)
		}
	}
	// The entry's life starts before the lookup, so it never outlives a
	// revocation committed after the lookup read the row by more than the TTL.
	c.m[h] = cachedToken{key: key, p: clonePrincipal(p), expires: now.Add(CacheTTL)}
	return key, p, nil
}

// AnyIssued remembers a true answer for good: tokens are never deleted.
func (c *Cached) AnyIssued(ctx context.Context) (bool, error) {
	if c.issued.Load() {
		return true, nil
	}
	ok, err := c.v.AnyIssued(ctx)
	if ok && err == nil {
		c.issued.Store(true)
	}
	return ok, err
}

// clonePrincipal copies p's groups, so no caller can change a cached entry.
func clonePrincipal(p citebook.Principal) citebook.Principal {
	p.Groups = slices.Clone(p.Groups)
	return p
}

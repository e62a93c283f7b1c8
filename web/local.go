package web

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// zeroConfig decides whether requests without a token may run as the local
// principal. The mode ends the moment any token exists — created by this
// server's process or by `citebook tokens create` in another — and, since
// tokens are only ever revoked, never comes back: revoking every token
// leaves a server that needs a token, not an open one.
//
// The check is one indexed SQLite query per request while the mode is on
// and none after, so there is no cache whose lifetime would leave a window
// in which a created token has not taken effect.
type zeroConfig struct {
	p      *citebook.Principal
	issued func(ctx context.Context) (bool, error)
	log    *slog.Logger
	off    atomic.Bool
}

// principal returns the local principal while the mode is on, nil after.
// A failed check is an error, never a fallback to the open mode.
func (z *zeroConfig) principal(ctx context.Context) (*citebook.Principal, error) {
	if z.p == nil || z.off.Load() {
		return nil, nil
	}
	issued, err := z.issued(ctx)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot check the API tokens")
	}
	if issued {
		if z.off.CompareAndSwap(false, true) {
			z.log.Warn("zero-config mode is now off: an API token exists, so every request needs a token from now on")
		}
		return nil, nil
	}
	return z.p, nil
}

// localKey is the echo context key of the local principal when zero-config
// mode serves the request.
const localKey = "citebook.local"

// zeroConfigHost runs first on every route: while zero-config mode is on it
// refuses non-loopback Host names (DNS rebinding) and hands the local
// principal to authenticate.
func (s *Server) zeroConfigHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.local.principal(c.Request().Context())
		if err != nil {
			return err
		}
		if p != nil {
			if err := checkLocalHost(c.Request()); err != nil {
				return err
			}
			c.Set(localKey, p)
		}
		return next(c)
	}
}

// Package pgnotify wakes a process when another process changes a library
// kept in PostgreSQL: the database sends NOTIFY on a channel when a book
// is switched or deleted (citebook_changes, from the change log) or a job
// is queued or a cancel requested (citebook_jobs), and the handlers
// registered here run at once instead of at the next poll.
//
// A notification is only a hint to look: the handlers read the change log
// (or the queue) from the generation they last saw, so a notification
// lost while the connection was down costs nothing but time. Every
// (re)connect runs every handler once (pgxlisten's backlog hook), which
// catches up on whatever happened while not listening, and the callers
// keep polling as before, more slowly, in case the listener itself is down.
//
// It uses github.com/jackc/pgxlisten, pgx's own LISTEN loop: it owns a
// dedicated connection, reconnects after an outage and has the backlog
// hook, which is exactly the catch-up this needs.
package pgnotify

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
)

// The channels the migrations' triggers notify.
const (
	Changes = "citebook_changes"
	Jobs    = "citebook_jobs"
)

// Listener runs handlers when channels are notified.
type Listener struct {
	dsn   string
	lg    *slog.Logger
	chans map[string]*handler
}

// New returns a listener on the PostgreSQL database at dsn.
func New(dsn string, lg *slog.Logger) *Listener {
	if lg == nil {
		lg = slog.Default()
	}
	return &Listener{dsn: dsn, lg: lg, chans: map[string]*handler{}}
}

// On runs fn whenever channel is notified and after every (re)connect.
// Calls are coalesced: a notification arriving while fn runs makes one
// more call, not one per notification. Register before Run.
func (l *Listener) On(channel string, fn func(ctx context.Context)) {
	l.chans[channel] = &handler{fn: fn, kick: make(chan struct{}, 1)}
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	ln := &pgxlisten.Listener{
		Connect:        func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, l.dsn) },
		ReconnectDelay: time.Second,
		LogError: func(ctx context.Context, err error) {
			if ctx.Err() == nil {
				l.lg.Warn("listening for library changes", "err", err)
			}
		},
	}
	for ch, h := range l.chans {
		ln.Handle(ch, h)
		go h.loop(ctx)
	}
	_ = ln.Listen(ctx) // returns only when ctx ends
}

// handler is one channel's coalescing runner.
type handler struct {
	fn   func(ctx context.Context)
	kick chan struct{}
}

func (h *handler) poke() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *handler) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
			h.fn(ctx)
		}
	}
}

// HandleNotification runs the handler (asynchronously, so the listening
// connection keeps reading).
func (h *handler) HandleNotification(context.Context, *pgconn.Notification, *pgx.Conn) error {
	h.poke()
	return nil
}

// HandleBacklog catches up after a (re)connect.
func (h *handler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.poke()
	return nil
}

package metadb

import (
	"context"
	"database/sql"

	"github.com/citebook/citebook/migrations"
)

// dialect is what differs between the databases the store runs on; every
// statement is shared (see the package comment).
type dialect struct {
	name migrations.Dialect
	bind int // placeholder style, an sqlx bind type
	// open connects to target and applies the migrations.
	open func(ctx context.Context, target string) (*sql.DB, error)
	// unique and foreignKey recognise constraint violations, which the
	// store reports as conflicts and missing books.
	unique, foreignKey func(error) bool
	// retry recognises a transaction that may succeed when run again.
	retry func(error) bool
	// lockRows: writers lock rows one by one (SELECT … FOR UPDATE
	// exists), so statements that update many shared rows lock them in a
	// fixed order first; SQLite locks the whole database instead.
	lockRows bool
	// lockChanges, when set, runs in a transaction before it logs a
	// change, so generations commit in order.
	lockChanges string
	// claimLock, when set, runs first in a transaction claiming a job from
	// the queue, and skipLocked ends its SELECT of candidates (queue.go).
	claimLock, skipLocked string
}

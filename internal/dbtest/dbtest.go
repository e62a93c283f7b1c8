// Package dbtest gives tests the metadata databases to run on: a SQLite
// file in the test's temporary folder, and a fresh database on the
// PostgreSQL server CITEBOOK_TEST_POSTGRES names (scripts/postgres.sh starts
// a throwaway one and exports it). CI sets CI=true, and there a missing
// PostgreSQL fails the test; on a developer machine without one the
// PostgreSQL half is skipped with a message saying how to run it.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the admin URL of the test server.
const Env = "CITEBOOK_TEST_POSTGRES"

// Each runs fn as two subtests, "sqlite" and "postgres", each with the
// metadata target of a new empty database: a file path, then a postgres://
// URL (see DSN).
func Each(t *testing.T, fn func(t *testing.T, target string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "meta", "citebook.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, DSN(t)) })
}

// DSN creates a database of its own for the test on the server Env names
// and returns its URL; the database is dropped when the test ends. Without
// Env the test is skipped, or fails under CI.
func DSN(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(Env)
	if admin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set; CI must start PostgreSQL (. scripts/postgres.sh, as `make test` does)", Env)
		}
		t.Skipf("%s is not set: PostgreSQL tests skipped outside CI (`. scripts/postgres.sh` starts a throwaway server and sets it)", Env)
	}
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL, got %q", Env, admin)
	}
	var raw [6]byte
	_, _ = rand.Read(raw[:])
	name := "cbt_" + hex.EncodeToString(raw[:])

	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatalf("creating test database on %s: %v", u.Redacted(), err)
	}
	t.Cleanup(func() {
		// FORCE: a test that failed half-way may leave connections open.
		if err := exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("dropping test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

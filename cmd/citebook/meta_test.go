package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/dbtest"
	"github.com/citebook/citebook/web/auth"
)

// TestMetaPostgres runs the commands against a library whose metadata is in
// PostgreSQL (--meta, or CITEBOOK_META): a book indexed and asked about
// through one data dir, its job, tokens and grants seen through another
// data dir sharing the database, as a second server would.
func TestMetaPostgres(t *testing.T) {
	dsn := dbtest.DSN(t)
	a, b := t.TempDir(), t.TempDir()
	pdf := corpus.Path(t, "books/dtc-paper.pdf")

	_, err := run(t, "index", pdf, "--data", a, "--meta", dsn, "--tenant", "acme", "--book", "dtc", "--json")
	require.NoError(t, err)
	out, err := run(t, "ask", "What is a device tree and how is it passed to the kernel?", "--data", a, "--meta", dsn,
		"--tenant", "acme", "--user", "al", "--json")
	require.NoError(t, err)
	var ans struct {
		Refused   bool                `json:"refused"`
		Citations []citebook.Citation `json:"citations"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ans))
	require.False(t, ans.Refused, out)
	require.NotEmpty(t, ans.Citations)
	require.Positive(t, ans.Citations[0].Page, "a verified page citation")

	t.Setenv("CITEBOOK_META", dsn) // the environment works as the flag does
	out, err = run(t, "jobs", "--data", b, "--json")
	require.NoError(t, err)
	var jobs []jobView
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	require.Len(t, jobs, 1, "the other data dir sees the job through the shared database")
	require.Equal(t, "dtc", jobs[0].BookID)

	_, err = run(t, "tokens", "create", "--data", a, "--tenant", "acme", "--user", "al")
	require.NoError(t, err)
	out, err = run(t, "tokens", "list", "--data", b, "--json")
	require.NoError(t, err)
	var toks []auth.Token
	require.NoError(t, json.Unmarshal([]byte(out), &toks))
	require.Len(t, toks, 1)

	_, err = run(t, "grants", "add", "--data", b, "--tenant", "acme", "--book", "dtc", "--user", "bo", "--allow")
	require.NoError(t, err, "a data dir without citebook.db is a library when --meta names one")
	out, err = run(t, "grants", "list", "--data", a, "--tenant", "acme")
	require.NoError(t, err)
	require.Contains(t, out, "user:bo")

	t.Setenv("CITEBOOK_META", "")
	_, err = run(t, "jobs", "--data", b, "--meta", "/tmp/other.db")
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "--meta takes only postgres:// URLs: %v", err)
}

package main

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/internal/corpus"
)

// TestGrantsCommand drives the ACL end to end through the CLI: a book
// closed to a user's groups is opened to her by a grant, one chapter of it
// closed again, and removing the grants restores the book's own rule — each
// change visible to the very next question.
func TestGrantsCommand(t *testing.T) {
	data := t.TempDir()
	_, err := run(t, "grants", "list", "--data", data, "--tenant", "acme")
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err), "no library yet")

	_, err = run(t, "index", corpus.Path(t, "books/dtc-paper.pdf"), "--data", data, "--tenant", "acme", "--groups", "eng", "--book", "dtc")
	require.NoError(t, err)
	q := "What is a device tree and how is it passed to the kernel?"
	type answer struct {
		Refused   bool                `json:"refused"`
		Citations []citebook.Citation `json:"citations"`
	}
	askAsBo := func() answer {
		t.Helper()
		out, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--user", "bo", "--json")
		require.NoError(t, err)
		var a answer
		require.NoError(t, json.Unmarshal([]byte(out), &a))
		return a
	}
	add := func(args ...string) (acl.Grant, error) {
		t.Helper()
		out, err := run(t, append([]string{"grants", "add", "--data", data, "--tenant", "acme", "--json"}, args...)...)
		var g acl.Grant
		if err == nil {
			require.NoError(t, json.Unmarshal([]byte(out), &g), out)
		}
		return g, err
	}
	require.True(t, askAsBo().Refused, "bo is not in group eng")

	// Refusals, each with its code.
	for _, tc := range []struct {
		name string
		args []string
		code string
	}{
		{"unknown book", []string{"--book", "nope", "--user", "bo", "--allow"}, citebook.ENOTFOUND},
		{"book of another tenant", []string{"--book", "dtc", "--user", "bo", "--allow", "--tenant", "globex"}, citebook.ENOTFOUND},
		{"unknown chapter", []string{"--book", "dtc", "--user", "bo", "--deny", "--chapter", "No such chapter"}, citebook.ENOTFOUND},
	} {
		_, err := add(tc.args...)
		require.Equal(t, tc.code, citebook.ErrorCode(err), "%s: %v", tc.name, err)
	}
	for name, args := range map[string][]string{
		"no effect":       {"--book", "dtc", "--user", "bo"},
		"two effects":     {"--book", "dtc", "--user", "bo", "--allow", "--deny"},
		"no subject":      {"--book", "dtc", "--allow"},
		"two subjects":    {"--book", "dtc", "--user", "bo", "--group", "eng", "--allow"},
		"no book":         {"--user", "bo", "--allow"},
		"empty user name": {"--book", "dtc", "--user", " ", "--allow"},
	} {
		_, err := add(args...)
		require.Error(t, err, name)
	}

	open, err := add("--book", "dtc", "--user", "bo", "--allow")
	require.NoError(t, err)
	a := askAsBo()
	require.False(t, a.Refused, "the allow grant opened the book")
	require.NotEmpty(t, a.Citations)
	chapter := a.Citations[0].HeadingPath[:1]

	closed, err := add("--book", "dtc", "--user", "bo", "--deny", "--chapter", chapter[0])
	require.NoError(t, err)
	for _, c := range askAsBo().Citations {
		require.False(t, acl.HasPrefix(c.HeadingPath, chapter), "cited the denied chapter %q", chapter)
	}

	out, err := run(t, "grants", "list", "--data", data, "--tenant", "acme", "--book", "dtc", "--json")
	require.NoError(t, err)
	var list []acl.Grant
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Equal(t, []acl.Grant{open, closed}, list)
	out, err = run(t, "grants", "list", "--data", data, "--tenant", "globex", "--json")
	require.NoError(t, err)
	require.JSONEq(t, `[]`, out)
	out, err = run(t, "grants", "list", "--data", data, "--tenant", "acme")
	require.NoError(t, err)
	require.Contains(t, out, chapter[0])

	_, err = run(t, "grants", "remove", "--data", data, "--tenant", "acme", "x")
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	_, err = run(t, "grants", "remove", "--data", data, "--tenant", "globex", strconv.FormatInt(open.ID, 10))
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err), "another tenant's grant")
	for _, g := range []acl.Grant{closed, open} {
		_, err = run(t, "grants", "remove", "--data", data, "--tenant", "acme", strconv.FormatInt(g.ID, 10))
		require.NoError(t, err)
	}
	require.True(t, askAsBo().Refused, "without grants the book's groups decide again")
}

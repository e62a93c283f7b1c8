package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/internal/corpus"
)

// TestVerifyExitCode is issue 10 item 6: a kill left extra rows in the
// lexical index; `--verify --json` reported them but exited 0, so scripts
// took the library for healthy. Drift is an error in both output modes
// (the JSON report still goes to stdout), and --repair removes the rows.
func TestVerifyExitCode(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	pdf := corpus.Path(t, "books/dtc-paper.pdf")
	_, err := run(t, "index", pdf, "--data", data, "--book", "dtc", "--tenant", "acme")
	require.NoError(t, err)

	// Rows a killed build left behind: chunks of the book no version serves.
	lex, err := lexical.Open(ctx, filepath.Join(data, "lexical"))
	require.NoError(t, err)
	var stray []citebook.Chunk
	for _, id := range []string{"dtc-stray-1", "dtc-stray-2", "dtc-stray-3"} {
		stray = append(stray, citebook.Chunk{ID: id, BookID: "dtc", Tenant: "acme", Version: 2, ParentID: "p", Text: "left by a killed build"})
	}
	require.NoError(t, lex.Upsert(ctx, stray))
	require.NoError(t, lex.Close())

	report := func(out string) index.VerifyReport {
		var rep index.VerifyReport
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &rep), out)
		return rep
	}
	for _, mode := range [][]string{{"--json"}, nil} {
		out, err := run(t, append([]string{"index", "--verify", "--book", "dtc", "--data", data}, mode...)...)
		require.Error(t, err, "drift must fail the command (%v)", mode)
		require.Equal(t, 1, exitCode(err))
		if mode != nil {
			rep := report(out)
			require.False(t, rep.OK())
			require.Equal(t, []string{"dtc-stray-1", "dtc-stray-2", "dtc-stray-3"}, rep.Lexical.Extra)
			require.Empty(t, rep.Vector.Extra)
		}
	}

	out, err := run(t, "index", "--verify", "--repair", "--book", "dtc", "--data", data, "--json")
	require.NoError(t, err)
	require.True(t, report(out).Repaired)
	out, err = run(t, "index", "--verify", "--book", "dtc", "--data", data, "--json")
	require.NoError(t, err, "repair removed the extra rows")
	rep := report(out)
	require.True(t, rep.OK())
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/library"
)

// run executes a citebook command line and returns its stdout.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestIndexCommand(t *testing.T) {
	data := t.TempDir()
	pdf := corpus.Path(t, "books/dtc-paper.pdf")

	out, err := run(t, "index", pdf, "--data", data, "--tenant", "acme", "--groups", "eng,ops", "--json")
	require.NoError(t, err)
	var first index.JobResult
	require.NoError(t, json.Unmarshal([]byte(out), &first))
	require.Equal(t, "dtc-paper", first.BookID)
	require.Equal(t, "completed", first.Status)
	require.Equal(t, 1, first.Version)
	require.Equal(t, first.Chunks, first.Embedded)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"job_id", "book_id", "version", "status", "chunks", "embedded", "upserted", "deleted"} {
		require.Contains(t, raw, k)
	}

	out, err = run(t, "index", pdf, "--data", data, "--tenant", "acme", "--groups", "ops,eng", "--json", "--verify")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var second index.JobResult
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &second))
	require.Equal(t, "unchanged", second.Status)
	require.Zero(t, second.Embedded)
	var rep index.VerifyReport
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &rep))
	require.True(t, rep.OK())
	require.Equal(t, first.Chunks, rep.Expected)

	out, err = run(t, "jobs", "--data", data, "--json")
	require.NoError(t, err)
	var jobs []jobView
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	require.Len(t, jobs, 1, "an unchanged run records no job")
	require.Equal(t, index.JobCompleted, jobs[0].Status)
	require.NotEmpty(t, jobs[0].Batches)

	out, err = run(t, "jobs", "--data", data)
	require.NoError(t, err)
	require.Contains(t, out, "dtc-paper")
	require.Contains(t, out, "done")

	tests := []struct {
		name string
		args []string
		code string
	}{
		{"no file", []string{"index", "--data", data}, citebook.EINVALID},
		{"missing file", []string{"index", filepath.Join(data, "nope.pdf"), "--data", data}, citebook.ENOTFOUND},
		{"repair without verify", []string{"index", pdf, "--data", data, "--repair"}, citebook.EINVALID},
		{"unknown store", []string{"index", pdf, "--data", data, "--store", "s3"}, citebook.EINVALID},
		{"other tenant", []string{"index", pdf, "--data", data, "--tenant", "evil"}, citebook.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tt.args...)
			require.Equal(t, tt.code, citebook.ErrorCode(err), "%v", err)
		})
	}
}

// TestJobsListsFailedFirstBuild: a book whose first build fails is removed
// with its build records, so only the queue remembers the job; `jobs` must
// still list it, with why it failed, beside the recorded builds.
func TestJobsListsFailedFirstBuild(t *testing.T) {
	data := t.TempDir()
	pdf, err := os.ReadFile(corpus.Path(t, "books/dtc-paper.pdf"))
	require.NoError(t, err)
	broken := filepath.Join(t.TempDir(), "broken.pdf")
	require.NoError(t, os.WriteFile(broken, pdf[:3000], 0o644))
	_, err = run(t, "index", broken, "--data", data)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "%v", err)
	_, err = run(t, "index", corpus.Path(t, "books/dtc-paper.pdf"), "--data", data)
	require.NoError(t, err)

	out, err := run(t, "jobs", "--data", data, "--json")
	require.NoError(t, err)
	var jobs []jobView
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	require.Len(t, jobs, 2)
	require.Equal(t, "dtc-paper", jobs[0].BookID, "newest first")
	require.Equal(t, index.JobCompleted, jobs[0].Status)
	require.Equal(t, "broken", jobs[1].BookID)
	require.Equal(t, index.JobFailed, jobs[1].Status)
	require.Contains(t, jobs[1].Error, "truncated or corrupt")
	require.True(t, strings.HasPrefix(jobs[1].Handle, "job_"), jobs[1].Handle)

	out, err = run(t, "jobs", "--data", data, "--book", "broken")
	require.NoError(t, err)
	require.Contains(t, out, "job "+jobs[1].Handle+" failed: PDF file is truncated or corrupt")
	require.NotContains(t, out, "dtc-paper")
}

func TestIndexManifest(t *testing.T) {
	data := t.TempDir()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\nBees dance to share where flowers are.\n"), 0o644))
	pdf := corpus.Path(t, "books/dtc-paper.pdf")
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{"json lines", `{"book_id":"notes","path":"notes.md","tenant":"acme"}` + "\n\n" + `{"path":"` + pdf + `","tenant":"acme"}` + "\n",
			[]string{"notes", "dtc-paper"}},
		{"json array", `[{"book_id":"notes2","path":"notes.md","tenant":"acme","groups":["g"]}]`, []string{"notes2"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mf := filepath.Join(dir, "m"+string(rune('0'+i))+".json")
			require.NoError(t, os.WriteFile(mf, []byte(tt.manifest), 0o644))
			out, err := run(t, "index", "--manifest", mf, "--data", data, "--json")
			require.NoError(t, err)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var r index.JobResult
				require.NoError(t, json.Unmarshal([]byte(line), &r))
				require.Equal(t, "completed", r.Status)
				got = append(got, r.BookID)
			}
			require.Equal(t, tt.want, got)
		})
	}
	// An entry without a tenant is indexed under --tenant, not under the
	// default tenant, whose users would then read it.
	mf := filepath.Join(dir, "globex.jsonl")
	require.NoError(t, os.WriteFile(mf, []byte(`{"book_id":"notes3","path":"notes.md"}`), 0o644))
	_, err := run(t, "index", "--manifest", mf, "--data", data, "--tenant", "globex")
	require.NoError(t, err)
	db, err := library.OpenMeta(context.Background(), library.Config{Data: data})
	require.NoError(t, err)
	b, err := db.Book(context.Background(), "notes3")
	db.Close()
	require.NoError(t, err)
	require.Equal(t, "globex", b.Tenant)

	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"book_id":"x"}`), 0o644))
	_, err = run(t, "index", "--manifest", bad, "--data", data)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}

func TestBookIDFromPath(t *testing.T) {
	tests := map[string]string{
		"/books/dtc-paper.pdf":          "dtc-paper",
		"Debian Reference (EN).pdf":     "debian-reference-en",
		"lshort-zh-cn.pdf":              "lshort-zh-cn",
		"/x/R_intro.v2.epub":            "r_intro-v2",
		"一份简短的介绍.pdf":                   "",
		"../notes/My  Field--Guide!.md": "my-field--guide",
	}
	for in, want := range tests {
		require.Equal(t, want, bookIDFromPath(in), in)
	}
}

// The commands that read or manage a library refuse a missing one, as
// grants did, instead of creating an empty library where the path was
// mistyped (jobs printed "No jobs" and left a citebook.db behind).
func TestReadingCommandsRefuseMissingLibrary(t *testing.T) {
	for _, args := range [][]string{{"jobs"}, {"jobs", "--queue"}, {"grants", "list"}} {
		data := filepath.Join(t.TempDir(), "typo")
		_, err := run(t, append(args, "--data", data)...)
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err), "%v: %v", args, err)
		require.NoDirExists(t, data, "%v created the library", args)
	}
}

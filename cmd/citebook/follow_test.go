package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// The book of these tests and a second edition of it: the same chapters
// with some sentences rewritten, so a re-index retires and deletes the
// chunks holding them.
const guidePath = "../../index/testdata/field-guide.md"

var secondEdition = strings.NewReplacer(
	"A shallow tray with floating corks, refilled every second day,", "A shallow basin of wet gravel, topped up each morning,",
	"within the last three days", "within the last four days, by the second edition's count,",
	"Inspect on a warm afternoon when most foragers are out.", "Inspect at midday in calm weather while the foragers are away.",
)

// editions writes both editions and returns their paths and the chunk IDs
// each has, chunked as the builder chunks them.
func editions(t *testing.T, bookID string) (paths [2]string, ids [2]map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	dir := t.TempDir()
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	for i, text := range []string{string(data), secondEdition.Replace(string(data))} {
		require.True(t, i == 0 || text != string(data))
		paths[i] = filepath.Join(dir, []string{"first.md", "second.md"}[i])
		require.NoError(t, os.WriteFile(paths[i], []byte(text), 0o644))
		doc, err := ingest.ParseFile(context.Background(), paths[i])
		require.NoError(t, err)
		_, cs := ingest.Split(doc, bookID, tok, ingest.ChunkOptions{})
		ids[i] = map[string]bool{}
		for _, c := range cs {
			ids[i][c.ID] = true
		}
	}
	return paths, ids
}

// TestReindexLoopNeverCitesInvisibleChunks is issue 10 item 8: a server
// (one library handle, its pipeline and follower) answers while another
// handle on the same data dir — the CLI — re-indexes the book over and over,
// alternating two editions. Before the change log the server kept the first
// edition's chunks in memory with nothing retiring them, and cited them
// while the second edition was served. Every citation must name a chunk of
// an edition that was served at some moment of its ask.
func TestReindexLoopNeverCitesInvisibleChunks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	data := t.TempDir()
	paths, ids := editions(t, "guide")

	cli := testlib.Open(t, testlib.Config(data))
	runner := cli.Runner(index.RunnerOptions{Workers: 1, OwnOnly: true})
	defer runner.Close(context.Background())
	in := func(ed int) citebook.BookInput {
		return citebook.BookInput{BookID: "guide", Title: "Field guide", Tenant: "default", Path: paths[ed]}
	}
	_, err := runner.Run(ctx, in(0))
	require.NoError(t, err)

	srv := testlib.Open(t, testlib.Config(data))
	pipeline := testlib.Pipeline(t, srv)
	go srv.Follow.Run(ctx, followEvery)

	// Version v of the book holds edition (v-1)%2: each run alternates, so
	// each makes a new version.
	var mu sync.Mutex
	edition := func(v int) int { return (v - 1) % 2 }
	active := func() int {
		b, err := srv.Meta.Book(ctx, "guide")
		require.NoError(t, err)
		return b.Active
	}
	questions := []string{
		"What keeps foragers away from the neighbours' swimming pool?",
		"What do eggs standing upright in the cells prove about the queen?",
		"When should you inspect the colony?",
	}
	p := citebook.Principal{Tenant: "default", User: "reader", Admin: true}
	var asks, cited, invisible, changed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				v0 := active()
				ans, err := pipeline.Ask(ctx, p, qa.Request{Question: questions[i%len(questions)], BookIDs: []string{"guide"}}, nil)
				v1 := active()
				if !assertNoErr(t, err) {
					return
				}
				asks.Add(1)
				mu.Lock()
				for _, c := range ans.Citations {
					cited.Add(1)
					ok := false
					for v := v0; v <= v1; v++ {
						ok = ok || ids[edition(v)][c.ChunkID]
					}
					if !ok {
						invisible.Add(1)
						t.Errorf("cited %s, not in the edition served during the ask (versions %d..%d)", c.ChunkID, v0, v1)
					}
					if !ids[0][c.ChunkID] || !ids[1][c.ChunkID] {
						changed.Add(1)
					}
				}
				mu.Unlock()
			}
		}()
	}
	const reindexes = 16
	for i := 1; i <= reindexes; i++ {
		ed := i % 2
		res, err := runner.Run(ctx, in(ed))
		require.NoError(t, err)
		require.Equal(t, ed, edition(res.Version))
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d re-indexes, %d asks, %d citations (%d of chunks one edition lacks), %d of invisible chunks",
		reindexes, asks.Load(), cited.Load(), changed.Load(), invisible.Load())
	require.Zero(t, invisible.Load())
	require.Positive(t, changed.Load(), "the questions reached the rewritten passages")
	require.Greater(t, asks.Load(), int64(reindexes))
}

func assertNoErr(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("ask: %v", err)
		return false
	}
	return true
}

// TestServerAnswersBookIndexedByCLI is the README's workflow: `serve` runs
// and `citebook index FILE` (a real second process) adds a book. Before
// the change log the server listed the book but refused every question
// about it until restarted; it must answer within 2 s.
func TestServerAnswersBookIndexedByCLI(t *testing.T) {
	data := t.TempDir()
	bin := buildCitebook(t)
	base := startServe(t, data).base

	ask := func() (qa.Answer, int) {
		res, err := http.Post(base+"/v1/ask", "application/json",
			strings.NewReader(`{"question":"What keeps foragers away from the neighbours' swimming pool?","book_ids":["guide"]}`))
		require.NoError(t, err)
		defer res.Body.Close()
		var a qa.Answer
		if res.StatusCode == 200 {
			require.NoError(t, json.NewDecoder(res.Body).Decode(&a))
		}
		return a, res.StatusCode
	}
	a, status := ask()
	require.True(t, status != 200 || a.Refused, "nothing indexed yet")

	out, errOut, code := runCitebook(t, bin, "index", guidePath, "--data", data, "--book", "guide")
	require.Zero(t, code, "%s\n%s", out, errOut)
	t0 := time.Now()
	var took time.Duration
	for {
		a, status = ask()
		if status == 200 && !a.Refused && slices.ContainsFunc(a.Citations, func(c citebook.Citation) bool { return c.BookID == "guide" }) {
			took = time.Since(t0)
			break
		}
		require.Less(t, time.Since(t0), 2*time.Second, "the running server did not answer from the CLI's book (status %d, %+v)", status, a)
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("book indexed by a CLI process answered by the running server %s after the CLI exited", took.Round(time.Millisecond))

	// Deleted by another process: the server stops answering from it.
	cli, err := library.Open(context.Background(), testlib.Config(data), nil)
	require.NoError(t, err)
	require.NoError(t, cli.Builder.Delete(context.Background(), "guide"))
	cli.Close()
	a, status = ask()
	require.True(t, status != 200 || len(a.Citations) == 0, "no citation of a deleted book: %+v", a)
}

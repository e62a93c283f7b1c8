package metadb_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/dbtest"
)

// eachPair runs fn with two handles on one new database of each kind, as
// two processes (or two servers) sharing a library have.
func eachPair(t *testing.T, fn func(t *testing.T, a, b *metadb.DB)) {
	dbtest.Each(t, func(t *testing.T, target string) {
		fn(t, open(t, target), open(t, target))
	})
}

// servedBook writes book id with version 1 of n chunks and activates it.
func servedBook(t *testing.T, db *metadb.DB, id string, n int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: id, Tenant: "t"}))
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: id, Number: 1, Chunks: n}))
	cs := make([]citebook.Chunk, n)
	for i := range cs {
		cs[i] = citebook.Chunk{ID: fmt.Sprintf("%s-%d", id, i), BookID: id, Version: 1, ParentID: id + "-p", Ordinal: i, Text: "t"}
	}
	require.NoError(t, db.SaveChunks(ctx, cs))
	require.NoError(t, db.Activate(ctx, id, 1))
}

func TestDeleteAndDeactivate(t *testing.T) {
	each(t, func(t *testing.T, db *metadb.DB) {
		ctx := context.Background()
		servedBook(t, db, "b", 2)
		servedBook(t, db, "keep", 1)
		_, err := db.SQL().ExecContext(ctx, `INSERT INTO grants (tenant, book_id, path, subject_kind, subject, effect)
			VALUES (?,?,?,?,?,?), (?,?,?,?,?,?)`, "t", "b", "", "user", "u", "allow", "t", "keep", "", "user", "u", "allow")
		require.NoError(t, err)
		j := index.Job{BookID: "b", Version: 1}
		require.NoError(t, db.CreateJob(ctx, &j))

		require.NoError(t, db.Deactivate(ctx, "b"))
		got, err := db.Book(ctx, "b")
		require.NoError(t, err)
		require.Zero(t, got.Active, "deactivated: no version served")
		cs, err := db.ChunksByID(ctx, []string{"b-0", "keep-0"})
		require.NoError(t, err)
		require.Equal(t, []string{"keep-0"}, ids(cs), "a deactivated book's chunks are not served")

		require.NoError(t, db.DeleteBook(ctx, "b"))
		_, err = db.Book(ctx, "b")
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
		for table, want := range map[string]int{"versions": 1, "chunks": 1, "jobs": 0, "grants": 1} {
			var n int
			require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n))
			require.Equal(t, want, n, "%s: only the other book's rows remain", table)
		}
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.DeleteBook(ctx, "b")))
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.Deactivate(ctx, "b")))
		require.Equal(t, citebook.EINVALID, citebook.ErrorCode(db.PutBook(ctx, citebook.Book{ID: "bad\x00id", Tenant: "t"})))
	})
}

// TestChanges: what one handle switches, deletes or prunes, the other is
// told of, with a newer generation; a handle is not told of its own.
func TestChanges(t *testing.T) {
	eachPair(t, func(t *testing.T, a, b *metadb.DB) {
		ctx := context.Background()
		start, err := b.Changes(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, start.Books)

		servedBook(t, a, "x", 2)
		servedBook(t, a, "y", 1)
		ch, err := b.Changes(ctx, start.Gen)
		require.NoError(t, err)
		require.Greater(t, ch.Gen, start.Gen)
		require.ElementsMatch(t, []string{"x", "y"}, ch.Books)
		require.False(t, ch.All)
		own, err := a.Changes(ctx, start.Gen)
		require.NoError(t, err)
		require.Equal(t, ch.Gen, own.Gen)
		require.Empty(t, own.Books, "a handle skips its own changes")

		same, err := b.Changes(ctx, ch.Gen)
		require.NoError(t, err)
		require.Equal(t, ch.Gen, same.Gen)
		require.Empty(t, same.Books)

		require.NoError(t, a.DeleteRetired(ctx, "x", 1))
		require.NoError(t, a.DeleteBook(ctx, "y"))
		later, err := b.Changes(ctx, ch.Gen)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"x", "y"}, later.Books)

		spans, err := b.ChunkLifespans(ctx, []string{"x-0", "x-1", "y-0", "nope"})
		require.NoError(t, err)
		require.Equal(t, map[string][]index.Lifespan{
			"x-0": {{BookID: "x", Version: 1}},
			"x-1": {{BookID: "x", Version: 1}},
		}, spans, "a deleted book's chunks and unknown IDs have no lifespan")
	})
}

// TestJobOwnerAndHeartbeat: a job keeps its owner, heartbeat, OCR report,
// superseding job and the abandoned state.
func TestJobOwnerAndHeartbeat(t *testing.T) {
	each(t, func(t *testing.T, db *metadb.DB) {
		ctx := context.Background()
		require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
		owner := index.Owner{Host: "worker-1", PID: 4242, Start: 1 << 40}
		ocr := &citebook.OCRReport{Pages: 3, Read: 2, Failed: []citebook.PageFailure{{Page: 2, Error: "blank"}}}
		j := index.Job{BookID: "b", Version: 1, Owner: owner, OCR: ocr}
		require.NoError(t, db.CreateJob(ctx, &j))
		require.Positive(t, j.ID)
		got, err := db.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, owner, got.Owner)
		require.Equal(t, ocr, got.OCR)
		require.Equal(t, j.Started.UnixNano(), got.Heartbeat.UnixNano(), "the heartbeat starts at the start")

		beat := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
		require.NoError(t, db.TouchJob(ctx, j.ID, beat))
		got, err = db.Job(ctx, j.ID)
		require.NoError(t, err)
		require.True(t, beat.Equal(got.Heartbeat), "heartbeat kept to the nanosecond: %v", got.Heartbeat)

		next := index.Job{BookID: "b", Version: 1}
		require.NoError(t, db.CreateJob(ctx, &next))
		j.Status, j.Error, j.SupersededBy, j.Finished = index.JobAbandoned, "its process ended", next.ID, beat
		require.NoError(t, db.UpdateJob(ctx, j))
		require.NoError(t, db.TouchJob(ctx, j.ID, beat.Add(time.Hour)), "touching an ended job is not an error")
		got, err = db.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, index.JobAbandoned, got.Status)
		require.Equal(t, next.ID, got.SupersededBy)
		require.True(t, beat.Equal(got.Heartbeat), "an ended job's heartbeat does not move")

		_, err = db.Job(ctx, 999999)
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.UpdateJob(ctx, index.Job{ID: 999999, Status: index.JobFailed})))
		require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.CreateJob(ctx, &index.Job{BookID: "nope", Version: 1})),
			"a job of an unknown book")
	})
}

// TestSwitchIsAtomicForReaders: while one handle switches a book back and
// forth between two versions that differ in which chunks exist, where one
// chunk sits and what its parent says, readers on another handle (another
// server) see exactly one version in every read — never a mix.
func TestSwitchIsAtomicForReaders(t *testing.T) {
	eachPair(t, func(t *testing.T, w, r *metadb.DB) {
		ctx := context.Background()
		require.NoError(t, w.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
		// v1: a b c d under p1 "one"; v2: a, c moved to the end, e, under p1 "two".
		require.NoError(t, w.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 1, Chunks: 4}))
		require.NoError(t, w.SaveParents(ctx, 1, []citebook.Parent{{ID: "p1", BookID: "b", Text: "one"}}))
		require.NoError(t, w.SaveChunks(ctx, []citebook.Chunk{chunk("a", 1, 0, "p1"), chunk("b", 1, 1, "p1"), chunk("c", 1, 2, "p1"), chunk("d", 1, 3, "p1")}))
		require.NoError(t, w.Activate(ctx, "b", 1))
		require.NoError(t, w.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 2, Chunks: 3}))
		require.NoError(t, w.RetireParents(ctx, "b", []string{"p1"}, 2))
		require.NoError(t, w.SaveParents(ctx, 2, []citebook.Parent{{ID: "p1", BookID: "b", Text: "two"}}))
		require.NoError(t, w.RetireChunks(ctx, "b", []string{"b", "c", "d"}, 2))
		require.NoError(t, w.SaveChunks(ctx, []citebook.Chunk{chunk("e", 2, 1, "p1"), chunk("c", 2, 2, "p1")}))

		// What a reader may see, by served version: chunk@ordinal lists.
		want := map[string]int{"a@0 b@1 c@2 d@3": 1, "a@0 e@1 c@2": 2}
		wantNeighbours := map[string]int{"b c d": 1, "e c": 2} // around c, n=1
		all := []string{"a", "b", "c", "d", "e"}

		stop := make(chan struct{})
		var switches atomic.Int64
		writer := make(chan error, 1)
		go func() { // the writer: v2, v1, v2, … until the readers are done
			for v := 2; ; v = 3 - v {
				select {
				case <-stop:
					writer <- nil
					return
				default:
				}
				if err := w.Activate(ctx, "b", v); err != nil {
					writer <- fmt.Errorf("activate %d: %w", v, err)
					return
				}
				switches.Add(1)
			}
		}()

		const readers, reads = 4, 150
		seen := make([][3]int, readers) // per reader: reads that saw v1, v2
		var wg sync.WaitGroup
		for i := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range reads {
					cs, err := r.ChunksByID(ctx, all)
					if err != nil {
						t.Errorf("read chunks: %v", err)
						return
					}
					slices.SortFunc(cs, func(x, y citebook.Chunk) int { return x.Ordinal - y.Ordinal })
					var key []string
					for _, c := range cs {
						key = append(key, fmt.Sprintf("%s@%d", c.ID, c.Ordinal))
					}
					v, ok := want[strings.Join(key, " ")]
					if !ok {
						t.Errorf("a reader saw a half-switched book: %v", key)
						return
					}
					seen[i][v]++
					ns, err := r.Neighbours(ctx, []string{"c"}, 1)
					if err != nil {
						t.Errorf("read neighbours: %v", err)
						return
					}
					if _, ok := wantNeighbours[strings.Join(ids(ns["c"]), " ")]; !ok {
						t.Errorf("a reader saw neighbours of a half-switched book: %v", ids(ns["c"]))
						return
					}
					p, err := r.Parent(ctx, "p1")
					if err != nil || (p.Text != "one" && p.Text != "two") {
						t.Errorf("parent during a switch: %v, %v", p, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		require.NoError(t, <-writer)
		var v1, v2 int
		for i := range readers {
			v1, v2 = v1+seen[i][1], v2+seen[i][2]
		}
		t.Logf("%d switches; reads saw v1 %d times, v2 %d times", switches.Load(), v1, v2)
		require.Positive(t, v1, "the readers saw the first version")
		require.Positive(t, v2, "the readers saw the second version")
	})
}

// TestChangesNeverSkipped: servers switch books at the same time while a
// follower polls the change log; every switch reaches the follower. On
// PostgreSQL, generations are drawn before commit, so without the store
// keeping them in commit order a follower could read gen N+1, move past it
// and never see gen N commit.
func TestChangesNeverSkipped(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		const writers, books = 4, 30
		ws := make([]*metadb.DB, writers)
		for i := range ws {
			ws[i] = open(t, target)
		}
		follower := open(t, target)
		for i := range writers {
			for k := range books {
				id := fmt.Sprintf("w%d-%d", i, k)
				require.NoError(t, ws[i].PutBook(ctx, citebook.Book{ID: id, Tenant: "t"}))
				require.NoError(t, ws[i].CreateVersion(ctx, citebook.Version{BookID: id, Number: 1}))
			}
		}
		start, err := follower.Changes(ctx, 0)
		require.NoError(t, err)

		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range books {
					if err := ws[i].Activate(ctx, fmt.Sprintf("w%d-%d", i, k), 1); err != nil {
						t.Errorf("activate: %v", err)
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()

		got := map[string]bool{}
		since := start.Gen
		poll := func() {
			ch, err := follower.Changes(ctx, since)
			require.NoError(t, err)
			require.False(t, ch.All, "the log still reaches back")
			for _, b := range ch.Books {
				got[b] = true
			}
			since = ch.Gen
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			poll()
		}
		poll() // after the last commit
		var missed []string
		for i := range writers {
			for k := range books {
				if id := fmt.Sprintf("w%d-%d", i, k); !got[id] {
					missed = append(missed, id)
				}
			}
		}
		require.Empty(t, missed, "switches the follower never heard of")
	})
}

// TestConcurrentHitCounts: servers count retrievals of the same chunks at
// once, in different orders (on PostgreSQL two such updates can deadlock,
// and the store runs the loser again); no count is lost and no call fails.
func TestConcurrentHitCounts(t *testing.T) {
	eachPair(t, func(t *testing.T, a, b *metadb.DB) {
		ctx := context.Background()
		servedBook(t, a, "h", 6)
		all := []string{"h-0", "h-1", "h-2", "h-3", "h-4", "h-5"}
		const workers, rounds = 6, 25
		var wg sync.WaitGroup
		for w := range workers {
			db := a
			if w%2 == 1 {
				db = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids := slices.Clone(all)
				if w%3 == 0 {
					slices.Reverse(ids)
				}
				for range rounds {
					if err := db.IncrementHits(ctx, ids); err != nil {
						t.Errorf("count hits: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		hits, err := b.HitCounts(ctx, all)
		require.NoError(t, err)
		for _, id := range all {
			require.Equal(t, workers*rounds, hits[id], id)
		}
	})
}

package lexical

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/citebook/citebook"
	"github.com/stretchr/testify/require"
)

// sameIndex compares every field of two indexes except the database handle,
// locks, pools and caches — by reflection, so a field added to Index later
// is compared too and a snapshot that forgets it fails here.
func sameIndex(t *testing.T, want, got *Index) {
	t.Helper()
	skip := map[reflect.Type]bool{reflect.TypeOf(&sql.DB{}): true, reflect.TypeOf(sync.Mutex{}): true,
		reflect.TypeOf(sync.RWMutex{}): true, reflect.TypeOf(sync.Pool{}): true, reflect.TypeOf(sync.WaitGroup{}): true}
	wv, gv := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		switch {
		case skip[f.Type], f.Name == "admits", f.Name == "snapGen", f.Name == "dir", f.Name == "owner",
			f.Name == "seqs": // seqs: where rows' sequences are kept; owner: a token per change (RowRef)
			continue
		}
		w, g := wv.Field(i), gv.Field(i)
		require.True(t, reflect.DeepEqual(fieldValue(w), fieldValue(g)), "field %s differs after a snapshot restart", f.Name)
	}
}

func fieldValue(v reflect.Value) any {
	// reflect.DeepEqual reads unexported fields itself; wrapping the value
	// in a one-field struct keeps it addressable-free and comparable.
	return reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem().Interface()
}

func TestSnapshotRestoresEveryField(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x, err := Open(ctx, dir)
	require.NoError(t, err)
	var cs []citebook.Chunk
	for i := range 400 {
		cs = append(cs, citebook.Chunk{ID: fmt.Sprintf("c%03d", i), Tenant: fmt.Sprintf("t%d", i%2), BookID: fmt.Sprintf("b%d", i%3),
			Version: 1, ParentID: fmt.Sprintf("p%d", i%9), HeadingPath: []string{"Part", fmt.Sprintf("Chapter %d", i%7)},
			Text: fmt.Sprintf("Paragraph %d about graphs and vectors 图数据库 %d, word%d word%d.", i, i*7, i%13, i%29)})
	}
	require.NoError(t, x.Upsert(ctx, cs))
	require.NoError(t, x.Retire(ctx, "b1", []string{"c001", "c004"}, 2))
	require.NoError(t, x.Delete(ctx, []string{"c002", "c005"}))
	cs[3].Text = "replaced text about trees"
	require.NoError(t, x.Upsert(ctx, cs[3:4]))
	// Save a snapshot of the live index and open a second index from it.
	x.wmu.Lock()
	x.snapshotIfChanged(ctx)
	x.wmu.Unlock()
	_, err = os.Stat(filepath.Join(dir, snapName))
	require.NoError(t, err)
	fromSnap, err := Open(ctx, dir)
	require.NoError(t, err)
	defer fromSnap.Close()
	require.NotEqual(t, noSnapshot, fromSnap.snapGen, "opened from the snapshot")
	sameIndex(t, x, fromSnap)
	// Writes after a snapshot restart behave as on the original (new
	// terms get IDs in map order, so compare rankings, not IDs).
	cs[10].Text = "a new text for ten"
	require.NoError(t, fromSnap.Upsert(ctx, cs[10:11]))
	require.NoError(t, x.Upsert(ctx, cs[10:11]))
	f := citebook.Filter{Tenant: "t0", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b1", Version: 1}, {BookID: "b2", Version: 1}}}
	for _, q := range []string{"graphs word3", "ten new", "paragraph"} {
		a, err := fromSnap.Search(ctx, q, f, f, 100)
		require.NoError(t, err)
		b, err := x.Search(ctx, q, f, f, 100)
		require.NoError(t, err)
		require.Equal(t, b, a, q)
	}
	require.NoError(t, x.Close())

	// A rebuild from the database alone ranks the same chunks the same.
	require.NoError(t, os.Remove(filepath.Join(dir, snapName)))
	rebuilt := &Index{db: fromSnap.db, dir: dir}
	rebuilt.reset()
	require.NoError(t, rebuilt.loadRows(ctx))
	for _, q := range []string{"graphs word3 图", "word5", "ten new", "chapter 4 word11"} {
		a, err := fromSnap.Search(ctx, q, f, f, 100)
		require.NoError(t, err)
		b, err := rebuilt.Search(ctx, q, f, f, 100)
		require.NoError(t, err)
		require.NotEmpty(t, a, q)
		require.Equal(t, scoresByID(b), scoresByID(a), q)
	}
}

func scoresByID(hs []citebook.Hit) map[string]float64 {
	m := map[string]float64{}
	for _, h := range hs {
		m[h.Chunk.ID] = h.Score
	}
	return m
}

// TestStaleOrDamagedSnapshotIsNotUsed: a write the snapshot missed (a crash
// before Close) or a damaged file falls back to the database.
func TestStaleOrDamagedSnapshotIsNotUsed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x, err := Open(ctx, dir)
	require.NoError(t, err)
	c := func(id, text string) citebook.Chunk {
		return citebook.Chunk{ID: id, Tenant: "t", BookID: "b", Version: 1, ParentID: "p", Text: text}
	}
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{c("a", "alpha words"), c("b", "beta words")}))
	require.NoError(t, x.Close())
	x, err = Open(ctx, dir)
	require.NoError(t, err)
	require.NotEqual(t, noSnapshot, x.snapGen)
	require.NoError(t, x.Upsert(ctx, []citebook.Chunk{c("g", "gamma words")}))
	require.NoError(t, x.db.Close()) // crash: no snapshot of the last write
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b", Version: 1}}}
	x, err = Open(ctx, dir)
	require.NoError(t, err)
	hits, err := x.Search(ctx, "gamma", f, f, 5)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.NoError(t, x.Close())

	p := filepath.Join(dir, snapName)
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(p, st.Size()-10))
	x, err = Open(ctx, dir)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, 3, x.Len())
	hits, err = x.Search(ctx, "gamma", f, f, 5)
	require.NoError(t, err)
	require.Len(t, hits, 1)
}

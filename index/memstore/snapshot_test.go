package memstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/citebook/citebook"
	"github.com/stretchr/testify/require"
)

// TestSnapshotMatchesDatabase checks that a restart from the snapshot gives
// the same store as the database, and that a snapshot the database has
// moved past (a crash after a write) or a damaged one is never used.
func TestSnapshotMatchesDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	s := open(t, dir)
	var cs []citebook.Chunk
	var vs [][]float32
	for i := range 300 {
		c := chunk(fmt.Sprintf("c%03d", i), "t", fmt.Sprintf("b%d", i%2), 1)
		c.Pages = []citebook.PageSpan{{Offset: 0, Page: i + 1, Printed: fmt.Sprint(i)}}
		c.HeadingPath = []string{"Book", fmt.Sprintf("Chapter %d", i/50)}
		cs = append(cs, c)
		vs = append(vs, sparseVec(r, 32, 0.5))
	}
	require.NoError(t, s.Upsert(ctx, cs, vs))
	require.NoError(t, s.Retire(ctx, "b1", []string{"c001", "c003"}, 2))
	require.NoError(t, s.Delete(ctx, []string{"c004"}))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "b0", Version: 1}, {BookID: "b1", Version: 1}}}
	q := vs[9]
	want, err := s.Search(ctx, q, f, 20)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat(filepath.Join(dir, snapName))
	require.NoError(t, err, "Close saves a snapshot")

	s = open(t, dir)
	require.NotEqual(t, noSnapshot, s.snapGen, "reopened from the snapshot")
	got, err := s.Search(ctx, q, f, 20)
	require.NoError(t, err)
	require.Equal(t, bare(want), bare(got))
	require.Equal(t, 299, s.Len())
	all, err := s.Get(ctx, []string{"c001", "c009"})
	require.NoError(t, err)
	require.Equal(t, 2, all[0].Retired)
	require.Equal(t, cs[9].HeadingPath, all[1].HeadingPath)

	// A write, then a crash: the snapshot is older than the database.
	require.NoError(t, s.Delete(ctx, []string{"c009"}))
	require.NoError(t, s.db.Close())
	s = open(t, dir)
	require.Equal(t, 298, s.Len(), "the stale snapshot was not used")
	got, err = s.Search(ctx, q, f, 1)
	require.NoError(t, err)
	require.NotEqual(t, "c009", got[0].Chunk.ID)
	require.NoError(t, s.Close())

	// A damaged snapshot at the current generation: rebuilt from the database.
	p := filepath.Join(dir, snapName)
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(p, st.Size()/2))
	s = open(t, dir)
	defer s.Close()
	require.Equal(t, 298, s.Len())
	got, err = s.Search(ctx, q, f, 20)
	require.NoError(t, err)
	require.Len(t, got, 20)
}

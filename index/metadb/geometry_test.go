package metadb

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/dbtest"
)

var sampleWords = []citebook.WordBox{
	{Start: 0, End: 5, Line: 0, Box: citebook.Box{Page: 3, X0: .1, Y0: .9, X1: .2, Y1: .92}},
	{Start: 6, End: 11, Line: 0, Box: citebook.Box{Page: 3, X0: .21, Y0: .9, X1: .3, Y1: .92}},
	{Start: 12, End: 20, Line: 1, OCR: true, Box: citebook.Box{Page: 4, X0: 0, Y0: .05, X1: 1, Y1: .07}},
}

func TestGeometryRoundTrip(t *testing.T) {
	got, err := decodeGeometry(encodeGeometry(sampleWords))
	require.NoError(t, err)
	require.Len(t, got, len(sampleWords))
	for i, w := range sampleWords {
		g := got[i]
		require.Equal(t, [5]int{w.Start, w.End, w.Line, w.Page, 0}, [5]int{g.Start, g.End, g.Line, g.Page, 0})
		require.Equal(t, w.OCR, g.OCR)
		for _, d := range [4]float64{g.X0 - w.X0, g.Y0 - w.Y0, g.X1 - w.X1, g.Y1 - w.Y1} {
			require.InDelta(t, 0, d, 1.0/65535)
		}
	}
	none, err := decodeGeometry(encodeGeometry(nil))
	require.NoError(t, err)
	require.Nil(t, none)
}

// TestGeometryServedVersion: boxes come back for the served version's rows
// only, and chunks without geometry are left out.
func TestGeometryServedVersion(t *testing.T) { dbtest.Each(t, testGeometryServedVersion) }

func testGeometryServedVersion(t *testing.T, target string) {
	ctx := context.Background()
	db, err := Open(ctx, target)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 1, Chunks: 2}))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{
		{ID: "a", BookID: "b", Version: 1, Text: "hello world, printed", Geometry: sampleWords},
		{ID: "plain", BookID: "b", Version: 1, Text: "no pages"},
	}))
	got, err := db.Geometry(ctx, []string{"a", "plain"})
	require.NoError(t, err)
	require.Empty(t, got, "nothing is served before the version is active")
	require.NoError(t, db.Activate(ctx, "b", 1))
	got, err = db.Geometry(ctx, []string{"a", "plain", "unknown"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, got["a"], 3)
	cs, err := db.ChunksByID(ctx, []string{"a"})
	require.NoError(t, err)
	require.Nil(t, cs[0].Geometry, "ordinary reads do not decode geometry")
}

// FuzzDecodeGeometry: the decoder reads bytes from disk. Invariant: any
// input yields words or an error, never a panic, and never more words than
// the input has bytes.
func FuzzDecodeGeometry(f *testing.F) {
	f.Add(encodeGeometry(sampleWords))
	f.Add([]byte{1, 255, 255, 255, 255, 15})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ws, err := decodeGeometry(b)
		if err == nil && len(ws) > len(b) {
			t.Fatalf("%d words from %d bytes", len(ws), len(b))
		}
	})
}

package lexical

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/storetest"
	"github.com/stretchr/testify/require"
)

type readTerm struct {
	term string
	w    int
	head bool
}

// segmentApart is what the answering pipeline computes without the index:
// the heading path's terms, then the text's.
func segmentApart(c *citebook.Chunk, want []string) []readTerm {
	var out []readTerm
	add := func(s string, head bool) {
		analysis.EachTerm(s, func(t []byte) {
			w := -1
			for i, x := range want {
				if x == string(t) {
					w = i
					break
				}
			}
			out = append(out, readTerm{string(t), w, head})
		})
	}
	if len(c.HeadingPath) > 0 {
		add(strings.Join(c.HeadingPath, " "), true)
	}
	add(c.Text, false)
	return out
}

func readTerms(x *Index, c *citebook.Chunk, want []string) ([]readTerm, bool) {
	var out []readTerm
	ok := x.ChunkTerms(c, want, func(w int, head bool, name func() string) { out = append(out, readTerm{name(), w, head}) })
	return out, ok
}

// TestChunkTermsMatchSegmenting: the terms the index keeps for a chunk
// are what segmenting its heading path and text apart gives, for English
// and Chinese books with and without headings, after a snapshot restart
// and after a rebuild from the database.
func TestChunkTermsMatchSegmenting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x := open(t, dir)
	cs := mobyChunks(t, "t")[:400]
	for i := range cs {
		if i%3 == 0 {
			cs[i].HeadingPath = []string{"CHAPTER " + fmt.Sprint(i/3), "Loomings, 1,851 — naïve ﬁsh"}
		}
	}
	for _, p := range storetest.CMRC(t)[:60] {
		cs = append(cs, citebook.Chunk{ID: p.ID, Tenant: "t", BookID: "cmrc", Version: 1, ParentID: p.ID,
			HeadingPath: []string{p.ID[:4], "第一章 数据"}, Text: p.Context, Language: "zh"})
	}
	require.NoError(t, x.Upsert(ctx, cs))
	want := []string{"whale", "ship", "chapter", "数据", "的", "ahab"}
	check := func(x *Index) {
		t.Helper()
		for i := range cs {
			got, ok := readTerms(x, &cs[i], want)
			require.True(t, ok, cs[i].ID)
			apart := segmentApart(&cs[i], want)
			require.Equal(t, apart, got, cs[i].ID)
			// Holds tells the same presence from the postings.
			var mask uint64
			for _, rt := range apart {
				if rt.w >= 0 {
					mask |= 1 << rt.w
				}
			}
			held, ok := x.Holds(&cs[i], want)
			require.True(t, ok)
			require.Equal(t, mask, held, cs[i].ID)
		}
	}
	check(x)
	require.NoError(t, x.Close())
	x = open(t, dir) // from the snapshot
	require.NotEqual(t, noSnapshot, x.snapGen)
	check(x)
	require.NoError(t, x.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, snapName)))
	x = open(t, dir) // rebuilt from the database
	defer x.Close()
	check(x)
	// Replaced rows until compaction rebuilds the index (and frees the
	// blocks the old sequences were kept in).
	for range 3 {
		require.NoError(t, x.Upsert(ctx, cs))
	}
	require.Len(t, x.rows, len(cs), "compacted")
	check(x)

	// A chunk the index holds otherwise, or not at all, is not answered:
	// the caller segments what it holds.
	other := cs[5]
	other.Text += " more"
	_, ok := readTerms(x, &other, want)
	require.False(t, ok)
	_, ok = x.Holds(&other, want)
	require.False(t, ok)
	other = cs[6]
	other.HeadingPath = []string{"elsewhere"}
	_, ok = readTerms(x, &other, want)
	require.False(t, ok)
	require.NoError(t, x.Delete(ctx, []string{cs[7].ID}))
	_, ok = readTerms(x, &cs[7], want)
	require.False(t, ok)
	// Replaced, the chunk reads as its new text.
	cs[8].Text = "Call me Ishmael, said the whale."
	require.NoError(t, x.Upsert(ctx, cs[8:9]))
	got, ok := readTerms(x, &cs[8], want)
	require.True(t, ok)
	require.Equal(t, segmentApart(&cs[8], want), got)
}

// FuzzSegmentSplitsAtHeading: segmenting a chunk's indexed text (heading
// path, newline, text) gives exactly the heading path's terms followed by
// the text's, the property ChunkTerms relies on to serve both from one
// sequence.
func FuzzSegmentSplitsAtHeading(f *testing.F) {
	for _, s := range [][2]string{{"Chapter 1,", "234 rows"}, {"数据", "库的索引"}, {"naïve\xf1", "\u0301é ﬁle"},
		{"A ", " b"}, {"", "x"}, {"1,000", ",000"}, {"e\u0301", "\u0308"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, head, text string) {
		c := citebook.Chunk{HeadingPath: []string{head}, Text: text}
		ts, n, _ := segment(&c)
		h, b := analysis.Terms(head), analysis.Terms(text)
		require.Equal(t, len(h), int(n))
		require.Equal(t, append(h, b...), ts)
	})
}

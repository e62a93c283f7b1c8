package lexical

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	ok := x.ChunkTerms(c, citebook.RowRef{}, want, func(w int, head bool, name func() string) { out = append(out, readTerm{name(), w, head}) })
	return out, ok
}

type sentTerm struct {
	term    string
	w, sent int
}

// sentencesApart is what the key-term coverage feature computes without
// the index: each sentence of the text segmented on its own.
func sentencesApart(c *citebook.Chunk, want []string) []sentTerm {
	var out []sentTerm
	for i, s := range analysis.Sentences(c.Text) {
		analysis.EachTerm(s, func(t []byte) {
			w := -1
			for k, x := range want {
				if x == string(t) {
					w = k
					break
				}
			}
			out = append(out, sentTerm{string(t), w, i})
		})
	}
	return out
}

func readSentences(x *Index, c *citebook.Chunk, want []string) ([]sentTerm, bool) {
	return readSentencesFirst(x, c, want, nil)
}

func readSentencesFirst(x *Index, c *citebook.Chunk, want []string, starts []uint16) ([]sentTerm, bool) {
	var out []sentTerm
	ok := x.ChunkSentences(c, citebook.RowRef{}, want, starts, func(w, sent int, name func() string) { out = append(out, sentTerm{name(), w, sent}) })
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
		// HoldsAll, asked of every chunk at once in another order than the
		// rows' (and of one twice, and one the index holds otherwise),
		// tells each what segmenting it apart gives.
		var all []*citebook.Chunk
		for i := len(cs) - 1; i >= 0; i-- {
			all = append(all, &cs[i])
		}
		changed := cs[3]
		changed.Text += " more"
		all = append(all, &cs[len(cs)/2], &changed)
		held, ok := x.HoldsAll(all, nil, want)
		for i, c := range all {
			require.Equal(t, c != &changed, ok[i], c.ID)
			var mask uint64
			for _, rt := range segmentApart(c, want) {
				if rt.w >= 0 && ok[i] {
					mask |= 1 << rt.w
				}
			}
			require.Equal(t, mask, held[i], c.ID)
		}
		for i := range cs {
			got, ok := readTerms(x, &cs[i], want)
			require.True(t, ok, cs[i].ID)
			apart := segmentApart(&cs[i], want)
			require.Equal(t, apart, got, cs[i].ID)
			// HoldsAll tells the same presence from the postings.
			var mask uint64
			for _, rt := range apart {
				if rt.w >= 0 {
					mask |= 1 << rt.w
				}
			}
			held, ok := holds(x, &cs[i], want)
			require.True(t, ok)
			require.Equal(t, mask, held, cs[i].ID)
			// ChunkSentences gives the text's terms by sentence.
			sents, ok := readSentences(x, &cs[i], want)
			require.True(t, ok, cs[i].ID)
			require.Equal(t, sentencesApart(&cs[i], want), sents, cs[i].ID)
			// Asked for the terms starting like some, it gives those alone.
			var starts []uint16
			for _, t := range []string{"whale", "sh", "c", "数据", "i"} {
				starts = append(starts, analysis.TermStart(t))
			}
			var like []sentTerm
			for _, st := range sents {
				if slices.Contains(starts, analysis.TermStart(st.term)) {
					like = append(like, st)
				}
			}
			some, ok := readSentencesFirst(x, &cs[i], want, starts)
			require.True(t, ok, cs[i].ID)
			require.Equal(t, like, some, cs[i].ID)
			none, ok := readSentencesFirst(x, &cs[i], want, []uint16{})
			require.True(t, ok, cs[i].ID)
			require.Empty(t, none, cs[i].ID)
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
	_, ok = holds(x, &other, want)
	require.False(t, ok)
	_, ok = readSentences(x, &other, want)
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
	sents, ok := readSentences(x, &cs[8], want)
	require.True(t, ok)
	require.Equal(t, []int{0, 0, 0, 0, 0, 0}, sentOf(sents))
}

func sentOf(ts []sentTerm) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.sent
	}
	return out
}

// TestChunkSentencesMarks: sentences without terms still separate the
// others (a two-sentence window never spans one), and a chunk whose
// sentences the index did not mark is not answered.
func TestChunkSentencesMarks(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	cs := []citebook.Chunk{
		{ID: "a", Tenant: "t", BookID: "b", Version: 1, HeadingPath: []string{"Whales"}, Text: "... First one. — . Second! 第二句。 • Third\n\nFourth"},
		{ID: "b", Tenant: "t", BookID: "b", Version: 1, Text: "— ."},
		{ID: "c", Tenant: "t", BookID: "b", Version: 1, HeadingPath: []string{"Only a heading"}},
		{ID: "d", Tenant: "t", BookID: "b", Version: 1, HeadingPath: []string{"Debt"}, IndexContext: "(Dollars in millions) 2018 2017",
			Text: "Long-term debt 13,411 12,096. Notes. More"},
	}
	require.NoError(t, x.Upsert(ctx, cs))
	got, ok := readSentences(x, &cs[0], nil)
	require.True(t, ok)
	require.Equal(t, sentencesApart(&cs[0], nil), got)
	require.Equal(t, []int{1, 1, 3, 4, 4, 4, 4, 4, 5, 6}, sentOf(got))
	got, ok = readSentences(x, &cs[3], nil)
	require.True(t, ok)
	require.Equal(t, sentencesApart(&cs[3], nil), got)
	require.Equal(t, []int{0, 0, 0, 0, 0, 1, 2}, sentOf(got))
	for _, c := range cs[1:3] {
		got, ok := readSentences(x, &c, nil)
		require.True(t, ok, c.ID)
		require.Empty(t, got, c.ID)
	}
	// Another context: not held as given.
	other := cs[3]
	other.IndexContext = "2019"
	_, ok = readSentences(x, &other, nil)
	require.False(t, ok)
	_, ok = readTerms(x, &other, nil)
	require.False(t, ok)
	// Unmarked (sentenceEnds found the sentences disagree with the text):
	// the caller segments.
	r := x.byID["a"]
	x.rows[r].seq = x.rows[r].seq[:len(x.rows[r].seq)-1]
	_, ok = readSentences(x, &cs[0], nil)
	require.False(t, ok)
}

// FuzzSentenceEnds: segmenting a text's sentences one by one gives the
// text's terms, so the index can mark every text's sentences.
func FuzzSentenceEnds(f *testing.F) {
	for _, s := range []string{"One. Two! 三。四", "1,5. 77 • 1,577\n\n2", "e.\u0301 x •\u0301y", "“Quote.” Next", "ﬁ. ＰＤＦ！ ２０２４。x", "a\xff. b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ts := analysis.Terms(text)
		ends := sentenceEnds(text, ts)
		if len(analysis.Sentences(text)) > 0 {
			require.NotNil(t, ends)
		}
	})
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

// holds is HoldsAll for one chunk.
func holds(x *Index, c *citebook.Chunk, want []string) (uint64, bool) {
	held, ok := x.HoldsAll([]*citebook.Chunk{c}, nil, want)
	return held[0], ok[0]
}

// TestRowRefs: a hit's handle names its row only for the index that gave
// it, until its next change, and only for the chunk it was given for;
// otherwise the chunk is found by its ID, so every answer is the one
// without a handle.
func TestRowRefs(t *testing.T) {
	ctx := context.Background()
	x := open(t, t.TempDir())
	defer x.Close()
	cs := mobyChunks(t, "t")[:300]
	require.NoError(t, x.Upsert(ctx, cs))
	f := citebook.Filter{Tenant: "t", Books: []citebook.BookScope{{BookID: "moby", Version: 1}}}
	hits, err := x.Search(ctx, "whale ship sea", f, f, 20)
	require.NoError(t, err)
	require.Greater(t, len(hits), 2)
	other := open(t, t.TempDir())
	defer other.Close()
	foreign := hits[0].Ref
	foreign.Owner = other.owner
	want := []string{"whale", "ship"}
	// answers is what every reader gives for c, asked with ref.
	answers := func(c *citebook.Chunk, ref citebook.RowRef) (int32, bool, []readTerm) {
		x.mu.RLock()
		r, ok := x.rowIndex(c, ref)
		x.mu.RUnlock()
		var terms []readTerm
		x.ChunkTerms(c, ref, want, func(w int, head bool, name func() string) { terms = append(terms, readTerm{name(), w, head}) })
		held, hok := x.HoldsAll([]*citebook.Chunk{c}, []citebook.RowRef{ref}, want)
		require.Equal(t, ok, hok[0])
		plain, pok := x.HoldsAll([]*citebook.Chunk{c}, nil, want)
		require.Equal(t, plain, held)
		require.Equal(t, pok, hok)
		return r, ok, terms
	}
	check := func(c *citebook.Chunk, ref citebook.RowRef) {
		t.Helper()
		r, ok, terms := answers(c, ref)
		r0, ok0, terms0 := answers(c, citebook.RowRef{})
		require.Equal(t, ok0, ok, c.ID)
		require.Equal(t, r0, r, c.ID)
		require.Equal(t, terms0, terms, c.ID)
	}
	for i, h := range hits {
		require.Same(t, x.owner, h.Ref.Owner)
		_, ok := x.refRow(&h.Chunk, h.Ref)
		require.True(t, ok, "a fresh hit's handle names its row")
		check(&h.Chunk, h.Ref)
		check(&h.Chunk, hits[(i+1)%len(hits)].Ref) // another chunk's handle
		check(&h.Chunk, foreign)
		changed := h.Chunk
		changed.Text += " more"
		check(&changed, h.Ref)
		_, ok, _ = answers(&changed, h.Ref)
		require.False(t, ok, "a chunk the index holds otherwise")
	}
	// Any write names the rows anew: the old handles name no row.
	require.NoError(t, x.Delete(ctx, []string{hits[0].Chunk.ID}))
	for _, h := range hits {
		_, ok := x.refRow(&h.Chunk, h.Ref)
		require.False(t, ok)
		check(&h.Chunk, h.Ref)
	}
	_, ok, _ := answers(&hits[0].Chunk, hits[0].Ref)
	require.False(t, ok, "a deleted chunk")
	stale := hits[1].Ref
	require.NoError(t, x.Upsert(ctx, cs[:200])) // replaced rows
	check(&hits[1].Chunk, stale)
	require.NoError(t, x.ReloadBooks(ctx, nil))
	check(&hits[1].Chunk, stale)
	_, ok, _ = answers(&hits[1].Chunk, stale)
	require.True(t, ok)
}

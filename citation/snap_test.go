package citation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// The ways Qwen2.5-Coder-0.5B was seen to re-type a quote (2026-11-30 runs),
// applied to R-intro's pages 20–21 and lshort-zh-cn's page 15.
func TestSnap(t *testing.T) {
	en := spanningChunk(t)
	zh := chineseChunk(t)
	tests := []struct {
		name  string
		chunk citebook.Chunk
		quote string
		want  []string // the book's text shown, one entry per span; nil: not snapped
	}{
		{"changed case and a changed word", en, "r caters for changes of mode almost everywhere it could be considered sensible",
			[]string{"R caters for changes of mode almost anywhere it could be considered sensible"}},
		{"a dropped word", en, "A further coercion, or change of mode, reconstructs the vector again",
			[]string{"A further coercion, or change of mode, reconstructs the numerical vector again"}},
		{"an inserted word", en, "R caters for all changes of mode almost anywhere it could be considered sensible",
			[]string{"R caters for changes of mode almost anywhere it could be considered sensible"}},
		{"an ellipsis where the book's words are left out", en, "R caters for changes of mode ... reconstructs the numerical vector again",
			[]string{"R caters for changes of mode", "reconstructs the numerical vector again"}},
		{"stitched from two sentences", en, "R caters for changes of mode almost anywhere. A further coercion reconstructs the numerical vector",
			[]string{"R caters for changes of mode almost anywhere", "A further coercion, or change of mode, reconstructs the numerical vector"}},
		{"a hyphen typed into a word", en, "R caters for changes of mode almost any-where it could be considered sensible to do so",
			[]string{"R caters for changes of mode almost anywhere it could be considered sensible to do so,"}},
		{"Chinese with a character dropped and half-width punctuation", zh, "这些编辑器提供的编译功能,实际上只是对特定命令行序的封装",
			[]string{"这些编辑器提供的编译功能，实际上只是对特定命令行程序的封装"}},
		{"a changed number", en, "digits is the character vector c(0, 1, 2, ..., 8)", nil},
		{"a changed LaTeX command", citebook.Chunk{ID: "tex", Text: "更常用的办法是在导言区使用\\linespread命令。"}, "更常用的办法是在导言区使用\\newlinespread命令。", nil},
		{"a changed name", en, "A further coercion, or change of mode, reconstructs the numerical vector in Python", nil},
		{"too different", en, "R never changes the mode of an object once it is created", nil},
		{"stop words only", en, "of the and it to do so", nil},
		{"Chinese altered", zh, "这些编辑器提供的编译功能就是魔法", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := snap(tt.chunk.Text, tt.quote)
			if tt.want == nil {
				require.False(t, ok, "%+v", r)
				return
			}
			require.True(t, ok, "share %.2f", r.share)
			var got []string
			for _, sp := range r.spans {
				got = append(got, tt.chunk.Text[sp[0]:sp[1]])
			}
			// The book's own line breaks stay in the shown text; compare
			// them as spaces.
			for i := range got {
				got[i] = strings.Join(strings.Fields(got[i]), " ")
				tt.want[i] = strings.Join(strings.Fields(tt.want[i]), " ")
			}
			if tt.chunk.ID == zh.ID {
				for i := range got {
					got[i] = strings.ReplaceAll(got[i], " ", "")
				}
			}
			// extendClosing (in citationAt) may take in a closing mark;
			// the aligner stops at the last matched word.
			for i := range tt.want {
				tt.want[i] = strings.TrimRight(tt.want[i], ",")
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestVerifySnaps: Verify shows the snapped text, with offsets and page,
// records the snap, and runs the support check on the book's text; a
// quote of one chunk cited to another chunk of the context is not snapped
// to anything.
func TestVerifySnaps(t *testing.T) {
	en := spanningChunk(t)
	zh := chineseChunk(t)
	other := citebook.Chunk{ID: "r-3-2-1", BookID: "r-intro", Text: "The modes of objects: an empty object may still have a mode. For example, the empty character string vector is listed as character(0) and the empty numeric vector as numeric(0)."}
	ctx := map[string]citebook.Chunk{en.ID: en, zh.ID: zh, other.ID: other}
	sc := SupportCheck{Content: func(s string) []string {
		var out []string
		for _, tk := range tokenize(s) {
			if tk.content {
				out = append(out, tk.text)
			}
		}
		return out
	}}
	model := "a further coercion, or change of mode, reconstructs the vector again"
	res := Verify([]Statement{
		{Text: "A further coercion reconstructs the numerical vector again.", Citations: []Claim{{en.ID, model}}},
		{Text: "R caters for changes of mode.", Citations: []Claim{{other.ID, "r caters for changes of mode almost everywhere it could be considered sensible"}}},
		{Text: "Modes never change in R.", Citations: []Claim{{en.ID, "R caters for all changes of mode almost anywhere it could be considered sensible"}}},
	}, ctx, nil, map[string]string{"r-intro": "An Introduction to R"}, sc)
	require.False(t, res.Refused, "%+v", res)
	require.Equal(t, "A further coercion reconstructs the numerical vector again. [1]", res.Answer)
	require.Len(t, res.Citations, 1)
	c := res.Citations[0]
	require.Equal(t, "A further coercion, or change of mode, reconstructs the numerical vector again", c.Quote)
	require.Equal(t, c.Quote, en.Text[c.CharStart:c.CharEnd])
	require.Equal(t, 20, c.Page)
	require.Equal(t, "14", c.PrintedPage)
	require.Len(t, res.Snapped, 2)
	require.Equal(t, Snapped{ChunkID: en.ID, Quote: model, Real: c.Quote, Share: 1, Start: c.CharStart, End: c.CharEnd, Kept: true}, res.Snapped[0])
	require.False(t, res.Snapped[1].Kept, "snapped, then not supported")
	var reasons []Reason
	for _, r := range res.Rejected {
		reasons = append(reasons, r.Reason)
	}
	require.Equal(t, []Reason{QuoteNotFound, Unsupported}, reasons)
	require.Less(t, res.Rejected[0].Share, MinSnapShare, "the other chunk was searched, and only it")
	require.Equal(t, 2, res.Unsupported)
	require.Equal(t, 1, res.NotSupported)
}

// FuzzSnap holds the aligner to its invariant: whatever the quote and the
// text, a snap is nothing or spans of that text — in bounds, on rune
// boundaries, in order, not overlapping — holding every number of the
// quote; and the citation built from it quotes only that text.
func FuzzSnap(f *testing.F) {
	f.Add("R caters for changes of mode almost anywhere it could be considered sensible to do so.", "r caters for changes of mode ... sensible")
	f.Add("Around 100 datasets are supplied with R (in package datasets).", "around 1007 datasets are supplied with R")
	f.Add("这些编辑器提供的编译功能，实际上只是对特定命令行程序的封装，而并非魔法。", "这些编辑器提供的编译功能,实际上只是对特定命令行序的封装")
	f.Add("multi-\nline text with 1,577 million", "multiline text with 1577 million")
	f.Add("a\u0301b ﬁnal “quoted” word’s end", "ab final \"quoted\" word's end")
	f.Add("\xff\xfe broken \xc3 utf8 text here", "broken utf8 text")
	f.Fuzz(func(t *testing.T, text, quote string) {
		r, ok := snap(text, quote)
		require.True(t, r.share >= 0 && r.share <= 1, "share %v", r.share)
		if !ok {
			require.Empty(t, r.spans)
			return
		}
		require.NotEmpty(t, r.spans)
		// Rune boundaries as Go decodes the text (an invalid byte is a
		// rune of its own).
		boundary := map[int]bool{len(text): true}
		for i := range text {
			boundary[i] = true
		}
		prev := 0
		var shown strings.Builder
		for _, sp := range r.spans {
			require.True(t, prev <= sp[0] && sp[0] < sp[1] && sp[1] <= len(text), "span %v after %d in %d bytes", sp, prev, len(text))
			require.True(t, boundary[sp[0]] && boundary[sp[1]], "span %v cuts a rune", sp)
			shown.WriteString(text[sp[0]:sp[1]] + "\n")
			prev = sp[1]
		}
		nums := numberSet(shown.String())
		for _, n := range numbersOf(quote) {
			require.True(t, nums[n], "number %s of the quote not in the shown text", n)
		}
		c := citebook.Chunk{ID: "c", Text: text}
		cit, _, ok := locateSnapped(c, quote)
		if !ok {
			return
		}
		require.True(t, 0 <= cit.CharStart && cit.CharStart < cit.CharEnd && cit.CharEnd <= len(text))
		parts := strings.Split(cit.Quote, " … ")
		require.True(t, strings.HasPrefix(text[cit.CharStart:], parts[0]))
		require.True(t, strings.HasSuffix(text[:cit.CharEnd], parts[len(parts)-1]))
		at := cit.CharStart
		for _, p := range parts {
			i := strings.Index(text[at:cit.CharEnd], p)
			require.GreaterOrEqual(t, i, 0, "part %q not in the cited text", p)
			at += i + len(p)
		}
	})
}

// TestVerifyQuoteInAnotherChunk: a quote cited under the wrong chunk is
// cited from the chunk of the context that holds it word for word (small
// models mix up the IDs of the passages they were shown); a quote that only
// a chunk outside the context holds stays rejected, and so does one that
// is in no chunk at all.
func TestVerifyQuoteInAnotherChunk(t *testing.T) {
	a := citebook.Chunk{ID: "a", BookID: "r-intro", PageStart: 12, PrintedStart: "6",
		Text: "Vectors are the simplest structure. A vector is an ordered collection of numbers."}
	b := citebook.Chunk{ID: "b", BookID: "r-intro", PageStart: 30, PrintedStart: "24",
		Text: "Data frames are lists with class data.frame. Each component of a data frame has the same length."}
	outside := citebook.Chunk{ID: "c", BookID: "r-intro", Text: "Factors hold categorical data and have levels attached to them."}
	ctx := map[string]citebook.Chunk{a.ID: a, b.ID: b}
	res := Verify([]Statement{
		{Text: "Each component of a data frame has the same length.", Citations: []Claim{{"a", "Each component of a data frame has the same length."}}},
		{Text: "Factors have levels.", Citations: []Claim{{"a", outside.Text}}},
		{Text: "Lists are vectors.", Citations: []Claim{{"b", "Lists are generic vectors of mixed modes."}}},
	}, ctx, func(id string) bool { return id == outside.ID }, map[string]string{"r-intro": "An Introduction to R"}, SupportCheck{})
	require.Equal(t, "Each component of a data frame has the same length. [1]", res.Answer)
	require.Len(t, res.Citations, 1)
	c := res.Citations[0]
	require.Equal(t, "b", c.ChunkID)
	require.Equal(t, 30, c.Page)
	require.Equal(t, c.Quote, b.Text[c.CharStart:c.CharEnd])
	require.Equal(t, []Snapped{{ChunkID: "b", Quote: "Each component of a data frame has the same length.", Real: c.Quote,
		Share: 1, Start: c.CharStart, End: c.CharEnd, Kept: true, From: "a"}}, res.Snapped)
	require.Len(t, res.Rejected, 2)
	for _, r := range res.Rejected {
		require.Equal(t, QuoteNotFound, r.Reason)
	}
	require.Equal(t, 2, res.Unsupported)
}

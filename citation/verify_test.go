package citation

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

// pageText extracts one physical page of a corpus PDF the way the manifest
// reads it, so the fixtures are the book's real text.
func pageText(t *testing.T, rel string, page int) string {
	t.Helper()
	path := corpus.Path(t, rel)
	out, err := exec.Command("pdftotext", "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), path, "-").Output()
	require.NoError(t, err, "pdftotext (poppler-utils) is needed")
	return strings.TrimSpace(strings.ReplaceAll(string(out), "\f", ""))
}

// spanningChunk joins the end of one page and the start of the next into a
// chunk whose page spans mark the break, like the chunker makes them.
func spanningChunk(t *testing.T) citebook.Chunk {
	p20 := pageText(t, "books/R-intro.pdf", 20)
	p21 := pageText(t, "books/R-intro.pdf", 21)
	tail := p20[strings.Index(p20, "R caters for changes of mode"):]
	tail = tail[:strings.Index(tail, "> d <- as.integer(digits)")+len("> d <- as.integer(digits)")]
	head := p21[strings.Index(p21, "Now d and z are the same."):]
	head = head[:strings.Index(head, "3.2 Changing")]
	text := tail + "\n" + head
	return citebook.Chunk{
		ID: "r-3-1-7", BookID: "r-intro", ParentID: "r-3-1",
		HeadingPath: []string{"3 Objects, their modes and attributes", "3.1 Intrinsic attributes: mode and length"},
		PageStart:   20, PageEnd: 21, PrintedStart: "14", PrintedEnd: "15",
		Text:  text,
		Pages: []citebook.PageSpan{{Offset: 0, Page: 20, Printed: "14"}, {Offset: len(tail) + 1, Page: 21, Printed: "15"}},
	}
}

// lshortChunk is the text of one page of the Chinese LaTeX primer from
// the marker from up to the marker to, as a chunk of that page.
func lshortChunk(t *testing.T, page int, printed, from, to, id string, heading ...string) citebook.Chunk {
	p := pageText(t, "books/lshort-zh-cn.pdf", page)
	i := strings.Index(p, from)
	text := p[i : i+strings.Index(p[i:], to)]
	return citebook.Chunk{
		ID: id, BookID: "lshort", ParentID: id[:strings.LastIndex(id, "-")], HeadingPath: heading,
		PageStart: page, PageEnd: page, PrintedStart: printed, PrintedEnd: printed,
		Text: strings.TrimSpace(text), Pages: []citebook.PageSpan{{Offset: 0, Page: page, Printed: printed}},
	}
}

func chineseChunk(t *testing.T) citebook.Chunk {
	return lshortChunk(t, 15, "3", "许多用户会使用", "1.2", "zh-1-1-3", "第一章 LaTeX 的基本概念", "1.1 TeX 和 LaTeX")
}

// latexChunk is the primer's section on tables of contents, whose lines
// start with LaTeX commands.
func latexChunk(t *testing.T) citebook.Chunk {
	return lshortChunk(t, 32, "20", "在 LATEX 中生成目录", "正确生成目录项", "zh-3-1-2", "第三章 文档元素", "3.1.2 目录")
}

func TestLocate(t *testing.T) {
	en := spanningChunk(t)
	zh := chineseChunk(t)
	tex := latexChunk(t)
	tests := []struct {
		name      string
		chunk     citebook.Chunk
		quote     string
		reason    Reason
		page      int
		printed   string
		wantQuote string // the verbatim text the offsets select; "" skips
		pages     string // the printed pages a quote across the break runs over; "" for one page
	}{
		{"on the first page", en, "R caters for changes of mode almost anywhere it could be considered sensible to do so,", "", 20, "14", "R caters for changes of mode almost anywhere it could be considered sensible to do so,", ""},
		{"after the page break", en, "Now d and z are the same.", "", 21, "15", "Now d and z are the same.", ""},
		{"spanning the break: the page holding most of it", en, "> d <- as.integer(digits) Now d and z are the same", "", 21, "15", "", "14–15"},
		{"spanning the break: mostly on the earlier page", en, "reconstructs the numerical vector again: > d <- as.integer(digits) Now d", "", 20, "14", "", "14–15"},
		{"ellipsis parts on both pages", en, "R caters for changes of mode ... Now d and z are the same.", "", 20, "14", "", "14–15"},
		{"whitespace and line breaks differ", en, "R   caters for changes\n of mode almost\tanywhere", "", 20, "14", "", ""},
		{"case and typographic quotes differ", en, `after which DIGITS is the character vector c(“0”, "1", "2", ..., "9")`, "", 20, "14", "", ""},
		{"ellipsis joins two parts in order", en, "R caters for changes of mode ... reconstructs the numerical vector again", "", 20, "14", "", ""},
		{"ellipsis parts out of order", en, "reconstructs the numerical vector again ... R caters for changes of mode", QuoteNotFound, 0, "", "", ""},
		{"invented quote", en, "R refuses to change the mode of an object once created", QuoteNotFound, 0, "", "", ""},
		{"too short to prove anything", en, "the same", QuoteTooShort, 0, "", "", ""},
		{"Chinese verbatim", zh, "这些编辑器提供的编译功能，实际上只是对特定命令行程序的封装，而并非魔法。", "", 15, "3", "", ""},
		{"Chinese with half-width punctuation", zh, "这些编辑器提供的编译功能,实际上只是对特定命令行程序的封装,而并非魔法.", "", 15, "3", "", ""},
		{"Chinese without punctuation or across the line break", zh, "这些编辑器提供的编译功能实际上只是对特定命令行程序的封装", "", 15, "3", "", ""},
		{"Chinese full-width Latin letters", zh, "许多用户会使用ＴｅＸｗｏｒｋｓ或ＴｅＸｓｔｕｄｉｏ等编辑器", "", 15, "3", "", ""},
		{"Chinese altered", zh, "这些编辑器提供的编译功能就是魔法", QuoteNotFound, 0, "", "", ""},
		{"opening with a LaTeX command: its backslash is shown", tex, "\\tableofcontents 生成的章节默认不写入目录", "", 32, "20", "\\tableofcontents 生成的章节默认不写入目录", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, reason := Locate(tt.chunk, tt.quote)
			require.Equal(t, tt.reason, reason)
			if reason != "" {
				return
			}
			require.Equal(t, tt.page, c.Page)
			require.Equal(t, tt.printed, c.PrintedPage)
			require.Equal(t, tt.pages, c.PrintedPages, "the pages a reader turns to")
			if tt.pages != "" {
				require.Equal(t, []int{20, 21}, c.Pages)
			} else {
				require.Empty(t, c.Pages)
			}
			require.Equal(t, tt.chunk.ID, c.ChunkID)
			require.Equal(t, tt.chunk.HeadingPath, c.HeadingPath)
			require.True(t, c.CharStart >= 0 && c.CharStart < c.CharEnd && c.CharEnd <= len(tt.chunk.Text))
			if tt.wantQuote != "" {
				require.Equal(t, tt.wantQuote, tt.chunk.Text[c.CharStart:c.CharEnd])
				require.Equal(t, tt.wantQuote, c.Quote)
			}
			// The offsets select the quote in the original text: normalizing
			// the selection yields the quote's first normalized characters.
			got := string(normalize(tt.chunk.Text[c.CharStart:c.CharEnd]).runes)
			first := string(normalize(ellipsis.Split(tt.quote, -1)[0]).runes)
			require.True(t, strings.HasPrefix(got, first), "selection %q does not start with %q", got, first)
		})
	}
}

func TestVerify(t *testing.T) {
	en := spanningChunk(t)
	zh := chineseChunk(t)
	outside := citebook.Chunk{ID: "r-3-2-1", BookID: "r-intro", Text: "An “empty” object may still have a mode."}
	ctx := map[string]citebook.Chunk{en.ID: en, zh.ID: zh}
	known := func(id string) bool { return id == outside.ID || ctx[id].ID != "" }
	titles := map[string]string{"r-intro": "An Introduction to R", "lshort": "一份（不太）简短的 LaTeX2ε 介绍"}

	tests := []struct {
		name        string
		statements  []Statement
		refused     bool
		answer      string
		pages       []int
		rejected    []Reason
		unsupported int
	}{
		{
			name: "honest statements are numbered in order",
			statements: []Statement{
				{Text: "R changes modes where sensible [7].", Citations: []Claim{{en.ID, "R caters for changes of mode almost anywhere it could be considered sensible to do so"}}},
				{Text: "After coercing back, d equals z.", Citations: []Claim{{en.ID, "Now d and z are the same."}}},
			},
			answer: "R changes modes where sensible. [1] After coercing back, d equals z. [2]",
			pages:  []int{20, 21},
		},
		{
			name: "the same quote twice keeps one number",
			statements: []Statement{
				{Text: "A.", Citations: []Claim{{en.ID, "Now d and z are the same."}}},
				{Text: "B.", Citations: []Claim{{en.ID, "now d and z are the same"}, {zh.ID, "而并非魔法。这是一句编造的话"}}},
			},
			answer:   "A. [1] B. [1]",
			pages:    []int{21},
			rejected: []Reason{QuoteNotFound},
		},
		{
			name: "a lying answerer is refused",
			statements: []Statement{
				{Text: "R was written in 1850.", Citations: []Claim{{"invented-42", "R was written in 1850"}}},
				{Text: "Empty objects have modes.", Citations: []Claim{{outside.ID, "An “empty” object may still have a mode."}}},
				{Text: "R never coerces.", Citations: []Claim{{en.ID, "R never changes the mode of anything at all"}}},
				{Text: "Uncited claim."},
			},
			refused:     true,
			answer:      RefusalMessage,
			rejected:    []Reason{UnknownChunk, NotInContext, QuoteNotFound},
			unsupported: 4,
		},
		{
			name: "unsupported statements are dropped, supported kept",
			statements: []Statement{
				{Text: "编辑器的编译功能只是封装。", Citations: []Claim{{zh.ID, "实际上只是对特定命令行程序的封装"}}},
				{Text: "LaTeX is magic.", Citations: []Claim{{zh.ID, "LaTeX 是魔法"}}},
			},
			answer:      "编辑器的编译功能只是封装。 [1]",
			pages:       []int{15},
			rejected:    []Reason{QuoteNotFound},
			unsupported: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Verify(tt.statements, ctx, known, titles, SupportCheck{})
			require.Equal(t, tt.refused, res.Refused)
			require.Equal(t, tt.answer, res.Answer)
			require.Equal(t, len(tt.statements), res.Total)
			require.Equal(t, tt.unsupported, res.Unsupported)
			var pages []int
			for i, c := range res.Citations {
				require.Equal(t, i+1, c.N)
				require.NotEmpty(t, c.BookTitle)
				pages = append(pages, c.Page)
			}
			require.Equal(t, tt.pages, pages)
			var reasons []Reason
			for _, r := range res.Rejected {
				reasons = append(reasons, r.Reason)
			}
			require.Equal(t, tt.rejected, reasons)
			if tt.refused {
				require.Empty(t, res.Citations)
			}
		})
	}
}

// TestStripMarkers: the answerer's own [n] markers go, wherever written,
// but an index glued to a word that the cited quote prints the same way is
// the book's code and stays (R-intro p. 21: "e[3] <- 17").
func TestStripMarkers(t *testing.T) {
	quote := []Claim{{"r", "Thus\n\n> e[3] <- 17\n\nnow makes e a vector of length 3"}}
	for _, tt := range []struct{ text, want string }{
		{"Thus > e[3] <- 17 makes e of length 3 [1].", "Thus > e[3] <- 17 makes e of length 3."},
		{"Thus > e[3] <- 17 makes e of length 3.[2]", "Thus > e[3] <- 17 makes e of length 3."},
		{"Assigning e[3] grows it [1, 2]", "Assigning e[3] grows it"},
		{"Assigning x[3] grows it [1]", "Assigning x grows it"}, // not the quote's code: read as a marker
		{"It grows[1] by assignment", "It grows by assignment"},
	} {
		require.Equal(t, tt.want, stripMarkers(tt.text, quote), tt.text)
	}
	require.Equal(t, "e grows", stripMarkers("e[3] grows", nil), "no quote, no code")
}

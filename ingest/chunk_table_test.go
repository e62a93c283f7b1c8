package ingest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

// TestChunkKeepsTables checks that a statement that fits the chunk budget is
// one chunk with its header of years, and that a longer one is cut between
// rows, never inside one.
func TestChunkKeepsTables(t *testing.T) {
	tok, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseFile(context.Background(), corpus.Path(t, "financebench/pdfs/3M_2018_10K.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	_, chunks := Split(doc, "3m", tok, ChunkOptions{})
	onPage := func(p int) []citebook.Chunk {
		var out []citebook.Chunk
		for _, c := range chunks {
			if c.PageStart == p && c.PageEnd == p {
				out = append(out, c)
			}
		}
		return out
	}
	// Page 57, the statement of comprehensive income: about 200 tokens.
	var whole bool
	for _, c := range onPage(57) {
		if strings.HasPrefix(c.Text, "(Millions) 2018 2017 2016\n") &&
			strings.Contains(c.Text, "\nComprehensive income (loss) attributable to 3M $ 5,508 $ 5,077 $ 4,164") {
			whole = true
		}
	}
	if !whole {
		t.Errorf("the statement of comprehensive income is not one chunk with its header")
	}
	// Page 60, the cash flow statement, is longer than one chunk: every
	// line of its chunks is a whole line of the page's text.
	var pageLines []string
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			if len(b.Pages) == 1 && b.Pages[0].Page == 60 {
				pageLines = append(pageLines, strings.Split(b.Text, "\n")...)
			}
		}
	}
	cashFlow := onPage(60)
	if len(cashFlow) < 2 {
		t.Fatalf("%d chunks on page 60", len(cashFlow))
	}
	for _, c := range cashFlow {
		for _, l := range strings.Split(c.Text, "\n") {
			if l != "" && !slices.Contains(pageLines, l) {
				t.Errorf("chunk line %q is not a whole line of page 60", l)
			}
		}
		if !slices.Contains(c.HeadingPath, "Consolidated Statement of Cash Flow s") {
			t.Errorf("chunk on page 60 has heading path %q", c.HeadingPath)
		}
	}
}

// TestChunkTableContext checks, on real filings, that a chunk continuing a
// table past its header rows is found with the table's caption and column
// years (IndexContext) while its text stays the page's own, and that the
// chunk holding the header, and chunks outside tables, get no context.
func TestChunkTableContext(t *testing.T) {
	tok, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file    string
		page    int
		row     string // a row of the continued chunk
		context string // its IndexContext
		first   string // a row of the table's first chunk, which has the header in its text
	}{
		{"3M_2018_10K.pdf", 58, "Total liabilities and equity $ 36,500 $ 37,987",
			"December 31, December 31,\n(Dollars in millions, except per share amount) 2018 2017",
			"Cash and cash equivalents $ 2,853 $ 3,053"},
		{"3M_2018_10K.pdf", 60, "Purchases of treasury stock (4,870) (2,068) (3,753)",
			"(Millions) 2018 2017 2016",
			"Depreciation and amortization 1,488 1,544 1,474"},
		{"JOHNSON_JOHNSON_2022_10K.pdf", 46, "Total current liabilities 55,802 45,226", "2022 2021",
			"Inventories (Notes 1 and 3) 12,483 10,387"},
		// A note's table: the lead-in sentence and the units above it are
		// its caption.
		{"VERIZON_2022_10K.pdf", 77, "Total debt $ 150,639 $ 150,868",
			"Outstanding long-term debt obligations as of December 31, 2022 and 2021 are as follows:\n(dollars in millions)\nInterest\nAt December 31, Maturities Rates % 2022 2021",
			"5-10 Years 1.50 - 7.88 42,637 43,225"},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+strconv.Itoa(c.page), func(t *testing.T) {
			doc, err := ParseFile(context.Background(), corpus.Path(t, "financebench/pdfs/"+c.file))
			if err != nil {
				t.Fatal(err)
			}
			_, chunks := Split(doc, "b", tok, ChunkOptions{})
			full := FullText(doc)
			var cont, first *citebook.Chunk
			for i := range chunks {
				ch := &chunks[i]
				if ch.Text != full[ch.CharStart:ch.CharEnd] {
					t.Fatalf("chunk %d: text is not the book's text", i)
				}
				if ch.PageStart != c.page {
					continue
				}
				if strings.Contains(ch.Text, c.row) {
					cont = ch
				}
				if strings.Contains(ch.Text, c.first) {
					first = ch
				}
			}
			if cont == nil || first == nil || cont == first {
				t.Fatalf("want two chunks on page %d holding %q and %q", c.page, c.first, c.row)
			}
			if cont.IndexContext != c.context {
				t.Errorf("continued chunk's index context %q, want %q", cont.IndexContext, c.context)
			}
			if strings.Contains(cont.Text, c.context) {
				t.Errorf("the context is part of the chunk's text")
			}
			if first.IndexContext != "" {
				t.Errorf("the table's first chunk has index context %q", first.IndexContext)
			}
		})
	}
	// Outside tables no chunk has context: the R manual's examples and
	// lists, set in columns, are no tables of figures.
	doc, err := ParseFile(context.Background(), corpus.Path(t, "books/R-intro.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	_, chunks := Split(doc, "r", tok, ChunkOptions{})
	for _, ch := range chunks {
		if ch.IndexContext != "" {
			t.Errorf("chunk on page %d has context %q", ch.PageStart, ch.IndexContext)
		}
	}
}

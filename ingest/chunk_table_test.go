package ingest

import (
	"context"
	"slices"
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

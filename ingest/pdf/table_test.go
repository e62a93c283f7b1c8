package pdf

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/citebook/citebook/ingest/internal/parsing"
)

// parseFiling parses a FinanceBench filing from the corpus, once per test run.
func parseFiling(t *testing.T, name string) *parsing.Document {
	t.Helper()
	return parseCorpusFile(t, "financebench/pdfs/"+name)
}

// TestParsePDFStatements checks financial statements of real filings against
// `pdftotext -layout -f N -l N` read by hand: every row keeps its label and
// its figures on one line, the header of years heads the table in the same
// block and is marked as its header rows (Block.Header), and the
// statement's title (the headings that open the page, which used to replace
// one another, or were taken for the end of the previous page's last
// paragraph when set in the body's type) is the heading path of the page's
// text.
func TestParsePDFStatements(t *testing.T) {
	cases := []struct {
		file   string
		page   int
		title  string   // an element of the heading path of the table
		header string   // the table block's first line
		head   string   // the table's header rows, Text[:Header]
		rows   []string // whole lines of the table block
	}{
		{"3M_2018_10K.pdf", 60, "Consolidated Statement of Cash Flow s", "(Millions) 2018 2017 2016", "(Millions) 2018 2017 2016", []string{
			"Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)",
			"Cash Flows from Investing Activities", // a row-group label stays inside the table
			"Net cash provided by (used in) operating activities 6,439 6,240 6,662",
			"Cash and cash equivalents at end of period $ 2,853 $ 3,053 $ 2,398",
		}},
		{"3M_2018_10K.pdf", 58, "Consolidated Balance Shee t", "December 31, December 31,",
			"December 31, December 31,\n(Dollars in millions, except per share amount) 2018 2017", []string{
				"Assets", // a row-group label right under the header is no header row
				"Cash and cash equivalents $ 2,853 $ 3,053",
			}},
		{"AMAZON_2017_10K.pdf", 38, "CONSOLIDATED STATEMENTS OF OPERATIONS", "2015 2016 2017", "2015 2016 2017", []string{
			"Net product sales $ 79,268 $ 94,665 $ 118,573",
			"Total net sales 107,006 135,987 177,866",
		}},
		{"BESTBUY_2019_10K.pdf", 52, "Consolidated Balance Sheets", "February 2, 2019 February 3, 2018", "February 2, 2019 February 3, 2018", []string{
			"Merchandise inventories 5,409 5,209",
			"Total current assets 8,870 9,829",
		}},
		// Titles in the body's type after a page that ends without a full
		// stop (a folio, a list of statements).
		{"JOHNSON_JOHNSON_2022_10K.pdf", 46, "CONSOLIDATED BALANCE SHEETS", "2022 2021", "2022 2021", []string{
			"Inventories (Notes 1 and 3) 12,483 10,387",
		}},
		{"ACTIVISIONBLIZZARD_2019_10K.pdf", 73, "CONSOLIDATED STATEMENTS OF CASH FLOWS", "2019 2018 2017", "2019 2018 2017", []string{
			"Capital expenditures (116) (131) (155)",
		}},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+strconv.Itoa(c.page), func(t *testing.T) {
			doc := parseFiling(t, c.file)
			var table *parsing.Block
			var path []string
			for si := range doc.Sections {
				s := &doc.Sections[si]
				for bi := range s.Blocks {
					b := &s.Blocks[bi]
					if len(b.Pages) == 1 && b.Pages[0].Page == c.page && strings.Contains(b.Text, c.rows[0]) {
						table, path = b, s.HeadingPath
					}
				}
			}
			if table == nil {
				t.Fatalf("no block on page %d holds the row %q", c.page, c.rows[0])
			}
			lines := strings.Split(table.Text, "\n")
			if lines[0] != c.header {
				t.Errorf("table starts with %q, want the header %q", lines[0], c.header)
			}
			for _, r := range c.rows {
				if !slices.Contains(lines, r) {
					t.Errorf("no table line %q", r)
				}
			}
			if got := table.Text[:table.Header]; got != c.head {
				t.Errorf("header rows %q, want %q", got, c.head)
			}
			if !slices.Contains(path, c.title) {
				t.Errorf("heading path %q lacks the statement title %q", path, c.title)
			}
		})
	}
}

// TestHeaderRows: a table's header is its opening rows of cells up to the
// first figure — years, dates and footnote marks are labels, not figures —
// and a table with no figures near its top has none.
func TestHeaderRows(t *testing.T) {
	row := func(lines ...string) *pdfPara {
		p := &pdfPara{table: true, lines: lines}
		for _, l := range lines {
			p.cells = append(p.cells, len(strings.Fields(l))) // every word a cell
		}
		return p
	}
	cases := []struct {
		name string
		p    *pdfPara
		want int
	}{
		{"years", row("(Millions) 2018 2017 2016", "Net income $ 5,363 $ 4,869 $ 5,058"), 1},
		{"dates", row("June 30, 2023 December 31, 2022", "Cash 1,200 1,100"), 1},
		{"figures first", row("Net sales 100 200", "Cost of sales 50 60"), 0},
		{"a single digit is a figure", row("Provision for inventories 6 6 33", "Other 1 2 3"), 0},
		{"footnote marks", row("At December 31, Maturities Rates % 2022 2021", "(1) 2,992 4,086"), 1},
		{"percent header", row("% Change % Change", "2023 2022 Reported Currency", "US 27 26 4.5% 4.5%"), 2},
		{"no figures near the top", row("Pfizer Inc. Delaware", "Pfizer Ltd. Japan", "A B", "C D", "E F", "G H", "I J", "K L"), 0},
		{"not a table", &pdfPara{lines: []string{"2018 2017"}, cells: []int{2}}, 0},
		{"group labels after the header", &pdfPara{table: true,
			lines: []string{"2022 2021", "Assets", "Current assets", "Cash $ 14,127 14,487"}, cells: []int{2, 1, 1, 3}}, 1},
	}
	for _, c := range cases {
		if got := c.p.headerRows(); got != c.want {
			t.Errorf("%s: %d header rows, want %d", c.name, got, c.want)
		}
	}
}

// TestFindGutterFigures: a right-aligned column of amounts beside ragged
// labels is a table read row by row, while two justified columns of words
// are text columns.
func TestFindGutterFigures(t *testing.T) {
	var table, text []pdfFrag
	for i := range 30 {
		y := 700 - float64(i)*10
		label := strings.Repeat("Label words ", 1+i%3)
		table = append(table,
			pdfFrag{x0: 50, x1: 50 + float64(len(label))*4, y: y, size: 8, text: label, chars: len(label)},
			pdfFrag{x0: 420, x1: 460, y: y, size: 8, text: "(1,577)", chars: 7},
			pdfFrag{x0: 500, x1: 540, y: y, size: 8, text: "1,373", chars: 5})
		words := "justified words of a text column"
		text = append(text,
			pdfFrag{x0: 50, x1: 280, y: y, size: 8, text: words, chars: len(words)},
			pdfFrag{x0: 310, x1: 540, y: y, size: 8, text: words, chars: len(words)})
	}
	if _, two := findGutter(table); two {
		t.Errorf("a column of amounts was taken for a text column")
	}
	if _, two := findGutter(text); !two {
		t.Errorf("two justified text columns not found")
	}
}

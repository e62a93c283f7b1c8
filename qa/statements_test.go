package qa_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// TestStatementAnswers asks real 10-K filings for a line item of a
// financial statement, in the reader's words, with the builtin embedder and
// the extractive answerer: the answer must quote the statement's row (and
// its column header) on the statement's page. The rows hold few of the
// question's words ("capital expenditure" is "Purchases of property, plant
// and equipment" there), so before statements were read as tables these
// answers quoted prose from other pages (3M: p. 39, Costco: p. 53,
// Activision Blizzard: p. 51).
func TestStatementAnswers(t *testing.T) {
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	books := []struct{ id, file string }{
		{"3m-2018", "3M_2018_10K.pdf"},
		{"costco-2021", "COSTCO_2021_10K.pdf"},
		{"atvi-2019", "ACTIVISIONBLIZZARD_2019_10K.pdf"},
	}
	for _, b := range books {
		testlib.Index(t, l, citebook.BookInput{BookID: b.id, Tenant: "fin", Path: corpus.Path(t, "financebench/pdfs/"+b.file)})
	}
	p := testlib.Pipeline(t, l)
	analyst := citebook.Principal{Tenant: "fin", User: "ana", Admin: true}
	for _, tc := range []struct {
		book, question string
		page           int    // the statement's physical page
		row            string // the quoted row starts so
	}{
		{"3m-2018", "How much did 3M spend on capital expenditure in FY2018, according to its cash flow statement?", 60, "Purchases of property, plant and equipment (PP&E) (1,577)"},
		{"costco-2021", "What were Costco's total assets at the end of FY2021 in its balance sheet?", 38, "TOTAL ASSETS $ 59,268"},
		{"atvi-2019", "What were Activision Blizzard's capital expenditures in FY2019 according to the cash flow statement?", 73, "Capital expenditures (116)"},
	} {
		t.Run(tc.book, func(t *testing.T) {
			a, err := p.Ask(context.Background(), analyst, qa.Request{Question: tc.question, BookIDs: []string{tc.book}}, nil)
			require.NoError(t, err)
			require.False(t, a.Refused, "refused: %+v", a.Trace.Answerability)
			require.NotEmpty(t, a.Citations)
			var quoted bool
			for _, c := range a.Citations {
				require.Equal(t, tc.page, c.Page, "every citation on the statement's page: %q", c.Quote)
				quoted = quoted || strings.HasPrefix(c.Quote, tc.row)
			}
			require.True(t, quoted, "the row is quoted: %+v", a.Citations)
		})
	}
}

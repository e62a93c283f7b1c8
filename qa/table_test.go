package qa

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// statementText is a cash flow statement as the parser gives a PDF's
// table: a line per row under the column header (figures made up).
const statementText = `(Millions) 2021 2020 2019
Cash Flows from Operating Activities
Net income including noncontrolling interest $ 4,120 $ 3,980 $ 3,700
Depreciation and amortization 1,210 1,190 1,150
Net cash provided by (used in) operating activities 5,310 5,020 4,870
Cash Flows from Investing Activities
Purchases of property, plant and equipment (PP&E) (1,430) (1,290) (1,350)
Proceeds from sale of PP&E and other assets 120 80 60
Net cash provided by (used in) investing activities (1,310) (1,210) (1,290)`

func TestSplitTable(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		header     []string
		rows       int // 0: no table
	}{
		{"statement", statementText, []string{"(Millions) 2021 2020 2019"}, 8},
		{"prose", "R is an integrated suite of software facilities.\nIt has 3 parts and 2 manuals.\nSee page 12 for more.", nil, 0},
		{"prose with years", "In 2018 the company moved. In 2019 it grew.\nSales rose 5% in 2020.\nThe plan ends in 2024.\nNothing else.", nil, 0},
		{"balance sheet, no unit line", "December 31, 2021 2020\nTotal current assets 12,400 11,900\nProperty, plant and equipment - net 8,100 8,300\nTotal assets $ 40,100 $ 39,800\nTotal current liabilities 7,000 6,800", []string{"December 31, 2021 2020"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitTable(tc.text)
			if tc.rows == 0 {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tc.header, got.header)
			require.Len(t, got.rows, tc.rows)
		})
	}
}

// TestExtractiveQuotesTableRow: asked for a line item by the reader's name
// for it, the extractive answer quotes the statement's column header and
// the row that the vocabulary names ("capital expenditure" is "Purchases
// of property, plant and equipment"), not the prose that shares the
// question's words.
func TestExtractiveQuotesTableRow(t *testing.T) {
	e := NewExtractive(analysis.Terms)
	q := "What was the company's capital expenditure in FY2021, as shown in its cash flow statement?"
	prose := ContextChunk{Chunk: citebook.Chunk{ID: "prose", Text: "Capital expenditure plans are reviewed by the board of directors every year."}, Rank: 1, Retrieved: 1}
	table := ContextChunk{Chunk: citebook.Chunk{ID: "table", Text: statementText,
		HeadingPath: []string{"Consolidated Statement of Cash Flows", "Years ended December 31"}}, Rank: 2, Retrieved: 2}
	w := map[string]float64{"capital": 2, "expenditure": 2.5, "fy2021": 3, "2021": 1.5, "cash": 1, "flow": 1, "statement": 0.8, "shown": 1}
	th := newThesaurus(DefaultSynonyms)
	ev := Evidence{Weights: w, Aliases: th.aliases(q)}
	d, err := e.AnswerWeighted(context.Background(), q, []ContextChunk{prose, table}, ev)
	require.NoError(t, err)
	require.Len(t, d.Statements, 2, "header and row: %+v", d.Statements)
	require.Equal(t, "(Millions) 2021 2020 2019", d.Statements[0].Citations[0].Quote)
	require.Equal(t, "Purchases of property, plant and equipment (PP&E) (1,430) (1,290) (1,350)", d.Statements[1].Citations[0].Quote)
	for _, s := range d.Statements {
		require.Equal(t, "table", s.Citations[0].ChunkID)
		require.True(t, strings.Contains(statementText, s.Citations[0].Quote), "every quote is the chunk's own text")
	}

	// Without the vocabulary the row holds none of the question's words
	// itself, and the prose is the answer.
	d, err = e.AnswerWeighted(context.Background(), q, []ContextChunk{prose, table}, Evidence{Weights: w})
	require.NoError(t, err)
	require.Equal(t, "prose", d.Statements[0].Citations[0].ChunkID)
}

func TestAliases(t *testing.T) {
	th := newThesaurus(DefaultSynonyms)
	got := th.aliases("How large was the capex of 3M in 2018?")
	var phrases []string
	for _, a := range got {
		require.Equal(t, []string{"capex"}, a.Terms)
		phrases = append(phrases, strings.Join(a.Phrase, " "))
	}
	require.Contains(t, phrases, strings.Join(analysis.ContentTerms(analysis.Terms("purchases of property, plant and equipment")), " "))
	require.Empty(t, th.aliases("How do I merge two data frames in R?"))

	terms := analysis.TermSet(analysis.Terms("Purchases of property, plant and equipment (PP&E) (1,577)"))
	require.True(t, withAliases(terms, got)["capex"])
	require.False(t, withAliases(analysis.TermSet(analysis.Terms("Purchases of treasury stock")), got)["capex"])
}

// TestExtractiveLabelEndsAtTotal: the rows under a label ("Cost of
// revenue:") hold its terms up to their total, not the rows after it, so
// "COGS" is answered by the total cost of revenue, not by the operating
// income two rows below (figures made up).
func TestExtractiveLabelEndsAtTotal(t *testing.T) {
	q := "What is the FY2016 COGS for the company, using the statement of income?"
	text := "Year Ended June 30, 2016 2015 2014\nRevenue:\nProduct $ 60,100 $ 74,000 $ 71,200\nService and other 22,800 17,100 13,200\nTotal revenue 82,900 91,100 84,400\nCost of revenue:\nProduct 17,100 20,900 16,200\nService and other 14,300 11,200 10,100\nTotal cost of revenue 31,400 32,100 26,300\nGross margin 51,500 59,000 58,100\nOperating income 19,800 17,900 27,100"
	c := ContextChunk{Chunk: citebook.Chunk{ID: "is", Text: text, HeadingPath: []string{"Financial statements", "INCOME STATEMENTS"}}, Rank: 1}
	w := map[string]float64{"cog": 5, "statement": 1, "income": 1, "2016": 2, "company": 0.5}
	ev := Evidence{Weights: w, Aliases: newThesaurus(DefaultSynonyms).aliases(q)}
	d, err := NewExtractive(analysis.Terms).AnswerWeighted(context.Background(), q, []ContextChunk{c}, ev)
	require.NoError(t, err)
	require.Len(t, d.Statements, 2)
	require.Equal(t, "Year Ended June 30, 2016 2015 2014", d.Statements[0].Citations[0].Quote)
	require.Equal(t, "Total cost of revenue 31,400 32,100 26,300", d.Statements[1].Citations[0].Quote)
}

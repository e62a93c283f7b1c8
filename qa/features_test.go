package qa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// A question that names a statement by a line item ranks the page titled
// with that statement above a note that discusses the item; adjacency of
// the question's terms ranks a passage holding them together above one
// holding them apart; a question naming nothing of the vocabulary changes
// nothing but proximity.
func TestBoostFeatures(t *testing.T) {
	opts := Options{}.withDefaults()
	p := &Pipeline{thesaurus: newThesaurus(opts.Synonyms), pageKinds: newTitleIndex(opts.Statements)}
	w := Fusion{Lexical: 1, Repeat: 1, Heading: 1.5, Proximity: 0.3}
	cand := func(id string, headings []string, text string, bm25 float64) *candidate {
		return &candidate{chunk: &citebook.Chunk{ID: id, BookID: "b", PageStart: len(id), HeadingPath: headings, Text: text},
			lexRank: 1, lexScore: bm25}
	}

	qf := p.queryFeatures("Did Boeing's gross margin improve in FY2022?")
	require.NotEmpty(t, qf.titleQuery, "gross margin names the income statement")
	note := cand("note", []string{"Management's Discussion"}, "Gross margin improved on higher deliveries.", 10)
	stmt := cand("statement", []string{"The Boeing Company", "Consolidated Statements of Operation s"}, "Total revenues 66,608 62,286", 4)
	boost(&qf, []*candidate{note, stmt}, w)
	require.Greater(t, stmt.own, note.own, "the statement page gains the heading weight, the note only proximity")
	require.InDelta(t, 1.5, stmt.own, 1e-9, "split letters in a title still match")

	qf = p.queryFeatures("How do I reshape a data frame from wide to long?")
	require.Empty(t, qf.titles)
	together := cand("together", nil, "To reshape a data frame use reshape().", 1)
	apart := cand("apart", nil, "A frame of data can reshape nothing.", 1)
	boost(&qf, []*candidate{together, apart}, w)
	require.Greater(t, together.own, apart.own)
	require.Zero(t, apart.own)

	boost(nil, []*candidate{apart}, w)
	require.Zero(t, apart.own, "no features, no change")
}

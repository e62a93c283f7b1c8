package pdf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// runs is how often each check repeats: Go starts every range over a map at
// a random entry, so a tie left to map order goes either way within a few
// runs.
const runs = 50

// TestBodySizeTieIsStable: when two font sizes set as many characters, the
// body size is the smaller one in every run, not whichever the count map
// yields first; headings are found against it.
func TestBodySizeTieIsStable(t *testing.T) {
	pages := [][]pdfLine{{{size: 12, chars: 40}, {size: 10, chars: 40}, {size: 11, chars: 40}}}
	for i := 0; i < runs; i++ {
		require.Equal(t, 10.0, bodySize(pages), "run %d", i)
	}
}

// TestRunningHeadBandTieIsStable: when as many pages carry a head with a
// page number at one height as at another, the same heads are stripped in
// every run (those of the band of smaller y), so the same PDF indexes to the same
// text and folios each time.
func TestRunningHeadBandTieIsStable(t *testing.T) {
	heads := []struct {
		y    float64
		text string
	}{
		{700, "Alpha notes 12"}, {700, "Bravo section 13"}, {700, "Charlie part 14"},
		{720, "Delta words 15"}, {720, "Echo remarks 16"}, {720, "Foxtrot items 17"},
	}
	want := []string{"12", "13", "14", "", "", ""}
	for i := 0; i < runs; i++ {
		pages := make([][]pdfLine, len(heads))
		for p, h := range heads {
			pages[p] = []pdfLine{
				{y: h.y, x0: 72, size: 10, text: h.text, chars: len(h.text)},
				{y: 400, x0: 72, size: 10, text: "Body text of page " + h.text[:4] + " goes on here.", chars: 30},
				{y: 380, x0: 72, size: 10, text: "More body text on " + h.text[:5] + " page.", chars: 30},
			}
		}
		require.Equal(t, want, stripRunning(pages), "run %d", i)
		for p := range pages[:3] {
			require.Len(t, pages[p], 2, "run %d: page %d keeps its head", i, p)
		}
	}
}

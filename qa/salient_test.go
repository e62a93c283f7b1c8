package qa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

func TestSameWord(t *testing.T) {
	tests := []struct {
		q, t string
		want bool
	}{
		{"assign", "assignment", true},
		{"fail", "failure", true},
		{"monitor", "monitoring", true},
		{"console", "consoles", true},
		{"console", "constant", false}, // "cons" is four letters, not a prefix of the other
		{"file", "fill", false},
		{"cat", "category", false}, // three letters never match by prefix
		{"cat", "cat", true},
		{"编译", "编译", true},
		{"编译", "编辑", false},
		{"2018", "20180", false}, // numbers match exactly
		{"fy2018", "fy2019", false},
		{"fy2018", "fy2018", true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, sameWord(tt.q, tt.t), "%s ~ %s", tt.q, tt.t)
		require.Equal(t, tt.want, sameWord(tt.t, tt.q), "%s ~ %s", tt.t, tt.q)
	}
}

func testSalient(t *testing.T, q string, w map[string]float64) *salient {
	t.Helper()
	s := newSalient(q, w, analysis.Terms, nil)
	require.NotNil(t, s)
	return s
}

// Coverage counts each key term once, inside one window of two sentences:
// a passage that states the answer in one place beats one that repeats a
// word and scatters the rest.
func TestWindowCoverage(t *testing.T) {
	s := testSalient(t, "Which keys switch between the virtual consoles?",
		map[string]float64{"key": 1, "switch": 2, "virtual": 2, "console": 1})
	together := "You can switch between the virtual consoles by pressing Alt and one of the F1-F6 keys."
	apart := "The console is a console. Consoles matter. " +
		"Nothing here. Nothing there. Still nothing. Virtual memory is elsewhere. Keys too."
	require.InDelta(t, 1.0, s.windowCoverage(&citebook.Chunk{Text: together}, citebook.RowRef{}), 1e-12)
	// Best window: "Virtual memory is elsewhere. Keys too." = (2+1)/6.
	require.InDelta(t, 0.5, s.windowCoverage(&citebook.Chunk{Text: apart}, citebook.RowRef{}), 1e-12)
	require.Zero(t, s.windowCoverage(&citebook.Chunk{}, citebook.RowRef{}))
}

func TestSectionMatchPrefersTheInnermostHeading(t *testing.T) {
	s := testSalient(t, "If I assign to a variable inside a function, is it visible afterwards?",
		map[string]float64{"assign": 2, "variable": 1, "inside": 0.5, "function": 0.5, "visible": 1})
	// assign (2) and function (0.5) in the innermost heading: 2.5 / 5.
	require.InDelta(t, 0.5, s.sectionMatch([]string{"Writing your own functions", "Assignments within functions"}), 1e-12)
	// The same words one level further out count half.
	require.InDelta(t, 0.25, s.sectionMatch([]string{"Assignments within functions", "Details"}), 1e-12)
	// function one level up only: 0.5·0.5 / 5.
	require.InDelta(t, 0.05, s.sectionMatch([]string{"Writing your own functions", "Loops"}), 1e-12)
	require.Zero(t, s.sectionMatch(nil))
}

// Without term statistics (a scope too small to have them) there is
// nothing to weigh and the features stay off.
func TestNewSalientNeedsWeights(t *testing.T) {
	require.Nil(t, newSalient("which keys switch consoles", nil, analysis.Terms, nil))
	require.Nil(t, newSalient("which keys switch consoles", map[string]float64{"other": 1}, analysis.Terms, nil))
}

// The candidate holding all key terms in one sentence overtakes the one
// BM25 put first for repeating one of them, and only the head of the
// candidates is rescored.
func TestBoostSalientReordersTheHead(t *testing.T) {
	s := testSalient(t, "Which keys switch between the virtual consoles?",
		map[string]float64{"key": 1, "switch": 2, "virtual": 2, "console": 1})
	mk := func(id, text string, own float64) *candidate {
		return &candidate{chunk: &citebook.Chunk{ID: id, Text: text}, own: own}
	}
	cands := []*candidate{
		mk("repeats", "The console, the console and the console again.", 1.0),
		mk("answers", "Switch between the virtual consoles with Alt and the F1-F6 keys.", 0.9),
	}
	for i := 0; i < salientHead; i++ {
		cands = append(cands, mk(string(rune('a'+i%26))+"-filler", "Switch virtual keys console.", 0.1))
	}
	tail := mk("tail", "Switch virtual keys console.", 0.05)
	cands = append(cands, tail)
	boostSalient(s, cands, Fusion{Cover: 0.15})
	require.InDelta(t, 1.0+0.15*1.0/6, cands[0].own, 1e-12)
	require.InDelta(t, 0.9+0.15, cands[1].own, 1e-12)
	require.Greater(t, cands[1].own, cands[0].own)
	require.InDelta(t, 0.05, tail.own, 1e-12, "below the head: not rescored")
	// Off when the weights are zero.
	c := mk("x", "Switch virtual keys console.", 0.5)
	boostSalient(s, []*candidate{c}, Fusion{})
	require.InDelta(t, 0.5, c.own, 1e-12)
}

// FuzzSameWordStart: terms sameWord takes for one word share their
// analysis.TermStart, so the lexical index may hand the coverage feature
// only the terms starting like a key term (ChunkSentences' starts).
func FuzzSameWordStart(f *testing.F) {
	for _, p := range [][2]string{{"assign", "assignments"}, {"fail", "failure"}, {"a", "a"}, {"data", "dat"},
		{"2018", "2018"}, {"数据", "数据"}, {"x", "xylophone"}, {"", ""}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, q, w string) {
		if sameWord(q, w) {
			require.Equal(t, analysis.TermStart(q), analysis.TermStart(w), "%q %q", q, w)
		}
	})
}

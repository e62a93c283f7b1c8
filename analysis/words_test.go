package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCJKRuns(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]string
	}{
		{"写页码范围（比如第 13 到 67 页）时", [][]string{{"写页", "页码", "码范", "范围"}, {"比如", "如第"}}},
		{"用 $$ 来写", nil}, // runs of one or two characters hold no boundary
		{"ＰＤＦ的页码范围", [][]string{{"的页", "页码", "码范", "范围"}}},
		{"no CJK at all", nil},
	} {
		require.Equal(t, c.want, CJKRuns(c.in), c.in)
	}
}

func TestStraddles(t *testing.T) {
	for _, c := range []struct {
		name string
		df   []int
		want []bool
	}{
		// 写页 页码 码范 范围: 码范 dips below both neighbours; 写页 is at
		// the edge and stays (a rare edge pair is as often half a name).
		{"dip between two words", []int{0, 9, 1, 12}, []bool{false, false, true, false}},
		{"neighbours not common enough", []int{0, 9, 1, 7}, []bool{false, false, false, false}},
		{"all rare: no evidence", []int{0, 0, 0, 0}, []bool{false, false, false, false}},
		{"absent pair between words", []int{30, 0, 4}, []bool{false, true, false}},
		{"too short for a dip", []int{50, 0}, []bool{false, false}},
		{"empty", nil, []bool{}},
	} {
		require.Equal(t, c.want, Straddles(c.df), c.name)
	}
}

func TestSpellings(t *testing.T) {
	for _, tt := range []struct {
		term string
		want []string // among the candidates
		not  []string
	}{
		{"neighbouring", []string{"neighboring"}, nil},
		{"licence", []string{"license"}, nil},
		{"organisation", []string{"organization"}, nil},
		{"analyse", []string{"analyze"}, nil},
		{"centre", []string{"center"}, nil},
		{"centred", []string{"centered"}, nil},
		{"center", []string{"centre"}, nil},
		{"catalogue", []string{"catalog"}, nil},
		{"travelled", []string{"traveled"}, nil},
		{"programme", []string{"program"}, nil},
		{"color", []string{"colour"}, nil},
		{"four", nil, []string{"for"}}, // the word's first letters are never rewritten
		{"hour", nil, []string{"hor"}},
		{"row", nil, nil},
	} {
		got := Spellings(tt.term)
		for _, w := range tt.want {
			require.Contains(t, got, w, tt.term)
		}
		for _, w := range tt.not {
			require.NotContains(t, got, w, tt.term)
		}
		require.NotContains(t, got, tt.term)
		if tt.want == nil {
			require.Empty(t, got, tt.term)
		}
	}
}

package qa

import (
	"strings"
	"unicode"
)

// leaderShare is the share of a text's non-space characters that are full
// stops. Tables of contents and indexes ("3.1 Intrinsic attributes . . . 14")
// score near 0.5, prose near 0.02: such lists repeat every heading of a
// book, so they match many questions while answering none. Cleaning folds a
// dot leader into one "…", so an ellipsis followed by a page number counts as
// the run of dots it stands for, and so does the last dot of a short leader
// (". . 8") that ends in a page number.
func leaderShare(s string) float64 {
	const foldedLeader = 10
	dots, all := 0, 0
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case (r == '…' || r == '.' && endsDotRun(rs[:i])) && beforePageNumber(rs[i+1:]):
			dots += foldedLeader
			all += foldedLeader
		case r == '.' || r == '…':
			dots++
			all++
		case r == ' ' || r == '\n' || r == '\t':
		default:
			all++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(dots) / float64(all)
}

// endsDotRun reports whether rs ends with a dot, possibly followed by one
// space: the dot after it then closes a leader such as ". . 8".
func endsDotRun(rs []rune) bool {
	n := len(rs)
	return n > 0 && rs[n-1] == '.' || n > 1 && rs[n-1] == ' ' && rs[n-2] == '.'
}

// beforePageNumber reports whether rs starts, after spaces, with a page
// number: digits or a lower-case roman numeral.
func beforePageNumber(rs []rune) bool {
	i := 0
	for i < len(rs) && rs[i] == ' ' {
		i++
	}
	n := 0
	for ; i < len(rs) && (unicode.IsDigit(rs[i]) || strings.ContainsRune("ivxlc", rs[i])); i++ {
		n++
	}
	return n > 0 && (i == len(rs) || !unicode.IsLetter(rs[i]))
}

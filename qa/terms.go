package qa

import (
	"strings"
	"unicode"
)

// isStopword reports English function words. They carry no topic, so a
// chunk sharing only them with a question ("what", "is", "the") must not
// count as relevant when thresholding, reranking or extracting.
func isStopword(t string) bool {
	switch t {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
		"further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
		"his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
		"my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our",
		"ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than",
		"that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
		"those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
		"when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
		"yours", "yourself", "yourselves", "tell", "explain", "describe", "give", "please", "doe":
		return true
	}
	return false
}

// contentTerms drops stopwords and repeats from segmented terms.
func contentTerms(terms []string) []string {
	out := terms[:0:0]
	seen := map[string]bool{}
	for _, t := range terms {
		t = strings.ToLower(t)
		if isStopword(t) || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// ContentTerms drops stopwords and repeats from segmented terms, as
// support verification compares statements and quotes; exported so
// evaluation checks support the same way.
func ContentTerms(terms []string) []string { return contentTerms(terms) }

// termSet is the set of a text's lower-cased terms.
func termSet(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[strings.ToLower(t)] = true
	}
	return m
}

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

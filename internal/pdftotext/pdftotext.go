// Package pdftotext runs poppler's pdftotext for tests: its text is the
// reference the PDF reader's text is measured against (bags of words and
// bigrams, precision, recall and F1), as popplerbox's word boxes are for
// citation boxes.
package pdftotext

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Path finds poppler's pdftotext, the reference the parser's text is
// measured against. CI installs it; elsewhere its absence skips the test.
func Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pdftotext not installed (poppler-utils); CI must provide it")
		}
		t.Skip("pdftotext not installed")
	}
	return p
}

// Pages returns pdftotext's text of a file, one string per page.
func Pages(t testing.TB, file string, args ...string) []string {
	t.Helper()
	args = append(append([]string{}, args...), file, "-")
	out, err := exec.Command(Path(t), args...).Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", file, err)
	}
	pages := strings.Split(string(out), "\f")
	if len(pages) > 0 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	return pages
}

var (
	refDigits = regexp.MustCompile(`\d+|\b[ivxlcdm]+\b`)
	// refHyphen finds words pdftotext leaves broken across lines ("exam-" /
	// "ple"); the parser rejoins them, so the reference is rejoined too.
	refHyphen = regexp.MustCompile(`(\pL)-\n(?:[ \t]*\n)*(\p{Ll})`)
)

// StripRunning drops running heads, feet and folios from pdftotext
// pages the way a reader would: any of the first two and last two lines of a
// page that is a bare number or whose number-masked text recurs at a page
// edge on three or more pages. Words hyphenated at a line break are rejoined.
func StripRunning(pages []string) string {
	lines := make([][]string, len(pages))
	edges := make([]map[int]bool, len(pages))
	count := map[string]int{}
	mask := func(s string) string {
		return refDigits.ReplaceAllString(strings.ToLower(strings.Join(strings.Fields(s), " ")), "#")
	}
	for i, p := range pages {
		lines[i] = strings.Split(p, "\n")
		var text []int
		for k, l := range lines[i] {
			if strings.TrimSpace(l) != "" {
				text = append(text, k)
			}
		}
		edges[i] = map[int]bool{}
		for j, k := range text {
			if j < 2 || j >= len(text)-2 {
				edges[i][k] = true
			}
		}
		for k := range edges[i] {
			count[mask(lines[i][k])]++
		}
	}
	var sb strings.Builder
	for i := range pages {
		for k, l := range lines[i] {
			if edges[i][k] {
				m := mask(l)
				if strings.Trim(m, "# /") == "" || count[m] >= 3 {
					continue
				}
			}
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	// pdftotext prints a glyph it cannot map (dtc-paper's ligatures) as a
	// control character; drop those before rejoining hyphenated words.
	text := strings.Map(func(r rune) rune {
		if r != '\n' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, sb.String())
	return refHyphen.ReplaceAllString(text, "$1$2")
}

// dropLigatures removes the letter pairs TeX sets as ligatures. pdftotext
// loses them in fonts without a Unicode map (dtc-paper: "flattened" comes out
// as "attened"); removing them on both sides compares everything else.
var dropLigatures = strings.NewReplacer("ffi", "", "ffl", "", "ff", "", "fi", "", "fl", "")

// WordBag counts lower-cased runs of letters and digits.
func WordBag(s string) map[string]int {
	bag := map[string]int{}
	for _, w := range strings.FieldsFunc(dropLigatures.Replace(strings.ToLower(s)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		bag[w]++
	}
	return bag
}

// BigramBag counts pairs of adjacent non-space characters that hold a letter
// or digit, the word-free measure that suits Chinese; punctuation-only pairs
// (dot leaders) are layout, not text.
func BigramBag(s string) map[string]int {
	bag := map[string]int{}
	var rs []rune
	for _, r := range s {
		if !unicode.IsSpace(r) {
			rs = append(rs, r)
		}
	}
	letter := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 1; i < len(rs); i++ {
		if letter(rs[i-1]) || letter(rs[i]) {
			bag[string(rs[i-1:i+1])]++
		}
	}
	return bag
}

// BagF1 is the multiset F1 of got against want.
func BagF1(got, want map[string]int) (precision, recall, f1 float64) {
	var inter, ng, nw int
	for k, n := range got {
		ng += n
		inter += min(n, want[k])
	}
	for _, n := range want {
		nw += n
	}
	if ng == 0 || nw == 0 {
		return 0, 0, 0
	}
	precision = float64(inter) / float64(ng)
	recall = float64(inter) / float64(nw)
	if inter == 0 {
		return precision, recall, 0
	}
	return precision, recall, 2 * precision * recall / (precision + recall)
}

package pdf

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pageLabels reads the /PageLabels number tree, which is what a PDF viewer
// shows as the page number and what the author numbered the pages as. It
// returns nil when the catalog has none.
func pageLabels(root pdf.Value, pages int) []string {
	tree := root.Key("PageLabels")
	if tree.Kind() != pdf.Dict {
		return nil
	}
	type rng struct {
		start int
		spec  pdf.Value
	}
	var ranges []rng
	var walk func(n pdf.Value, depth int)
	visits := 0
	walk = func(n pdf.Value, depth int) {
		visits++
		if depth > 32 || len(ranges) > 100000 || visits > 10000 {
			return
		}
		nums := n.Key("Nums")
		for i := 0; i+1 < nums.Len(); i += 2 {
			k := nums.Index(i)
			if k.Kind() != pdf.Integer {
				continue
			}
			ranges = append(ranges, rng{int(k.Int64()), nums.Index(i + 1)})
		}
		kids := n.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			walk(kids.Index(i), depth+1)
		}
	}
	walk(tree, 0)
	if len(ranges) == 0 {
		return nil
	}
	labels := make([]string, pages)
	for i, r := range ranges {
		end := pages
		if i+1 < len(ranges) && ranges[i+1].start < end {
			end = ranges[i+1].start
		}
		style := r.spec.Key("S").Name()
		prefix := r.spec.Key("P").Text()
		st := 1
		if v := r.spec.Key("St"); v.Kind() == pdf.Integer && v.Int64() > 0 {
			st = int(v.Int64())
		}
		for p := max(r.start, 0); p < end; p++ {
			labels[p] = prefix + formatLabel(style, st+p-r.start)
		}
	}
	return labels
}

// formatLabel renders n in a /PageLabels numbering style.
func formatLabel(style string, n int) string {
	switch style {
	case "D":
		return strconv.Itoa(n)
	case "R":
		return strings.ToUpper(toRoman(n))
	case "r":
		return toRoman(n)
	case "A":
		return strings.ToUpper(toLetters(n))
	case "a":
		return toLetters(n)
	}
	return ""
}

// toRoman renders n in lower-case roman numerals.
func toRoman(n int) string {
	if n <= 0 || n >= 5000 {
		return strconv.Itoa(n)
	}
	vals := []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"}
	var sb strings.Builder
	for i, v := range vals {
		for n >= v {
			sb.WriteString(syms[i])
			n -= v
		}
	}
	return sb.String()
}

// toLetters renders n the PDF way: a..z, then aa..zz, and so on.
func toLetters(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(string(rune('a'+(n-1)%26)), min((n-1)/26+1, 64))
}

// fromRoman parses a lower- or upper-case roman numeral, returning 0 when s
// is not one.
func fromRoman(s string) int {
	s = strings.ToLower(s)
	if s == "" || len(s) > 12 || strings.Trim(s, "ivxlcdm") != "" {
		return 0
	}
	val := map[byte]int{'i': 1, 'v': 5, 'x': 10, 'l': 50, 'c': 100, 'd': 500, 'm': 1000}
	n := 0
	for i := 0; i < len(s); i++ {
		v := val[s[i]]
		if i+1 < len(s) && val[s[i+1]] > v {
			n -= v
		} else {
			n += v
		}
	}
	if toRoman(n) != s {
		return 0
	}
	return n
}

var (
	folioOf    = regexp.MustCompile(`(?i)^(?:page\s+)?(\d{1,4})\s*(?:/|of)\s*\d{1,4}$`)
	folioPlain = regexp.MustCompile(`^(?:[-–—]\s*)?(\d{1,4}|[ivxlcdmIVXLCDM]{1,8})(?:\s*[-–—])?$`)
)

// folio extracts the page number printed in a running header or footer: a
// lone number, "N / M", "Page N", or a number at either end of the line.
func folio(text string) string {
	t := strings.TrimSpace(text)
	if m := folioOf.FindStringSubmatch(t); m != nil {
		return m[1]
	}
	if m := folioPlain.FindStringSubmatch(t); m != nil {
		return m[1]
	}
	f := strings.Fields(t)
	if len(f) < 2 {
		return ""
	}
	if m := folioOf.FindStringSubmatch(strings.Join(f[max(len(f)-3, 0):], " ")); m != nil {
		return m[1]
	}
	for _, c := range []string{f[len(f)-1], f[0]} {
		if isDecimal(c) && len(c) <= 4 || fromRoman(c) > 0 && strings.ToLower(c) == c {
			return c
		}
	}
	return ""
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// labelsFromFolios derives printed labels from the folios found in running
// headers and footers when the PDF declares none: the most common offset
// between physical page and decimal folio numbers every page, and roman
// folios label the front matter they appear on.
func labelsFromFolios(folios []string) []string {
	offsets := map[int]int{}
	decimals := 0
	for i, f := range folios {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			offsets[i+1-n]++
			decimals++
		}
	}
	best, bestN := 0, 0
	for off, n := range offsets {
		if n > bestN || n == bestN && off < best {
			best, bestN = off, n
		}
	}
	labels := make([]string, len(folios))
	if bestN >= 2 && bestN*2 >= decimals || bestN == 1 && decimals == 1 && len(folios) == 1 {
		for i := range labels {
			if n := i + 1 - best; n >= 1 {
				labels[i] = strconv.Itoa(n)
			}
		}
	}
	for i, f := range folios {
		if fromRoman(f) > 0 {
			labels[i] = f
		}
	}
	return labels
}

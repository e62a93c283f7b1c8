package citation

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// Unsupported is the rejection reason of a citation whose quote is in the
// chunk but does not say what its statement says.
const Unsupported Reason = "quote_does_not_support"

// MinSupport is the share of a statement's content terms its quotes must
// hold. A statement may rephrase ("Use sink() to divert output" for "sink
// … will divert all subsequent output"), so not every word must be quoted;
// half of them, and every number and name, must.
const MinSupport = 0.5

// SupportCheck decides whether quotes support a statement. Content
// segments text into content terms (lower-cased, stopwords dropped, as the
// lexical index segments: qa passes its own), so the check agrees with
// retrieval's notion of a word, CJK included.
type SupportCheck struct {
	Content func(string) []string
}

// Gap says what a statement claims that its quotes do not hold; empty
// means supported.
type Gap struct {
	Numbers []string `json:"numbers,omitempty"` // numbers in no quote
	Names   []string `json:"names,omitempty"`   // names and identifiers in no quote
	Share   float64  `json:"share"`             // share of content terms found in the quotes
}

// Supported reports whether the quotes hold the statement's numbers, names
// and identifiers, and at least MinSupport of its content terms. A quote
// that merely exists in a real chunk proves nothing about a sentence it
// does not support; this is what keeps a model's invention from being shown
// under a genuine citation.
func (s SupportCheck) Supported(statement string, quotes []string) (bool, Gap) {
	var g Gap
	joined := strings.Join(quotes, "\n")
	qn := numberSet(joined)
	for _, n := range numbersOf(statement) {
		if !qn[n] {
			g.Numbers = append(g.Numbers, n)
		}
	}
	have := map[string]bool{}
	for _, t := range s.Content(joined) {
		have[t] = true
	}
	for _, n := range namesOf(statement) {
		// Typed verbatim in a quote is found, whatever the segmenter
		// makes of its neighbours: "TEX" of the footnoted "1TEX" is the
		// one term "1tex".
		found := true
		if containsName(joined, n) {
			continue
		}
		for _, t := range s.Content(n) {
			if !have[t] && !isDigits(t) {
				found = false
			}
		}
		if !found {
			g.Names = append(g.Names, n)
		}
	}
	terms := unique(s.Content(statement))
	matched := 0
	for _, t := range terms {
		if have[t] || prefixMatch(t, have) {
			matched++
		}
	}
	if len(terms) == 0 {
		g.Share = 1
	} else {
		g.Share = float64(matched) / float64(len(terms))
	}
	return len(g.Numbers) == 0 && len(g.Names) == 0 && g.Share >= MinSupport, g
}

// containsName reports whether text holds the name n as typed, with no
// Latin letter on either side of it (nor a digit after it): "TEX" is in
// "1TEX原生", not in "1TEXT".
func containsName(text, n string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], n)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(n)
		before := i > 0 && isASCIILetter(text[i-1])
		after := end < len(text) && (isASCIILetter(text[end]) || '0' <= text[end] && text[end] <= '9')
		if !before && !after {
			return true
		}
		from = i + 1
	}
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// number matches a number as written: digits with inner separators
// (1,234.5; 3.14); the separators are dropped before comparing so "1,000"
// and "1000" agree.
var number = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

func numbersOf(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range number.FindAllString(s, -1) {
		n := canonicalNumber(m)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func numberSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, n := range numbersOf(s) {
		m[n] = true
	}
	return m
}

// canonicalNumber drops thousands separators and trailing zero decimals.
func canonicalNumber(m string) string {
	// A comma followed by exactly three digits groups thousands.
	parts := strings.Split(m, ",")
	if len(parts) > 1 {
		ok := true
		for _, p := range parts[1:] {
			if len(p) < 3 || !isDigits(p[:3]) {
				ok = false
			}
		}
		if ok {
			m = strings.Join(parts, "")
		}
	}
	if i := strings.IndexByte(m, '.'); i >= 0 {
		m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
	}
	return m
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// nameToken matches identifier-like tokens: words with an inner capital or
// digit, all-capital words, and code (a_b, a::b, a.b, f()).
var nameToken = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|->)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?`)

// namesOf lists a statement's names and identifiers: tokens with an inner
// capital (WireGuard), two or more capitals (CUDA), an underscore, "::" or
// an inner dot, or a capitalized word not at a sentence start.
func namesOf(s string) []string {
	var out []string
	for _, loc := range nameToken.FindAllStringIndex(s, -1) {
		tok := s[loc[0]:loc[1]]
		if utf8.RuneCountInString(strings.TrimSuffix(tok, "()")) < 2 {
			continue
		}
		upper, inner := 0, false
		for i, r := range tok {
			if unicode.IsUpper(r) {
				upper++
				if i > 0 {
					inner = true
				}
			}
		}
		start := loc[0] == 0 || analysis.SentenceStart(s[:loc[0]])
		switch {
		case strings.ContainsAny(tok, "_") || strings.Contains(tok, "::") || strings.Contains(tok, ".") || strings.HasSuffix(tok, "()"):
		case inner || upper >= 2:
		case upper == 1 && !start:
		default:
			continue
		}
		out = append(out, tok)
	}
	return out
}

// prefixMatch lets an inflected word match its stem in a quote ("diverts"
// and "divert", "selected" and "selection") when both share five letters.
func prefixMatch(t string, have map[string]bool) bool {
	if len(t) < 5 || !isLatin(t) {
		return false
	}
	p := t[:5]
	for h := range have {
		if len(h) >= 5 && h[:5] == p {
			return true
		}
	}
	return false
}

func isLatin(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func unique(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

package qa

import (
	"context"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// definitions maps a short form a book defines ("capex", "pp&e") to its
// long form ("capital expenditures", "property, plant and equipment"), both
// lower-cased.
type definitions map[string]definition

type definition struct {
	long  string
	terms string // the long form's terms, space-separated and padded
}

// define collects the abbreviations a text defines, with the algorithm of
// Schwartz and Hearst ("A simple algorithm for identifying abbreviation
// definitions in biomedical text", 2003): a short form in parentheses
// right after the words it abbreviates, whose characters are matched right
// to left inside those words, the first at the start of a word; the long
// form is the shortest such run of words. It scans for parentheses instead
// of using a regular expression, which took 3 µs per byte.
func define(text string, into definitions) {
	for i := 0; i < len(text); i++ {
		if text[i] != '(' {
			continue
		}
		end := strings.IndexByte(text[i+1:min(len(text), i+12)], ')')
		if end < 0 {
			continue
		}
		short := text[i+1 : i+1+end]
		if !shortForm(short) {
			continue
		}
		words := strings.Fields(text[max(0, i-160):i])
		if i >= 160 && len(words) > 0 {
			words = words[1:] // the first may be cut
		}
		// The long form's words end right before the parenthesis and hold no
		// sentence or clause break.
		for k := len(words) - 1; k >= 0; k-- {
			if strings.ContainsAny(words[k], ".;:()[]") && k < len(words)-1 || strings.ContainsAny(words[k], "()[]") {
				words = words[k+1:]
				break
			}
		}
		if long, ok := longForm(short, words); ok && !lowerPrefix(short, long) {
			key := strings.ToLower(short)
			if _, seen := into[key]; !seen {
				into[key] = definition{long: long, terms: " " + strings.Join(analysis.Terms(long), " ") + " "}
			}
		}
	}
}

// shortForm reports whether s can be an abbreviation: 2–10 characters
// starting with a letter; with a capital it may hold digits, "&", "-" and
// dots ("PP&E", "U.S."), without one it must be a word of at least three
// letters ("capex"); never a stop word ("(IT)" would expand every question
// holding "it").
func shortForm(s string) bool {
	if len(s) < 2 || len(s) > 10 || !unicode.IsLetter(rune(s[0])) {
		return false
	}
	upper := false
	for _, r := range s {
		switch {
		case 'A' <= r && r <= 'Z':
			upper = true
		case 'a' <= r && r <= 'z':
		case '0' <= r && r <= '9', r == '&', r == '-', r == '.':
			if !strings.ContainsFunc(s, unicode.IsUpper) {
				return false
			}
		default:
			return false
		}
	}
	if !upper && len(s) < 3 {
		return false
	}
	return !analysis.IsStopword(strings.ToLower(s))
}

// lowerPrefix reports a lower-case short form that begins a word of its
// long form or follows numbers: an ordinary word in brackets, "groups of
// users (group)", a table row "interest 5,516 … comprehensive (income)".
func lowerPrefix(short, long string) bool {
	if strings.ContainsFunc(short, unicode.IsUpper) {
		return false
	}
	if strings.ContainsFunc(long, unicode.IsDigit) {
		return true
	}
	for _, w := range strings.Fields(strings.ToLower(long)) {
		if strings.HasPrefix(w, short) {
			return true
		}
	}
	return false
}

// longForm matches short against the words before it, at most
// min(|short|+5, 2|short|) of them.
func longForm(short string, words []string) (string, bool) {
	letters := []rune(strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, short)))
	if len(letters) < 2 {
		return "", false
	}
	limit := min(len(letters)+5, 2*len(letters))
	if len(words) > limit {
		words = words[len(words)-limit:]
	}
	if out, ok := initials(letters, words); ok || strings.Contains(short, "&") {
		return out, ok // "R&D", "SG&A" name their words' initials or nothing
	}
	long := []rune(strings.ToLower(strings.Join(words, " ")))
	li := len(long) - 1
	for si := len(letters) - 1; si >= 0; si-- {
		c := letters[si]
		for li >= 0 && (long[li] != c || si == 0 && li > 0 && (unicode.IsLetter(long[li-1]) || unicode.IsDigit(long[li-1]))) {
			li--
		}
		if li < 0 {
			return "", false
		}
		li--
	}
	// li+1 is where the long form starts; widen it to the start of its word.
	start := li + 1
	for start > 0 && long[start-1] != ' ' {
		start--
	}
	return plausible(string(long[start:]), letters)
}

// plausible trims a long form and rejects what is no definition: fewer
// than two words, a first word that is a function word or does not start
// with the short form's first letter, or a long form that contains the
// short form itself ("… of console logging level (console)").
func plausible(long string, letters []rune) (string, bool) {
	long = strings.TrimRight(long, ",;: ")
	ws := strings.Fields(long)
	if len(ws) < 2 || len([]rune(long)) <= len(letters) || analysis.IsStopword(strings.Trim(ws[0], ",;:'’")) {
		return "", false
	}
	if []rune(ws[0])[0] != letters[0] || len([]rune(ws[0])) < 2 {
		return "", false
	}
	short := string(letters)
	for _, w := range strings.FieldsFunc(long, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if w == short {
			return "", false
		}
	}
	return long, true
}

// initials matches an acronym whose letters are the initials of the last
// words, function words aside ("PP&E" ← "property, plant and equipment"),
// which the character matching alone would cut short ("plant and
// equipment" also holds p, p, e).
func initials(letters []rune, words []string) (string, bool) {
	n := len(letters)
	for i := len(words) - 1; i >= 0; i-- {
		w := strings.ToLower(strings.Trim(words[i], ",;:'’"))
		if w == "" || analysis.IsStopword(w) || w == "&" {
			continue
		}
		n--
		if r := []rune(w)[0]; n < 0 || r != letters[n] {
			return "", false
		}
		if n == 0 {
			return plausible(strings.ToLower(strings.Join(words[i:], " ")), letters)
		}
	}
	return "", false
}

// expansionMax bounds the definitions one question is expanded with.
const expansionMax = 4

// expand adds to a query what the books in scope define its terms as: the
// long form of an abbreviation it uses, or the abbreviation of a long form
// it spells out; then the configured vocabulary's other names for what it
// names (see DefaultSynonyms). It returns the query unchanged when nothing
// applies.
func expand(query string, defs definitions, th thesaurus, ti titleIndex) string {
	if len(defs) == 0 && len(th) == 0 && len(ti) == 0 {
		return query
	}
	lower := strings.ToLower(query)
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '&' || r == '-')
	}) {
		words[strings.Trim(w, "-")] = true
	}
	qterms := " " + strings.Join(analysis.Terms(query), " ") + " "
	var add []string
	keys := make([]string, 0, len(defs))
	for k := range defs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, short := range keys {
		d := defs[short]
		switch {
		case words[short] && !strings.Contains(qterms, d.terms):
			add = append(add, d.long)
		case !words[short] && strings.Contains(qterms, d.terms):
			add = append(add, short)
		}
		if len(add) == expansionMax {
			break
		}
	}
	for _, ph := range append(th.related(qterms), ti.named(qterms)...) {
		if !slices.Contains(add, ph) {
			add = append(add, ph)
		}
	}
	if len(add) == 0 {
		return query
	}
	return query + " (" + strings.Join(add, "; ") + ")"
}

// scopeDefinitions merges the definitions of the books in scope, leaving
// out those of sections the filter denies (the expanded query is shown in
// the trace).
func (p *Pipeline) scopeDefinitions(ctx context.Context, f citebook.Filter) (definitions, error) {
	if p.deps.Books == nil {
		return nil, nil
	}
	out := definitions{}
	deny := denied(f)
	for _, b := range f.Books {
		pr, err := p.profile(ctx, b)
		if err != nil {
			return nil, err
		}
		for _, d := range pr.defs {
			if _, ok := out[d.short]; !ok && !deny[d.parent] {
				out[d.short] = d.def
			}
		}
	}
	return out, nil
}

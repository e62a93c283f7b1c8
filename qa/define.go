package qa

import (
	"context"
	"regexp"
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

// parenthesised finds "long form (SHORT)" candidates: a short form of 2–10
// characters starting with a letter and holding a capital, right after up to
// 12 words.
var parenthesised = regexp.MustCompile(`((?:[A-Za-z][\w&'’\-]*[,]?\s+){1,12})\(([A-Za-z][A-Za-z0-9&\-\.]{1,9})\)`)

// define collects the abbreviations a text defines, with the algorithm of
// Schwartz and Hearst ("A simple algorithm for identifying abbreviation
// definitions in biomedical text", 2003): the short form's characters are
// matched right to left inside the words before the parenthesis, the first
// one at the start of a word, and the long form is the shortest such run
// of words.
func define(text string, into definitions) {
	for _, m := range parenthesised.FindAllStringSubmatch(text, -1) {
		short := m[2]
		// A lower-case short form ("capex") must be a word of letters; one
		// with capitals may hold digits, "&" and dots ("PP&E", "U.S.").
		if !strings.ContainsFunc(short, unicode.IsUpper) && (len(short) < 3 || strings.ContainsFunc(short, func(r rune) bool { return !unicode.IsLetter(r) })) {
			continue
		}
		words := strings.Fields(m[1])
		if long, ok := longForm(short, words); ok {
			key := strings.ToLower(short)
			if _, seen := into[key]; !seen {
				into[key] = definition{long: long, terms: " " + strings.Join(analysis.Terms(long), " ") + " "}
			}
		}
	}
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
	if out, ok := initials(letters, words); ok {
		return out, true
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
	out := strings.TrimRight(string(long[start:]), ", ")
	if len(strings.Fields(out)) < 2 || len([]rune(out)) <= len(letters) {
		return "", false
	}
	return out, true
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
			out := strings.TrimRight(strings.ToLower(strings.Join(words[i:], " ")), ", ")
			return out, len(words[i:]) >= 2
		}
	}
	return "", false
}

// expansionMax bounds the definitions one question is expanded with.
const expansionMax = 4

// expand adds to a query what the books in scope define its terms as: the
// long form of an abbreviation it uses, or the abbreviation of a long form
// it spells out. It returns the query unchanged when nothing applies.
func expand(query string, defs definitions) string {
	if len(defs) == 0 {
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
	if len(add) == 0 {
		return query
	}
	return query + " (" + strings.Join(add, "; ") + ")"
}

// scopeDefinitions merges the definitions of the books in scope.
func (p *Pipeline) scopeDefinitions(ctx context.Context, f citebook.Filter) (definitions, error) {
	if p.deps.Books == nil {
		return nil, nil
	}
	out := definitions{}
	for _, b := range f.Books {
		pr, err := p.profile(ctx, b)
		if err != nil {
			return nil, err
		}
		for k, v := range pr.defs {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out, nil
}

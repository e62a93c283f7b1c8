package qa

import (
	"maps"
	"regexp"
	"strings"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// A financial statement or any other table arrives from the parser as one
// line per row ("Purchases of property, plant and equipment (PP&E) (1,577)
// (1,373) (1,420)") under a line of column headings ("(Millions) 2018 2017
// 2016"). Sentence splitting sees it as one long run without full stops.

// table is a chunk's text read as a table: its rows in order and the column
// header lines before the first row.
type table struct {
	header []string
	rows   []row
}

// row is a line of a table; label marks a line without figures ("Cash
// Flows from Investing Activities", "Cost of revenue:"), which names the
// rows below it.
type row struct {
	text  string
	label bool
}

// tableNumber matches one figure of a row: digits with thousands
// separators or a decimal part, optionally in parentheses (negative), a
// sign, a currency or a percent sign; or a dash standing for nil.
var tableNumber = regexp.MustCompile(`^[(\-−–$€£¥]*\d[\d,]*(\.\d+)?[)%]*$|^[—–-]$`)

// yearLike matches a column heading that is a year (fiscal 2018, 2017).
var yearLike = regexp.MustCompile(`^\(?(19|20)\d\d\)?$`)

// minTableRows is how many lines of figures make a text a table.
const minTableRows = 4

// splitTable reads text as a table when most of its lines end in figures
// (at least minTableRows of them, and at least three in five of its lines);
// nil otherwise. Header lines are the lines before the first row whose
// figures are years, with at most one other figure ("December 31, 2021
// 2020") and few words ("(Millions) 2018 2017 2016").
func splitTable(text string) *table {
	if !mayBeTable(text) {
		return nil
	}
	lines := strings.Split(text, "\n")
	var t table
	figures, nonEmpty := 0, 0
	started := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		nonEmpty++
		nums, years, words := lineFigures(l)
		if !started && years > 0 && nums-years <= 1 && words <= 3 {
			t.header = append(t.header, l)
			continue
		}
		if nums >= 1 && words > 0 {
			figures++
		}
		started = true
		t.rows = append(t.rows, row{text: l, label: nums == 0})
	}
	if figures < minTableRows || figures*5 < nonEmpty*3 {
		return nil
	}
	return &t
}

// mayBeTable reports, without allocating, whether enough of text's lines
// end in a figure for splitTable to read it as a table: most chunks are
// prose, and the answerers ask of every context chunk.
func mayBeTable(text string) bool {
	ending, nonEmpty := 0, 0
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			continue
		}
		nonEmpty++
		switch c := line[len(line)-1]; {
		case c >= '0' && c <= '9', c == ')', c == '%', c == '-', c == '$':
			ending++
		case strings.HasSuffix(line, "—") || strings.HasSuffix(line, "–") || strings.HasSuffix(line, "−"):
			ending++
		}
	}
	return ending >= minTableRows && ending*5 >= nonEmpty*3
}

// lineFigures counts a line's trailing figures (those after its last word),
// how many of them are years, and its words before them.
func lineFigures(l string) (nums, years, words int) {
	fields := strings.Fields(l)
	i := len(fields)
	for i > 0 {
		f := fields[i-1]
		if f == "$" || f == "%" {
			i--
			continue
		}
		if !tableNumber.MatchString(f) {
			break
		}
		nums++
		if yearLike.MatchString(f) {
			years++
		}
		i--
	}
	for _, f := range fields[:i] {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			words++
		}
	}
	return nums, years, words
}

// withAliases adds to a text's term set the question's terms of every
// alias it holds whole (see Alias).
func withAliases(terms map[string]bool, aliases []Alias) map[string]bool {
	for _, a := range aliases {
		holds := true
		for _, t := range a.Phrase {
			if !terms[t] {
				holds = false
				break
			}
		}
		if holds {
			for _, t := range a.Terms {
				terms[t] = true
			}
		}
	}
	return terms
}

// rowContext is what every row of a table chunk holds besides its own
// words: the terms of its heading path (the statement's title), its column
// header lines and its index-only context (a continued table's header), as
// terms segments them; nil for a chunk that is no table (t nil).
func rowContext(c *citebook.Chunk, t *table, terms func(string) []string) map[string]bool {
	if t == nil {
		return nil
	}
	parts := append(append(append([]string{}, c.HeadingPath...), t.header...), c.IndexContext)
	return analysis.TermSet(terms(strings.Join(parts, "\n")))
}

// leadHeading returns the chunk's first line when it is one of the
// chunk's own headings (isHeadingLine), trimmed, and the offset where the
// text after it starts; end is 0 when the text opens with no heading line.
func leadHeading(c *citebook.Chunk) (head string, end int) {
	line, _, _ := strings.Cut(c.Text, "\n")
	if !isHeadingLine(line, c.HeadingPath) {
		return "", 0
	}
	return strings.TrimSpace(line), min(len(line)+1, len(c.Text)) // a chunk of the title alone ends there
}

// leadsSection reports whether a quote starting at byte start of the
// chunk's text is the first thing after its heading line: what the
// extractive answerer reads under the heading's terms (Extractive.sentences).
func leadsSection(c *citebook.Chunk, start int) bool {
	_, end := leadHeading(c)
	return end > 0 && start >= end && start <= len(c.Text) && strings.TrimSpace(c.Text[end:start]) == ""
}

// unitCache keeps chunkUnits' result for the chunks of one question's
// context, segmented with one terms function and one set of aliases: the
// answerability check and the builtin reranker read the same chunks, and
// segmenting them twice was an eighth of an extractive answer's CPU. What
// it hands out is shared: callers only read it.
type unitCache struct {
	terms   func(string) []string
	aliases []Alias
	by      map[string]cachedUnits
}

type cachedUnits struct {
	text  string
	units []sentence
	tab   *table
}

func newUnitCache(terms func(string) []string, aliases []Alias) *unitCache {
	return &unitCache{terms: terms, aliases: aliases, by: map[string]cachedUnits{}}
}

// units is chunkUnits(c, u.terms, u.aliases), once per chunk ID and text.
func (u *unitCache) units(c *citebook.Chunk) ([]sentence, *table) {
	if x, ok := u.by[c.ID]; ok && x.text == c.Text {
		return x.units, x.tab
	}
	units, tab := chunkUnits(c, u.terms, u.aliases)
	u.by[c.ID] = cachedUnits{text: c.Text, units: units, tab: tab}
	return units, tab
}

// chunkUnits reads a chunk as the answerers and the answerability check
// see it: prose as its sentences; a table (splitTable) as its rows, each
// holding its own terms, its table's (rowContext) and those of the label
// row above it ("Cash Flows from Investing Activities", "Cost of
// revenue:", which is no answer in itself) until a total row closes the
// label. Every unit holds the question's phrases whose aliases it holds.
// tab is the table, nil for prose; a unit of text "" is a break (a label
// row) no window spans.
func chunkUnits(c *citebook.Chunk, terms func(string) []string, aliases []Alias) (units []sentence, tab *table) {
	tab = splitTable(c.Text)
	if tab == nil {
		text := c.Text
		if head, end := leadHeading(c); end > 0 {
			// The section's title on its own line (EPUB, Markdown) is a
			// unit of its own: a blank line between two CJK lines joins
			// them as a sentence broken by a page (analysis.Sentences),
			// and the title would open the first sentence's quote.
			units = append(units, sentence{text: head, terms: withAliases(analysis.TermSet(terms(head)), aliases)})
			text = text[end:]
		}
		for _, s := range analysis.Sentences(text) {
			units = append(units, sentence{text: s, terms: withAliases(analysis.TermSet(terms(s)), aliases)})
		}
		return units, nil
	}
	context := rowContext(c, tab, terms)
	var label map[string]bool
	for _, r := range tab.rows {
		s := r.text
		if r.label {
			label = analysis.TermSet(terms(s))
			units = append(units, sentence{})
			continue
		}
		own := withAliases(analysis.TermSet(terms(s)), aliases)
		all := maps.Clone(own)
		for t := range context {
			all[t] = true
		}
		for t := range label {
			all[t] = true
		}
		if len(s) >= 5 && strings.EqualFold(s[:5], "total") {
			label = nil // "Total cost of revenue" closes the rows under "Cost of revenue:"
		}
		units = append(units, sentence{text: s, terms: withAliases(all, aliases), own: own})
	}
	return units, tab
}

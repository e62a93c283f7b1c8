package qa

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// Book routing by period. A library of filings holds several of one
// company — its 10-Ks of different years, a 10-Q, an earnings release —
// whose names and covers match a question alike; what tells them apart is
// the period each reports, which its cover page states ("For the fiscal
// year ended December 31, 2018", "For the quarterly period ended July 29,
// 2023", "results for second-quarter 2023"), and the period the question
// asks about ("FY2018", "Q2 of FY2024", "as of August 30, 2023").

// periodKind is what span a document reports on.
type periodKind uint8

const (
	kindNone    periodKind = iota
	kindAnnual             // 10-K, 20-F, 40-F, an annual report
	kindQuarter            // 10-Q, a quarter's earnings release
	kindCurrent            // 8-K, 6-K: an event on a date
)

// period is the reporting period a filing's cover states. Its zero value
// is "none": a book whose cover states none is routed by its names alone.
type period struct {
	kind periodKind
	// fy is the fiscal year the document reports (0: unknown). A fiscal
	// year is named by the calendar year it ends in, except one ending in
	// the first days of January (a 52/53-week year closing on the Sunday
	// nearest December 31), which is named by the year before.
	fy int
	// altFY: fy+1 fits too. A quarter's cover gives its end date, not the
	// fiscal year it belongs to, which for a company whose year ends in
	// January–June is the next calendar year (Best Buy's quarter ended July
	// 29, 2023 is its second quarter of fiscal 2024).
	altFY bool
	// quarter is 1–4 when the cover names it or the quarter ended on a
	// calendar quarter's end (within a week); 0: unknown.
	quarter int
	// end is the period's last day, or the date of an 8-K's report.
	end time.Time
	// form is the form the cover names ("10-K"), for the trace.
	form string
}

func (p period) String() string {
	if p.kind == kindNone {
		return ""
	}
	var b strings.Builder
	if p.form != "" {
		b.WriteString(p.form)
	} else {
		b.WriteString([...]string{"", "annual", "quarterly", "current"}[p.kind])
	}
	if p.quarter > 0 {
		fmt.Fprintf(&b, " Q%d", p.quarter)
	}
	if p.fy > 0 {
		fmt.Fprintf(&b, " FY%d", p.fy)
		if p.altFY {
			fmt.Fprintf(&b, "/%d", p.fy+1)
		}
	}
	if !p.end.IsZero() {
		b.WriteString(" " + p.end.Format("2006-01-02"))
	}
	return b.String()
}

// months spells a month as filings and questions write it.
const months = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`

var (
	// dateRe is "December 31, 2018" or "31 December 2018".
	dateRe = regexp.MustCompile(`(?i)\b(?:` + months + `\s+(\d{1,2}),?\s+((?:19|20)\d{2})|(\d{1,2})\s+` + months + `,?\s+((?:19|20)\d{2}))\b`)
	// A cover's statement of its period, each followed by a date.
	yearEndedRe    = regexp.MustCompile(`(?i)\b(?:fiscal\s+)?year\s+ended\s*$`)
	quarterEndedRe = regexp.MustCompile(`(?i)\b(?:quarterly\s+period|quarter|three\s+months)\s+ended\s*$`)
	reportDateRe   = regexp.MustCompile(`(?i)\bdate\s+of\s+report\b[^:]{0,60}:?\s*$`)
	formRe         = regexp.MustCompile(`(?i)\bform\s+(10-?K|10-?Q|8-?K|20-?F|40-?F|6-?K)\b`)
	// annualReportRe is a report titled by its year: "Annual Report 2022",
	// "Annual Report and Accounts 2021/22", "2022 Annual Report".
	annualReportRe = regexp.MustCompile(`(?i)\bannual\s+report(?:\s+and\s+accounts)?(?:\s+for)?(?:\s+(?:fiscal\s+)?(?:year\s+)?)?\s*((?:19|20)\d{2})(?:\s*[/-]\s*(\d{2}|\d{4}))?\b|\b((?:19|20)\d{2})\s+annual\s+report\b`)
	// A fiscal year named on the cover: "fiscal 2019", "fiscal year 2019",
	// "FY2019".
	fyLabelRe = regexp.MustCompile(`(?i)\b(?:fiscal\s+(?:year\s+)?|FY\s*)((?:19|20)\d{2})\b`)
	// A quarter named with its year, as releases and questions write it:
	// "second-quarter 2023", "fourth quarter and fiscal 2023", "Q4 and
	// full year 2022", "second quarter of fiscal 2023", "2023
	// Second-Quarter", "Q2 2023", "Q2'23", "Q22023", "Q2 of FY2024",
	// "FY23 Q2", "3Q23", "1Q FY2024".
	quarterRe = regexp.MustCompile(`(?i)\b(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]*quarter(\s+and\s+(?:full[\s-]*year|fiscal(?:\s+year)?))?(?:\s+of)?(?:\s+(?:fiscal(?:\s+year)?|FY))?\s*'?((?:19|20)\d{2})\b` +
		`|\b((?:19|20)\d{2})\s+(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]*quarter\b` +
		`|\bQ([1-4])(\s+and\s+(?:full[\s-]*year|fiscal(?:\s+year)?))?\s*(?:of\s+)?(?:(?:fiscal(?:\s+year)?|FY)\s*)?'?((?:19|20)\d{2}|\d{2})\b` +
		`|\b(?:FY\s*'?)?((?:19|20)\d{2}|\d{2})\s*Q([1-4])\b` +
		`|\b([1-4])Q\s*(?:(?:fiscal(?:\s+year)?|FY)\s*)?'?((?:19|20)\d{2}|\d{2})\b`)
	// earningsRe marks a release of results.
	earningsRe = regexp.MustCompile(`(?i)\bresults\b`)
)

var ordinalQuarter = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

// parseDate reads a dateRe match.
func parseDate(s string, m []int) (time.Time, bool) {
	g := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return s[m[2*i]:m[2*i+1]]
	}
	mon, day, year := g(1), g(2), g(3)
	if mon == "" {
		day, mon, year = g(4), g(5), g(6)
	}
	t, err := time.Parse("Jan 2 2006", strings.ToUpper(mon[:1])+strings.ToLower(mon[1:3])+" "+day+" "+year)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// fiscalYear names the fiscal year that ends on end (see period.fy).
func fiscalYear(end time.Time) int {
	if end.Month() == time.January && end.Day() <= 7 {
		return end.Year() - 1
	}
	return end.Year()
}

// calendarQuarter is the quarter whose last day is within a week of t, or
// 0 when t is not near a quarter's end.
func calendarQuarter(t time.Time) int {
	for q := 1; q <= 4; q++ {
		qe := time.Date(t.Year(), time.Month(3*q+1), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
		if d := t.Sub(qe); d > -8*24*time.Hour && d < 8*24*time.Hour {
			return q
		}
	}
	// A quarter of a year ending in the first days of January.
	if t.Month() == time.January && t.Day() <= 7 {
		return 4
	}
	return 0
}

// coverPeriod reads the period a cover page states; ok is false when it
// states none (a book, an article: routed by names alone).
func coverPeriod(text string) (p period, ok bool) {
	if m := formRe.FindStringSubmatch(text); m != nil {
		f := strings.ToUpper(m[1])
		if !strings.Contains(f, "-") {
			f = f[:len(f)-1] + "-" + f[len(f)-1:]
		}
		p.form = f
		switch f[len(f)-1] {
		case 'Q':
			p.kind = kindQuarter
		case 'F':
			p.kind = kindAnnual
		default:
			if f == "10-K" {
				p.kind = kindAnnual
			} else {
				p.kind = kindCurrent
			}
		}
	}
	// The first date the cover says its period ended on.
	for _, m := range dateRe.FindAllStringSubmatchIndex(text, -1) {
		before := text[max(0, m[0]-80):m[0]]
		var kind periodKind
		switch {
		case quarterEndedRe.MatchString(before):
			kind = kindQuarter
		case yearEndedRe.MatchString(before):
			kind = kindAnnual
		case reportDateRe.MatchString(before):
			kind = kindCurrent
		default:
			continue
		}
		t, ok := parseDate(text, m)
		if !ok {
			continue
		}
		if p.kind == kindNone || p.kind == kind {
			p.kind, p.end = kind, t
			break
		}
	}
	switch {
	case p.kind == kindAnnual && !p.end.IsZero():
		p.fy = fiscalYear(p.end)
	case p.kind == kindQuarter && !p.end.IsZero():
		p.fy, p.altFY = p.end.Year(), true
		p.quarter = calendarQuarter(p.end)
	case p.kind == kindCurrent && !p.end.IsZero():
		p.fy = p.end.Year()
	}
	// A quarter named on the cover, as a release of results names it.
	if p.kind == kindNone || p.kind == kindQuarter && p.end.IsZero() {
		if y, q, ok := firstQuarter(text); ok && (p.kind == kindQuarter || earningsRe.MatchString(text)) {
			p.kind, p.fy, p.quarter, p.altFY = kindQuarter, y, q, false
		}
	}
	if p.kind == kindNone {
		if m := annualReportRe.FindStringSubmatch(text); m != nil {
			y, _ := strconv.Atoi(m[1] + m[3])
			if m[2] != "" { // "2021/22": the year it ends in
				y = yearOf(m[2], y)
			}
			p.kind, p.fy = kindAnnual, y
		}
	}
	// A fiscal year the cover names overrides the one derived from the
	// end date: a retailer's year ending February 3, 2018 may be its
	// fiscal 2017.
	if p.kind == kindAnnual || p.kind == kindQuarter {
		if m := fyLabelRe.FindStringSubmatch(text); m != nil {
			if y, _ := strconv.Atoi(m[1]); p.fy == 0 || y == p.fy-1 || y == p.fy || p.altFY && y == p.fy+1 {
				if p.kind == kindQuarter && !p.end.IsZero() && y != p.end.Year() {
					p.quarter = 0 // a fiscal quarter, not the calendar one
				}
				p.fy, p.altFY = y, false
			}
		}
	}
	return p, p.kind != kindNone
}

// firstQuarter is the first quarter named with its year in s.
func firstQuarter(s string) (year, quarter int, ok bool) {
	m := quarterRe.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	switch {
	case m[1] != "":
		year, quarter = yearOf(m[3], 0), ordinalQuarter[strings.ToLower(m[1])]
	case m[4] != "":
		year, quarter = yearOf(m[4], 0), ordinalQuarter[strings.ToLower(m[5])]
	case m[6] != "":
		year, quarter = yearOf(m[8], 0), int(m[6][0]-'0')
	case m[9] != "":
		year, quarter = yearOf(m[9], 0), int(m[10][0]-'0')
	default:
		year, quarter = yearOf(m[12], 0), int(m[11][0]-'0')
	}
	return year, quarter, year > 0
}

// yearOf reads a year of four digits or two ("FY20", "Q2'23", "2021/22"
// after 2021); ref, when set, is a year the two digits follow.
func yearOf(s string, ref int) int {
	y, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	if len(s) == 2 {
		y += 2000
		if ref > 0 {
			y += ref/100*100 - 2000
			if y < ref {
				y += 100
			}
		}
	}
	return y
}

// asked is the period a question asks about: the latest year it names
// (a comparison "between FY2021 and FY2022" is reported by the later
// filing), with the quarter and date written with that year, and the kind
// of filing it names ("10-Q", "annual report").
type asked struct {
	fy      int
	quarter int
	date    time.Time
	kind    periodKind
}

func (a asked) empty() bool { return a.fy == 0 && a.kind == kindNone }

func (a asked) String() string {
	var parts []string
	if a.kind != kindNone {
		parts = append(parts, [...]string{"", "annual", "quarterly", "current"}[a.kind])
	}
	if a.quarter > 0 {
		parts = append(parts, fmt.Sprintf("Q%d", a.quarter))
	}
	if a.fy > 0 {
		parts = append(parts, fmt.Sprintf("FY%d", a.fy))
	}
	if !a.date.IsZero() {
		parts = append(parts, a.date.Format("2006-01-02"))
	}
	return strings.Join(parts, " ")
}

var (
	// A question's fiscal year: "FY2018", "FY 2021", "FY20", "FY'18",
	// "fiscal 2019", "fiscal year 2018", "the 2021 fiscal period".
	askFYRe = regexp.MustCompile(`(?i)\bFY\s*'?((?:19|20)\d{2}|\d{2})\b|\bfiscal\s+(?:year\s+)?((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\s+fiscal\b`)
	// A bare year; yearNumber tells a year from an amount around it.
	askYearRe = regexp.MustCompile(`\b(19|20)\d{2}\b`)
	// amountAfter: "2018 million", "2018%", "2018.5", "2,018" reads as a number.
	amountAfter = regexp.MustCompile(`(?i)^(?:[.,]\d|\s*(?:%|percent|million|billion|thousand|bn\b|mn\b|m\b|k\b|units?\b|shares?\b|employees\b|people\b|stores\b))`)
	// askFormRe names a kind of filing.
	askFormRe = regexp.MustCompile(`(?i)\b(10-?K|10-?Q|8-?K|20-?F|annual\s+report|quarterly\s+report)\b`)
)

// futureWords open what a question asks to be expected: a year after one
// is a forecast, which the filing of the year before states. Those ending
// in "*" match as prefixes.
var futureWords = []string{"expect*", "forecast*", "anticipat*", "guidance", "guide", "guides", "outlook",
	"projected", "projection", "projections", "will", "future"}

// futureAt is where the first future word of lower (a lower-cased
// question) starts, or len(lower).
func futureAt(lower string) int {
	at := len(lower)
	for _, w := range futureWords {
		prefix := strings.HasSuffix(w, "*")
		w = strings.TrimSuffix(w, "*")
		for from := 0; from < at; {
			i := strings.Index(lower[from:at], w)
			if i < 0 {
				break
			}
			i += from
			end := i + len(w)
			if (i == 0 || !isWordByte(lower[i-1])) && (prefix || end == len(lower) || !isWordByte(lower[end])) {
				at = i
				break
			}
			from = end
		}
	}
	return at
}

// isWordByte is an ASCII letter, digit or underscore, as \b sees words.
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// Every period a question writes holds digits, and its words reach at most
// windowBefore bytes before them ("second quarter of fiscal year 2023")
// and windowAfter after ("2023 second-quarter"): the regular expressions
// run on those windows only, not on the whole question.
const (
	windowBefore = 60
	windowAfter  = 24
)

// digitWindows are the merged windows around the question's digit runs,
// widened to word boundaries so \b reads them as in the whole text.
func digitWindows(q string) [][2]int {
	var out [][2]int
	for i := 0; i < len(q); {
		if q[i] < '0' || q[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		lo, hi := max(0, i-windowBefore), min(len(q), j+windowAfter)
		if n := len(out); n > 0 && lo <= out[n-1][1] {
			lo = out[n-1][0]
			out = out[:n-1]
		} else {
			for lo > 0 && isWordByte(q[lo-1]) {
				lo--
			}
			for lo < i && !utf8.RuneStart(q[lo]) {
				lo++
			}
		}
		for hi < len(q) && isWordByte(q[hi]) {
			hi++
		}
		for hi < len(q) && !utf8.RuneStart(q[hi]) {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		i = j
	}
	return out
}

// findAll is re's submatch indexes over the windows of q, as positions in q.
func findAll(re *regexp.Regexp, q string, wins [][2]int) [][]int {
	var out [][]int
	for _, w := range wins {
		for _, m := range re.FindAllStringSubmatchIndex(q[w[0]:w[1]], -1) {
			for k := range m {
				if m[k] >= 0 {
					m[k] += w[0]
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// mention is a year a question names, at a position.
type mention struct {
	pos, year, quarter int
	date               time.Time
}

// askedPeriod reads the period a question asks about. Years inside
// amounts ("$2018 million", "2,018") are not years. When a question names
// a forecast ("expected … in 2024"), the years after it are what is
// forecast; the period asked is the latest year before it, or, when only
// forecast years are named, the year before the first of them — the filing
// that states the forecast.
func askedPeriod(q string) asked {
	var a asked
	wins := digitWindows(q)
	lower := strings.ToLower(q)
	if len(wins) == 0 && !strings.Contains(lower, "report") {
		return a // neither a year nor a form named: the common case, kept cheap
	}
	var ms []mention
	taken := make([]bool, len(q)+1)
	take := func(a, b int) bool {
		for i := a; i < b; i++ {
			if taken[i] {
				return false
			}
		}
		for i := a; i < b; i++ {
			taken[i] = true
		}
		return true
	}
	for _, m := range findAll(dateRe, q, wins) {
		if t, ok := parseDate(q, m); ok && take(m[0], m[1]) {
			ms = append(ms, mention{pos: m[0], year: t.Year(), date: t})
		}
	}
	for _, m := range findAll(quarterRe, q, wins) {
		if y, qu, ok := firstQuarter(q[m[0]:m[1]]); ok && take(m[0], m[1]) {
			ms = append(ms, mention{pos: m[0], year: y, quarter: qu})
		}
	}
	for _, m := range findAll(askFYRe, q, wins) {
		var y int
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				y = yearOf(q[m[2*g]:m[2*g+1]], 0)
			}
		}
		if y > 0 && take(m[0], m[1]) {
			ms = append(ms, mention{pos: m[0], year: y})
		}
	}
	for _, m := range findAll(askYearRe, q, wins) {
		if yearNumber(q, m[0], m[1]) && take(m[0], m[1]) {
			y, _ := strconv.Atoi(q[m[0]:m[1]])
			ms = append(ms, mention{pos: m[0], year: y})
		}
	}
	forms := findAll(askFormRe, q, wins)
	if strings.Contains(lower, "report") {
		forms = findAll(askFormRe, q, [][2]int{{0, len(q)}})
	}
	if len(forms) > 0 {
		switch f := strings.ToUpper(q[forms[0][0]:forms[0][1]]); {
		case strings.HasPrefix(f, "10") && strings.HasSuffix(f, "Q"), strings.HasPrefix(f, "QUARTERLY"):
			a.kind = kindQuarter
		case strings.HasSuffix(f, "K") && strings.HasPrefix(f, "8"):
			a.kind = kindCurrent
		default:
			a.kind = kindAnnual
		}
	}
	future := len(q)
	if len(ms) > 0 {
		future = futureAt(lower)
	}
	var best, first *mention
	for i := range ms {
		m := &ms[i]
		if m.pos > future && m.date.IsZero() { // a date is a fact, not a forecast
			if first == nil || m.pos < first.pos {
				first = m
			}
			continue
		}
		if best == nil || m.year > best.year || m.year == best.year && (m.quarter > 0 && best.quarter == 0 || !m.date.IsZero() && best.date.IsZero()) {
			best = m
		}
	}
	switch {
	case best != nil:
		a.fy, a.quarter, a.date = best.year, best.quarter, best.date
	case first != nil:
		a.fy = first.year - 1
	}
	return a
}

// yearNumber reports whether q[i:j], four digits, reads as a year: not part
// of an amount ("$2018", "2,018", "2018.5", "2018 million", "2018%").
func yearNumber(q string, i, j int) bool {
	before := strings.TrimRight(q[:i], " ")
	for _, c := range []string{"$", "€", "£", "¥", "USD", "US$"} {
		if strings.HasSuffix(before, c) {
			return false
		}
	}
	if i > 1 && (q[i-1] == ',' || q[i-1] == '.') && q[i-2] >= '0' && q[i-2] <= '9' {
		return false
	}
	return !amountAfter.MatchString(q[j:min(len(q), j+16)]) // its longest word, not the rest of the text
}

// fit is how well a filing's period fits the period asked, in (0, 1]: the
// year first (a later filing still reports a year as its comparative, an
// earlier one may forecast it), then the kind of filing asked for; a date
// asked that is the day a period ended or an event was reported fits best.
func (a asked) fit(p period) float64 {
	if !a.date.IsZero() && !p.end.IsZero() && a.date.Equal(p.end) {
		return 1
	}
	y, alt := 1.0, false
	if a.fy > 0 {
		y, alt = yearFit(p, a.fy)
	}
	return y * kindFit(p, a, alt)
}

// yearFit is how well a filing of p reports fiscal year fy; alt is true
// when fy is the year after the calendar year a quarter ended in.
func yearFit(p period, fy int) (float64, bool) {
	if p.fy == 0 {
		return 0.5, false
	}
	d := p.fy - fy
	if p.altFY && d == -1 {
		return 1, true
	}
	switch {
	case d == 0:
		return 1, false
	case d == 1:
		return 0.6, false
	case d == 2 && p.kind == kindAnnual:
		return 0.4, false // a 10-K's income statement spans three years
	case d == -1:
		return 0.3, false
	}
	return 0.1, false
}

// kindFit is how well the kind of filing fits: the form the question
// names, else a quarter's filing for a quarter asked and an annual one for
// a year. A quarter's number is unknown when its fiscal year is the one
// after the calendar year it ended in (alt).
func kindFit(p period, a asked, alt bool) float64 {
	switch {
	case a.kind != kindNone && a.kind == p.kind:
		return 1
	case a.kind != kindNone:
		return 0.4
	case a.quarter > 0 && p.kind == kindQuarter:
		if alt || p.quarter == 0 || p.quarter == a.quarter {
			return 1
		}
		return 0.5
	case a.quarter > 0:
		return 0.5
	case p.kind == kindAnnual:
		return 1
	}
	// A quarter's or an event's filing, for a year asked: the annual
	// report is the year's own, a fourth quarter's release with the full
	// year included.
	return 0.7
}

// coverText is the text of a book's cover chunks with their headings — a
// cover's largest type ("FORM 8-K", its date) is often parsed as a heading —
// each heading once.
func coverText(cs []citebook.Chunk) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, c := range cs {
		for _, h := range c.HeadingPath {
			if !seen[h] {
				seen[h] = true
				b.WriteString(h)
				b.WriteString("\n")
			}
		}
		b.WriteString(c.Text)
		b.WriteString("\n")
	}
	return b.String()
}

package qa

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// BookChunks reads the chunks of a book version (index/metadb); routing
// takes a book's cover page from it. Optional: without it books are routed
// by their titles alone.
type BookChunks interface {
	ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error)
}

// BookScore is how well a book's metadata matches a question; the trace
// lists them best first.
type BookScore struct {
	BookID string  `json:"book_id"`
	Score  float64 `json:"score"`
	Routed bool    `json:"routed,omitempty"` // searched first
	// Period is the reporting period the book's cover states ("10-K
	// FY2018 2018-12-31") and PeriodFit how well it fits the period the
	// question asks about, relative to the best fit of the books its names
	// match (1: the best; the book's score was multiplied by it).
	Period    string  `json:"period,omitempty"`
	PeriodFit float64 `json:"period_fit,omitempty"`
}

// Routing constants: the books scoring at least routeShare of the best
// book are routed, but only when they are few (at most routeMax and a third
// of the scope): a question naming only a year or a common word names no
// book in particular.
const (
	routeShare = 0.6
	routeMax   = 4
	// coverChars bounds the cover text read per book.
	coverChars = 6000
	// titleWeight counts a title match above a match on the cover page,
	// whose boilerplate names many things.
	titleWeight = 2.0
)

// profile is what a book is recognised by: its title and its cover (the
// first page or two), as term sets, and what it defines. Cover and
// definitions keep the section (parent) they come from: a profile is cached
// for every reader of the book, and a reader denied a section must neither
// be routed by it nor see its definitions in the trace's expanded query.
type profile struct {
	title map[string]bool
	cover []sectionTerms
	// titlePages are the book's short first chunks (see bookNames).
	titlePages []sectionTerms
	defs       []sectionDef
	// period is the reporting period the cover states, read from every
	// section of the cover (periodParents): a reader denied one of them is
	// not routed by it.
	period        period
	periodParents []string
}

type sectionTerms struct {
	parent string
	terms  map[string]bool
}

type sectionDef struct {
	parent, short string
	def           definition
}

// covers reports whether the part of the cover f lets the reader see holds t.
func (pr *profile) covers(t string, deny map[string]bool) bool {
	for _, c := range pr.cover {
		if c.terms[t] && !deny[c.parent] {
			return true
		}
	}
	return false
}

// periodFor is the book's period as a reader denied deny sees it: none when
// any section it was read from is denied.
func (pr *profile) periodFor(deny map[string]bool) period {
	for _, p := range pr.periodParents {
		if deny[p] {
			return period{}
		}
	}
	return pr.period
}

func denied(f citebook.Filter) map[string]bool {
	if len(f.DenyParents) == 0 {
		return nil
	}
	m := make(map[string]bool, len(f.DenyParents))
	for _, p := range f.DenyParents {
		m[p] = true
	}
	return m
}

// profiles caches book profiles per served version.
type profiles struct {
	mu sync.Mutex
	m  map[citebook.BookScope]*profile
}

// profile returns (and caches) the profile of a book version.
func (p *Pipeline) profile(ctx context.Context, b citebook.BookScope) (*profile, error) {
	p.books.mu.Lock()
	pr, ok := p.books.m[b]
	p.books.mu.Unlock()
	if ok {
		return pr, nil
	}
	book, err := p.deps.Library.Book(ctx, b.BookID)
	if err != nil {
		return nil, err
	}
	pr = &profile{title: analysis.TermSet(analysis.Terms(book.Title))}
	if p.deps.Books != nil {
		cs, err := p.deps.Books.ChunksAt(ctx, b.BookID, b.Version)
		if err != nil {
			return nil, err
		}
		cv := cover(cs) // sorts cs by ordinal
		pr.titlePages = titlePages(cs)
		for _, c := range cv {
			pr.cover = append(pr.cover, sectionTerms{parent: c.ParentID, terms: analysis.TermSet(analysis.Terms(c.Text))})
		}
		if per, ok := coverPeriod(coverText(cv)); ok {
			pr.period = per
			for _, c := range cv {
				if !slices.Contains(pr.periodParents, c.ParentID) {
					pr.periodParents = append(pr.periodParents, c.ParentID)
				}
			}
		}
		for _, c := range cs {
			defs := definitions{}
			define(c.Text, defs)
			for short, d := range defs {
				pr.defs = append(pr.defs, sectionDef{parent: c.ParentID, short: short, def: d})
			}
		}
	}
	p.books.mu.Lock()
	if p.books.m == nil {
		p.books.m = map[citebook.BookScope]*profile{}
	}
	p.books.m[b] = pr
	p.books.mu.Unlock()
	return pr, nil
}

// cover is the chunks of a book's first page (its first two chunks for
// books without pages), where a filing states its company, form and
// fiscal year; the second page is often a table of contents, whose
// headings name what every book of the kind holds. A book without pages
// that is no longer than a cover (an article, a note: coverChars) is its
// own cover: cut at two chunks, a CMRC passage's third paragraph named
// nothing its question could be routed by (shared-index hit@1 0.978 with
// two chunks, 0.987 whole).
func cover(cs []citebook.Chunk) []citebook.Chunk {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Ordinal < cs[j].Ordinal })
	first, size := 0, 0
	for _, c := range cs {
		if c.PageStart > 0 && (first == 0 || c.PageStart < first) {
			first = c.PageStart
		}
		size += len(c.Text)
	}
	chunks := 2 // of a book without pages
	if size <= coverChars {
		chunks = len(cs)
	}
	var out []citebook.Chunk
	n := 0
	for i, c := range cs {
		if first > 0 && c.PageStart > first || first == 0 && i >= chunks || n > coverChars {
			break
		}
		out = append(out, c)
		n += len(c.Text)
	}
	return out
}

// route scores every book of the filter against the question's terms,
// weighting each term by how few books it names (BM25's idf over books),
// and marks the books to search first. When the question asks about a
// period ("FY2018", "Q2 of FY2024", "as of August 30, 2023") and books its
// names match state theirs on the cover, each such book's score is
// multiplied by how well its period fits, relative to the best fit among
// them: the 10-K of the year asked ranks above the same company's other
// filings. It returns nil when there is no choice to make, and else the
// period asked (for the trace).
func (p *Pipeline) route(ctx context.Context, question string, f citebook.Filter) ([]BookScore, string, error) {
	if len(f.Books) < 3 {
		return nil, "", nil
	}
	a := askedPeriod(question)
	terms := routeTerms(question)
	profs := make([]*profile, len(f.Books))
	for i, b := range f.Books {
		pr, err := p.profile(ctx, b)
		if err != nil {
			return nil, "", err
		}
		profs[i] = pr
	}
	deny := denied(f)
	n := float64(len(f.Books))
	out := make([]BookScore, len(f.Books))
	pers := make([]period, len(f.Books))
	for i, b := range f.Books {
		out[i].BookID = b.BookID
		pers[i] = profs[i].periodFor(deny)
		out[i].Period = pers[i].String()
	}
	for _, t := range terms {
		df := 0.0
		for _, pr := range profs {
			if pr.title[t] || pr.covers(t, deny) {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, pr := range profs {
			switch {
			case pr.title[t]:
				out[i].Score += titleWeight * idf
			case pr.covers(t, deny):
				out[i].Score += idf
			}
		}
	}
	byPeriod(out, pers, a)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].BookID < out[j].BookID
	})
	if out[0].Score <= 0 {
		return out, a.String(), nil
	}
	routed := 0
	for routed < len(out) && out[routed].Score >= routeShare*out[0].Score {
		routed++
	}
	if routed > routeMax || float64(routed) > n/3 {
		return out, a.String(), nil // the question names nothing that tells a few books apart
	}
	for i := range out[:routed] {
		out[i].Routed = true
	}
	return out, a.String(), nil
}

// byPeriod multiplies the score of each book with a period by its fit to
// the period asked, relative to the best fit among the books the names
// match (those scoring at least routeShare of the best): only filings that
// names cannot tell apart are told apart by period. Books without a period
// keep their scores, and so does every book when the question asks about no
// period or none of the matched books states one.
func byPeriod(out []BookScore, pers []period, a asked) {
	if a.empty() {
		return
	}
	top := 0.0
	for _, s := range out {
		top = max(top, s.Score)
	}
	if top <= 0 {
		return
	}
	best := 0.0
	for i, s := range out {
		if s.Score >= routeShare*top && pers[i].kind != kindNone {
			best = max(best, a.fit(pers[i]))
		}
	}
	if best == 0 {
		return
	}
	for i := range out {
		if pers[i].kind == kindNone || out[i].Score <= 0 {
			continue
		}
		fit := min(1, a.fit(pers[i])/best)
		out[i].PeriodFit = fit
		out[i].Score *= fit
	}
}

// routeTerms are the terms of the question's names — words written with a
// capital or a digit ("Best Buy", "FY2023", "3M"), and text in scripts
// without case — plus each pair of adjacent name words written as one:
// titles and file names join a name's words ("BESTBUY_2017_10K",
// "ActivisionBlizzard") that questions spell apart. Lower-case words are
// left out: a cover page's table of contents names "cash flows" and
// "operations" in every filing, and summed over a question's ordinary
// words they outscored the company it names.
func routeTerms(question string) []string {
	var names []string
	var words []string // adjacent name words, "" between runs
	for _, w := range strings.FieldsFunc(question, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '&' && r != '\''
	}) {
		if strings.ContainsFunc(w, func(r rune) bool { return unicode.IsUpper(r) || unicode.IsDigit(r) || analysis.IsCJK(r) }) {
			names = append(names, w)
			words = append(words, w)
		} else {
			words = append(words, "")
		}
	}
	var terms []string
	seen := map[string]bool{}
	for _, t := range analysis.QueryTerms(strings.Join(names, " ")) {
		if !analysis.IsStopword(t) { // "What", "Is" open a question
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for i := 1; i < len(words); i++ {
		if words[i-1] == "" || words[i] == "" {
			continue
		}
		ta, tb := analysis.Terms(words[i-1]), analysis.Terms(words[i])
		if len(ta) == 0 || len(tb) == 0 {
			continue
		}
		a, b := ta[len(ta)-1], tb[0]
		if analysis.IsStopword(a) || analysis.IsStopword(b) || !isWord(a) || !isWord(b) {
			continue
		}
		if j := a + b; !seen[j] {
			seen[j] = true
			terms = append(terms, j)
		}
	}
	return terms
}

// isWord reports an alphabetic term of at least two letters.
func isWord(t string) bool {
	if len(t) < 2 {
		return false
	}
	for _, r := range t {
		if !unicode.IsLetter(r) || analysis.IsCJK(r) {
			return false
		}
	}
	return true
}

// routedFilter narrows f to the routed books.
func routedFilter(f citebook.Filter, scores []BookScore) (citebook.Filter, bool) {
	var ids []string
	for _, s := range scores {
		if s.Routed {
			ids = append(ids, s.BookID)
		}
	}
	if len(ids) == 0 {
		return f, false
	}
	out := citebook.Filter{Tenant: f.Tenant, DenyParents: f.DenyParents}
	for _, b := range f.Books {
		for _, id := range ids {
			if b.BookID == id {
				out.Books = append(out.Books, b)
			}
		}
	}
	return out, true
}

// merge combines the candidates of the whole library with those of the
// routed books: a chunk found by both keeps its better score, and every
// chunk gains bonus times its book's share of the best book score.
func merge(all, routed []*candidate, scores []BookScore, bonus float64) []*candidate {
	share := map[string]float64{}
	if len(scores) > 0 && scores[0].Score > 0 {
		for _, s := range scores {
			if s.Routed {
				share[s.BookID] = s.Score / scores[0].Score
			}
		}
	}
	byID := map[string]*candidate{}
	var out []*candidate
	for _, c := range routed {
		c.seenVec, c.seenLex = 0, 0
		byID[c.chunk.ID] = c
		out = append(out, c)
	}
	for _, c := range all {
		x, ok := byID[c.chunk.ID]
		switch {
		case !ok:
			byID[c.chunk.ID] = c
			out = append(out, c)
		case c.fused > x.fused:
			*x = *c
		default:
			x.seenVec, x.seenLex = c.seenVec, c.seenLex
		}
	}
	for _, c := range out {
		c.fused += bonus * share[c.chunk.BookID]
	}
	sortCandidates(out)
	return out
}

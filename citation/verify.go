// Package citation checks an answerer's citations against the text it was
// given and maps each surviving quote to where a reader finds it: book,
// heading path, the page the quote itself is printed on, and its offsets in
// the chunk. Nothing the answerer says reaches a reader without passing here.
package citation

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// RefusalMessage is the answer when no statement could be verified; the
// wording is part of the public contract readers and evaluators look for.
const RefusalMessage = "I cannot confirm this from the book."

// MinQuoteWeight is how much text a quote must keep after normalization, so
// a two-word quote that would match almost any chunk cannot prop up a
// statement. A Han, Kana or Hangul character weighs 3, anything else 1.
const MinQuoteWeight = 8

// Claim is one citation as the answerer made it: a chunk ID and the words it
// says that chunk contains.
type Claim struct {
	ChunkID string `json:"chunk_id"`
	Quote   string `json:"quote"`
}

// Statement is one sentence of an answer with the citations meant to
// support it.
type Statement struct {
	Text      string  `json:"text"`
	Citations []Claim `json:"citations"`
}

// Reason says why a citation was rejected.
type Reason string

// Rejection reasons.
const (
	UnknownChunk  Reason = "unknown_chunk"   // the ID names no chunk the principal may read
	NotInContext  Reason = "not_in_context"  // a real chunk, but the answerer was not shown it
	QuoteNotFound Reason = "quote_not_found" // the quote is not in the chunk
	QuoteTooShort Reason = "quote_too_short" // too little text to prove anything
)

// Rejection is a citation that failed verification.
type Rejection struct {
	ChunkID string `json:"chunk_id"`
	Quote   string `json:"quote"`
	Reason  Reason `json:"reason"`
	// Share is, for a quote not found, the share of its content tokens
	// the best alignment with the chunk found in order (MinSnapShare
	// would have snapped it).
	Share float64 `json:"share,omitempty"`
}

// Result is a verified answer: the text with [n] markers, the citations the
// markers refer to, and an account of what was thrown away.
type Result struct {
	Answer      string
	Refused     bool
	Citations   []citebook.Citation
	Statements  []string // the kept statements, each with its markers
	Rejected    []Rejection
	Total       int // statements the answerer made
	Unsupported int // statements dropped for lack of a verified, supporting citation
	// NotSupported counts the statements among Unsupported whose quotes
	// were real but did not support them.
	NotSupported int
	// Snapped are the quotes not found verbatim that were replaced by the
	// chunk's real text (see snap); Kept marks those whose statement
	// survived verification.
	Snapped []Snapped
	// Kept are the surviving statements with the citations backing them,
	// for checks on the answer as a whole (does it still answer?).
	Kept []KeptStatement
}

// KeptStatement is a verified statement and its citations.
type KeptStatement struct {
	Text   string
	Quotes []citebook.Citation
}

// markers matches [n] markers an answerer may have written itself; numbers
// are assigned here, after verification, so they are stripped
// (stripMarkers).
var markers = regexp.MustCompile(`\s*\[\d+(?:\s*,\s*\d+)*\]`)

// stripMarkers takes the answerer's own [n] markers out of a statement,
// but not an index glued to a word that the statement's quotes print the
// same way: R-intro's "e[3] <- 17" copied into an answer is the book's
// code, not a marker ("e <- 17" would be a different program).
func stripMarkers(text string, claims []Claim) string {
	var b strings.Builder
	last := 0
	for _, m := range markers.FindAllStringIndex(text, -1) {
		if a := m[0]; a > 0 && text[a] == '[' && isWordByte(text[a-1]) {
			w := a - 1
			for w > 0 && isWordByte(text[w-1]) {
				w--
			}
			code := text[w:m[1]]
			if slices.ContainsFunc(claims, func(cl Claim) bool { return strings.Contains(cl.Quote, code) }) {
				continue
			}
		}
		b.WriteString(text[last:m[0]])
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c == ')' || c == ']' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// maxRejectedQuote bounds quotes copied into rejections, which end up in
// traces.
const maxRejectedQuote = 300

// Verify keeps the statements that have at least one verified citation and
// drops a statement whose verified quotes do not support it (sc.Content nil
// skips that check): a real quote from a chunk the answerer saw is not
// enough when it says something else. context holds the chunks the answerer
// was given, by ID; known reports whether an ID outside the context names a
// chunk the principal may read (nil: none does), which only refines the
// rejection reason; titles maps book IDs to titles. A dropped statement's
// citations are rejected as Unsupported and never numbered, so nothing of
// it reaches the reader. When no statement survives the result is a refusal.
func Verify(statements []Statement, context map[string]citebook.Chunk, known func(id string) bool, titles map[string]string, sc SupportCheck) Result {
	res := Result{Total: len(statements), Citations: []citebook.Citation{}}
	// Quotes of one chunk starting at the same character are one passage,
	// whether or not the answerer kept the closing full stop.
	type key struct {
		id    string
		start int
	}
	numbers := map[key]int{}
	for _, st := range statements {
		text := strings.TrimSpace(stripMarkers(st.Text, st.Citations))
		var (
			found  []citebook.Citation
			claims []Claim
			snaps  []Snapped
		)
		for _, cl := range st.Citations {
			c, ok := context[cl.ChunkID]
			if !ok {
				reason := UnknownChunk
				if known != nil && known(cl.ChunkID) {
					reason = NotInContext
				}
				res.Rejected = append(res.Rejected, reject(cl, reason))
				continue
			}
			cit, reason := Locate(c, cl.Quote)
			if reason == QuoteNotFound {
				// Near-verbatim: the chunk's real text stands in for the
				// model's words, or the quote stays rejected.
				sc, sn, ok := locateSnapped(c, cl.Quote)
				if !ok {
					// Or the quote is word for word in another chunk the
					// answerer was shown: cite that one.
					moved, inContext := elsewhere(context, cl)
					if !inContext {
						rj := reject(cl, reason)
						rj.Share = sn.Share
						res.Rejected = append(res.Rejected, rj)
						continue
					}
					sc, sn = moved, Snapped{ChunkID: moved.ChunkID, Quote: shorten(cl.Quote), Real: moved.Quote, Share: 1,
						Start: moved.CharStart, End: moved.CharEnd, From: cl.ChunkID}
					cl.ChunkID = moved.ChunkID
				}
				cit, snaps = sc, append(snaps, sn)
			} else if reason != "" {
				res.Rejected = append(res.Rejected, reject(cl, reason))
				continue
			}
			found = append(found, cit)
			claims = append(claims, cl)
		}
		res.Snapped = append(res.Snapped, snaps...)
		if len(found) == 0 || text == "" {
			res.Unsupported++
			continue
		}
		if sc.Content != nil {
			quotes := make([]string, len(found))
			for i, c := range found {
				quotes[i] = c.Quote
			}
			if ok, _ := sc.Supported(text, quotes); !ok {
				for _, cl := range claims {
					res.Rejected = append(res.Rejected, reject(cl, Unsupported))
				}
				res.Unsupported++
				res.NotSupported++
				continue
			}
		}
		var ns []int
		for _, cit := range found {
			k := key{cit.ChunkID, cit.CharStart}
			n, seen := numbers[k]
			if !seen {
				n = len(res.Citations) + 1
				numbers[k] = n
				cit.N = n
				cit.BookTitle = titles[context[cit.ChunkID].BookID]
				res.Citations = append(res.Citations, cit)
			}
			if !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
		var b strings.Builder
		b.WriteString(text)
		for _, n := range ns {
			b.WriteString(" [" + strconv.Itoa(n) + "]")
		}
		for i := len(res.Snapped) - len(snaps); i < len(res.Snapped); i++ {
			res.Snapped[i].Kept = true
		}
		res.Statements = append(res.Statements, b.String())
		res.Kept = append(res.Kept, KeptStatement{Text: text, Quotes: found})
	}
	if len(res.Statements) == 0 {
		res.Refused = true
		res.Answer = RefusalMessage
		res.Citations = []citebook.Citation{}
		return res
	}
	res.Answer = strings.Join(res.Statements, " ")
	return res
}

// elsewhere finds a quote that is not in its cited chunk word for word in
// another chunk of the context (the first by ID, so the choice does not
// depend on map order). Only the context counts: those chunks passed the
// access filter and were shown to the answerer, so citing one of them
// instead shows the reader nothing new, and the book's own text.
func elsewhere(context map[string]citebook.Chunk, cl Claim) (citebook.Citation, bool) {
	for _, id := range slices.Sorted(maps.Keys(context)) {
		if id == cl.ChunkID {
			continue
		}
		if cit, reason := Locate(context[id], cl.Quote); reason == "" {
			return cit, true
		}
	}
	return citebook.Citation{}, false
}

// reject records a failed citation. The quote is kept only when it was
// checked against a chunk the principal may read; a quote attributed to an
// unknown or withheld chunk is dropped, so a trace never repeats text whose
// origin cannot be vouched for.
func reject(cl Claim, reason Reason) Rejection {
	q := cl.Quote
	if reason == UnknownChunk || reason == NotInContext {
		q = ""
	}
	return Rejection{ChunkID: cl.ChunkID, Quote: shorten(q), Reason: reason}
}

// shorten bounds text copied into traces.
func shorten(q string) string {
	if len(q) > maxRejectedQuote {
		cut := maxRejectedQuote
		for cut > 0 && !utf8.RuneStart(q[cut]) {
			cut--
		}
		q = q[:cut] + "…"
	}
	return q
}

// ellipsis splits a quote the answerer shortened; every part must appear in
// the chunk, in order.
var ellipsis = regexp.MustCompile(`\.\s*\.\s*\.|…+|\[\s*…\s*\]|\[\s*\.\.\.\s*\]`)

// Locate finds quote inside chunk c and returns the citation it supports,
// with offsets into c.Text and the page that holds most of the quote's
// letters (a sentence that starts on the last line of a page is read, and
// found, on the next); the reason is empty when the quote was found.
func Locate(c citebook.Chunk, quote string) (citebook.Citation, Reason) {
	hay := normalize(c.Text)
	parts := ellipsis.Split(quote, -1)
	weight, from := 0, 0
	var spans [][2]int
	for _, part := range parts {
		needle := normalize(part).runes
		if len(needle) == 0 {
			continue
		}
		i := hay.index(needle, from)
		if i < 0 {
			return citebook.Citation{}, QuoteNotFound
		}
		weight += weightOf(needle)
		from = i + len(needle)
		spans = append(spans, [2]int{hay.start[i], hay.end[from-1]})
	}
	if len(spans) == 0 || weight < MinQuoteWeight {
		return citebook.Citation{}, QuoteTooShort
	}
	return citationAt(c, spans, quote), ""
}

// citationAt is the citation of spans of c's text (byte offsets, in order):
// the spans' text joined by " … ", the page holding most of it, and the
// closing punctuation the answerer's quote ended with.
func citationAt(c citebook.Chunk, spans [][2]int, quote string) citebook.Citation {
	last := &spans[len(spans)-1]
	last[1] = extendClosing(c.Text, last[1], quote)
	spans[0][0] = extendOpening(c.Text, spans[0][0], quote)
	texts := make([]string, len(spans))
	for i, s := range spans {
		texts[i] = c.Text[s[0]:s[1]]
	}
	start, end := spans[0][0], last[1]
	page, printed, covered := pageOfMost(c.Pages, c.Text, spans)
	if page == 0 && len(c.Pages) == 0 {
		page, printed = c.PageStart, c.PrintedStart
	}
	cit := citebook.Citation{
		ChunkID:     c.ID,
		BookID:      c.BookID,
		HeadingPath: c.HeadingPath,
		Page:        page,
		PrintedPage: printed,
		Quote:       strings.Join(texts, " … "),
		CharStart:   start,
		CharEnd:     end,
	}
	if len(covered) > 1 {
		first, last := covered[0], covered[len(covered)-1]
		for _, p := range covered {
			cit.Pages = append(cit.Pages, p.Page)
		}
		cit.PrintedPages = pageRange(first.Printed, last.Printed, first.Page, last.Page)
	}
	return cit
}

// pageRange labels the pages a quote runs over as a reader looks them up:
// by their printed numbers where the book prints them ("120–121", "xii–1"),
// else by the physical ones.
func pageRange(firstPrinted, lastPrinted string, first, last int) string {
	if firstPrinted == "" || lastPrinted == "" {
		firstPrinted, lastPrinted = strconv.Itoa(first), strconv.Itoa(last)
	}
	return firstPrinted + "–" + lastPrinted
}

// locateSnapped is Locate for a quote not found verbatim: the chunk's own
// text it aligns with (see snap), or ok false with the share of the quote's
// content tokens the best alignment found.
func locateSnapped(c citebook.Chunk, quote string) (citebook.Citation, Snapped, bool) {
	r, ok := snap(c.Text, quote)
	sn := Snapped{ChunkID: c.ID, Quote: shorten(quote), Share: r.share}
	if !ok {
		return citebook.Citation{}, sn, false
	}
	weight := 0
	for _, sp := range r.spans {
		weight += weightOf(normalize(c.Text[sp[0]:sp[1]]).runes)
	}
	if weight < MinQuoteWeight {
		return citebook.Citation{}, sn, false
	}
	cit := citationAt(c, r.spans, quote)
	sn.Real, sn.Start, sn.End = shorten(cit.Quote), cit.CharStart, cit.CharEnd
	return cit, sn, true
}

// extendClosing takes in the punctuation mark that ends the quoted sentence
// in the book when the answerer's quote ended with one too, so the quote a
// reader sees is the sentence as printed.
func extendClosing(text string, end int, quote string) int {
	q := strings.TrimSpace(quote)
	qr, _ := utf8.DecodeLastRuneInString(q)
	if q == "" || !unicode.IsPunct(qr) || end >= len(text) {
		return end
	}
	r, size := utf8.DecodeRuneInString(text[end:])
	if unicode.IsPunct(r) && !isQuoteMark(r) {
		return end + size
	}
	return end
}

// extendOpening takes in what the quote opens with before its first
// letter or digit — the backslash of a LaTeX command, an opening bracket —
// when the book has the same characters right before the match, so a quote
// of "\tableofcontents …" is shown with its backslash.
func extendOpening(text string, start int, quote string) int {
	q := strings.TrimSpace(quote)
	i := strings.IndexFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
	if i <= 0 || !strings.HasSuffix(text[:start], q[:i]) {
		return start
	}
	return start - i
}

// pageOfMost returns the page (and printed label) holding the most of the
// quoted text's letters and digits, weighed as weightOf does (of equal
// shares the earlier page wins), and the pages from the first to the last
// that hold any of them.
func pageOfMost(pages []citebook.PageSpan, text string, spans [][2]int) (int, string, []citebook.PageSpan) {
	if len(pages) < 2 {
		p, printed := citebook.PageAt(pages, spans[0][0])
		return p, printed, nil
	}
	weight := make([]int, len(pages))
	for _, sp := range spans {
		p := 0
		for p+1 < len(pages) && pages[p+1].Offset <= sp[0] {
			p++
		}
		for off, r := range text[sp[0]:sp[1]] {
			for p+1 < len(pages) && pages[p+1].Offset <= sp[0]+off {
				p++
			}
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				weight[p] += weightOf([]rune{r})
			}
		}
	}
	best, first, last := -1, -1, -1
	for i, w := range weight {
		if w > 0 && (best < 0 || w > weight[best]) {
			best = i
		}
		if w > 0 {
			last = i
			if first < 0 {
				first = i
			}
		}
	}
	if best < 0 {
		p, printed := citebook.PageAt(pages, spans[0][0])
		return p, printed, nil
	}
	return pages[best].Page, pages[best].Printed, pages[first : last+1]
}

func weightOf(rs []rune) int {
	w := 0
	for _, r := range rs {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			w += 3
		} else {
			w++
		}
	}
	return w
}

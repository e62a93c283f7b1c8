package citation

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// Snapping. A small model quotes near-verbatim: it changes case, drops or
// inserts a word, shortens with an ellipsis, re-types quotes and hyphens,
// or stitches one quote from two sentences. Such a quote is not in the
// book as written, so it cannot be shown; but the passage it copies is. snap
// aligns the quote with the text of the chunk it cites and, when the match
// is strong, returns the chunk's own spans, which Verify shows instead of
// the model's words. The reader only ever sees text the book holds, and the
// support check then runs on that real text.
//
// Invariant (FuzzSnap): every span snap returns lies inside the text it was
// given, on rune boundaries, in order and without overlap; snap never looks
// at any other text, so a quote cannot be snapped to another chunk.
//
// Why not a library: Levenshtein and go-edlib measure the distance between
// two whole strings (no span of the longer one, no offsets); go-diff's
// fuzzy Match is Bitap, limited to 32-character patterns; go-difflib's
// Ratcliff/Obershelp blocks take the longest common run anywhere in the
// chunk, with no cost for the words between runs, so a quote's pieces
// scatter over unrelated sentences. A fitting alignment with affine gaps
// (Gotoh) over word tokens is what a quote needs: the whole quote against
// any span of the chunk, a skipped run of the book's words cheap once
// opened (an ellipsis, a stitch), a changed or inserted word expensive.

// MinSnapShare is the share of a quote's content tokens that must be found,
// in order, in the span it snaps to. Below it the quote stays rejected.
const MinSnapShare = 0.8

// maxSnapTokens bounds the quote and chunk lengths the aligner takes on
// (its cost is their product); a longer quote is not a quote.
const (
	maxSnapQuote = 200
	maxSnapChunk = 5000
)

// maxInnerGap is the number of the book's words a shown span may skip
// silently; a longer skip is shown as " … " between two spans.
const maxInnerGap = 4

// Alignment scores: a matched token earns, a changed or inserted one costs,
// and a run of the book's words the quote leaves out costs once to open
// and little to extend.
const (
	scoreMatch   = 2
	scoreChange  = -1.5
	scoreInsert  = -1
	scoreGapOpen = -1.5
	scoreGapStep = -0.1
)

// Snapped records a quote replaced by the chunk's real text.
type Snapped struct {
	ChunkID string  `json:"chunk_id"`
	Quote   string  `json:"quote"` // the model's words (shortened)
	Real    string  `json:"real"`  // the book's text shown instead
	Share   float64 `json:"share"` // content tokens of the quote found in order
	Start   int     `json:"start"` // offsets of the shown text in the chunk
	End     int     `json:"end"`
	Kept    bool    `json:"kept"` // its statement survived verification
	// From is the chunk the answerer cited when its quote is word for word
	// in another chunk of its context (ChunkID) instead: small models copy
	// a real sentence of one passage under the other passage's ID.
	From string `json:"from,omitempty"`
}

type token struct {
	text       string
	start, end int // byte offsets in the original text
	content    bool
	digits     bool
}

// tokenize splits text into lower-cased, NFKC-folded word tokens (runs of
// letters and digits; each CJK character on its own) with their offsets.
func tokenize(s string) []token {
	var out []token
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		out = append(out, newToken(b.String(), start, end))
		b.Reset()
		start = -1
	}
	for off := 0; off < len(s); {
		r, size := utf8.DecodeRuneInString(s[off:])
		if isQuoteMark(r) {
			// fold drops these; here they separate words, as ' does
			flush(off)
			off += size
			continue
		}
		for _, f := range fold(r) {
			switch {
			case analysis.IsCJK(f):
				flush(off)
				out = append(out, newToken(string(f), off, off+size))
			case unicode.IsLetter(f) || unicode.IsDigit(f):
				if start < 0 {
					start = off
				}
				b.WriteRune(unicode.ToLower(f))
			case unicode.Is(unicode.Mn, f):
				// a combining mark belongs to its letter
			default:
				flush(off)
			}
		}
		off += size
	}
	flush(len(s))
	return out
}

func newToken(t string, start, end int) token {
	dig := true
	for _, r := range t {
		if !unicode.IsDigit(r) {
			dig = false
		}
	}
	cjk := false
	if r, _ := utf8.DecodeRuneInString(t); analysis.IsCJK(r) {
		cjk = true
	}
	content := !analysis.IsStopword(t) && (dig || cjk || utf8.RuneCountInString(t) > 1)
	return token{text: t, start: start, end: end, content: content, digits: dig}
}

// snapResult is what the aligner found: the spans of the chunk's text (byte
// offsets) and the share of the quote's content tokens they match.
type snapResult struct {
	spans [][2]int
	share float64
}

// alignment operations, for the traceback.
const (
	opNone   byte = iota
	opDiag        // one quote token against one book token (match or change)
	opInsert      // a quote token the book does not have
	opGap         // end of a run of book tokens the quote leaves out
	opMerge       // one quote token spelled as two book tokens ("multiline" / "multi-\nline", "1577" / "1,577")
	opSplit       // two quote tokens spelled as one book token
)

// snap aligns quote with text (see the package's note on snapping) and
// returns the spans of text it matches, or ok false when the match is weak:
// under MinSnapShare of the quote's content tokens in order, or a number
// or name of the quote missing from the spans.
func snap(text, quote string) (snapResult, bool) {
	// An ellipsis in the quote says where the book's words were left
	// out: a gap opens there for free, so the alignment puts it there.
	var q []token
	var ellipsisBefore []bool
	for k, part := range ellipsis.Split(quote, -1) {
		for n, tk := range tokenize(part) {
			q = append(q, tk)
			ellipsisBefore = append(ellipsisBefore, k > 0 && n == 0)
		}
	}
	t := tokenize(text)
	qContent := 0
	for _, tk := range q {
		if tk.content {
			qContent++
		}
	}
	if qContent == 0 || len(q) > maxSnapQuote || len(t) == 0 || len(t) > maxSnapChunk {
		return snapResult{}, false
	}
	m, n := len(q), len(t)
	w := n + 1
	// H: best score of the quote's first i tokens against book tokens
	// ending at j (free start: H[0][j] = 0); E: the same, ending inside a
	// run of skipped book tokens.
	H := make([]float32, (m+1)*w)
	E := make([]float32, (m+1)*w)
	opH := make([]byte, (m+1)*w)
	opE := make([]byte, (m+1)*w) // 1: the gap was opened here, 2: extended
	const negInf = float32(-1e30)
	for j := 0; j <= n; j++ {
		E[j] = negInf
	}
	for i := 1; i <= m; i++ {
		H[i*w] = H[(i-1)*w] + scoreInsert
		opH[i*w] = opInsert
		E[i*w] = negInf
		gapOpen := float32(scoreGapOpen)
		if i < m && ellipsisBefore[i] {
			gapOpen = scoreGapStep
		}
		for j := 1; j <= n; j++ {
			// gap: book token j-1 left out
			open, ext := H[i*w+j-1]+gapOpen, E[i*w+j-1]+scoreGapStep
			if open >= ext {
				E[i*w+j], opE[i*w+j] = open, 1
			} else {
				E[i*w+j], opE[i*w+j] = ext, 2
			}
			s := scoreChange
			if q[i-1].text == t[j-1].text {
				s = scoreMatch
			}
			best, op := H[(i-1)*w+j-1]+float32(s), opDiag
			if v := H[(i-1)*w+j] + scoreInsert; v > best {
				best, op = v, opInsert
			}
			if v := E[i*w+j]; v > best {
				best, op = v, opGap
			}
			if j >= 2 && q[i-1].text == t[j-2].text+t[j-1].text {
				if v := H[(i-1)*w+j-2] + scoreMatch; v > best {
					best, op = v, opMerge
				}
			}
			if i >= 2 && q[i-2].text+q[i-1].text == t[j-1].text {
				if v := H[(i-2)*w+j-1] + 2*scoreMatch; v > best {
					best, op = v, opSplit
				}
			}
			H[i*w+j], opH[i*w+j] = best, op
		}
	}
	end := 1
	for j := 1; j <= n; j++ {
		if H[m*w+j] > H[m*w+end] {
			end = j
		}
	}
	// Traceback: the book tokens matched, and which quote tokens found
	// their match.
	// Traceback: each matched book token with the quote tokens it matched
	// (none for the second half of a merge), book order descending.
	type pair struct {
		book  int
		quote []int
	}
	var matched []pair
	i, j, inGap := m, end, false
	for i > 0 && j > 0 {
		if inGap {
			if opE[i*w+j] == 1 {
				inGap = false
			}
			j--
			continue
		}
		switch opH[i*w+j] {
		case opDiag:
			if q[i-1].text == t[j-1].text {
				matched = append(matched, pair{j - 1, []int{i - 1}})
			}
			i, j = i-1, j-1
		case opInsert:
			i--
		case opGap:
			inGap = true
		case opMerge:
			matched = append(matched, pair{j - 1, []int{i - 1}}, pair{j - 2, nil})
			i, j = i-1, j-2
		case opSplit:
			matched = append(matched, pair{j - 1, []int{i - 1, i - 2}})
			i, j = i-2, j-1
		default:
			i = 0
		}
	}
	// Pieces: runs of matched book tokens, split where the quote left out
	// more than maxInnerGap of the book's words.
	type piece struct {
		span    [2]int
		content int // quote content tokens matched in it
		weight  int // their weight (weightOf)
	}
	var pieces []piece
	for k := len(matched) - 1; k >= 0; k-- {
		tk := t[matched[k].book]
		if len(pieces) > 0 && matched[k].book-matched[k+1].book-1 <= maxInnerGap {
			pieces[len(pieces)-1].span[1] = tk.end
		} else {
			pieces = append(pieces, piece{span: [2]int{tk.start, tk.end}})
		}
		pc := &pieces[len(pieces)-1]
		for _, qi := range matched[k].quote {
			if q[qi].content {
				pc.content++
				pc.weight += weightOf([]rune(q[qi].text))
			}
		}
	}
	// A piece cut off from the rest must stand on its own: two content
	// words and a quote's minimum weight. A stray word or two matched far
	// away ("魔法" after the skipped "而并非") would read as the book saying
	// what it does not; such a piece is dropped and the quote must pass
	// without it.
	var spans [][2]int
	got := 0
	for _, pc := range pieces {
		if len(pieces) == 1 || (pc.content >= 2 && pc.weight >= MinQuoteWeight) {
			spans = append(spans, pc.span)
			got += pc.content
		}
	}
	share := float64(got) / float64(qContent)
	if share < MinSnapShare || len(spans) == 0 {
		return snapResult{share: share}, false
	}
	var shown strings.Builder
	for _, sp := range spans {
		shown.WriteString(text[sp[0]:sp[1]])
		shown.WriteString("\n")
	}
	if !holdsFacts(quote, shown.String()) {
		return snapResult{share: share}, false
	}
	return snapResult{spans: spans, share: share}, true
}

// texCommand matches a LaTeX command (\linespread): an identifier, though
// written in lower case.
var texCommand = regexp.MustCompile(`\\([A-Za-z@]+)`)

// holdsFacts reports whether the real text holds every number and every
// name or identifier (a LaTeX command too) of the quote: a quote that changed a figure or a name
// is a different claim, however close its words.
func holdsFacts(quote, real string) bool {
	nums := numberSet(real)
	for _, n := range numbersOf(quote) {
		if !nums[n] {
			return false
		}
	}
	words := map[string]bool{}
	for _, tk := range tokenize(real) {
		words[tk.text] = true
	}
	names := namesOf(quote)
	for _, m := range texCommand.FindAllStringSubmatch(quote, -1) {
		names = append(names, m[1])
	}
	for _, name := range names {
		for _, tk := range tokenize(name) {
			if !words[tk.text] {
				return false
			}
		}
	}
	return true
}

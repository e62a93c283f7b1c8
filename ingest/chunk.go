package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// ChunkOptions sets the token budget of children. Children aim for at least
// MinTokens by merging paragraphs, never exceed MaxTokens, and a paragraph
// that has to be split repeats about Overlap tokens of the previous piece so
// a sentence cut at a boundary is still retrievable in one piece. Zero
// fields take the defaults; a negative Overlap disables overlap.
type ChunkOptions struct {
	MinTokens int
	MaxTokens int
	Overlap   int
}

// DefaultChunkOptions is sized for embedding models with 512-token windows:
// room for the heading path and a question beside a child.
func DefaultChunkOptions() ChunkOptions {
	return ChunkOptions{MinTokens: 200, MaxTokens: 400, Overlap: 30}
}

// normalized fills zero fields with defaults and keeps the budget workable;
// a negative Overlap turns overlap off.
func (o ChunkOptions) normalized() ChunkOptions {
	d := DefaultChunkOptions()
	if o.MaxTokens <= 0 {
		o.MaxTokens = d.MaxTokens
	}
	o.MaxTokens = max(o.MaxTokens, 32)
	if o.MinTokens <= 0 {
		o.MinTokens = min(d.MinTokens, o.MaxTokens/2)
	}
	o.MinTokens = min(o.MinTokens, o.MaxTokens)
	switch {
	case o.Overlap < 0:
		o.Overlap = 0
	case o.Overlap == 0:
		o.Overlap = min(d.Overlap, o.MaxTokens/8)
	}
	o.Overlap = min(o.Overlap, o.MaxTokens/4)
	return o
}

// blockSep joins blocks in the book's full text; chunk offsets count on it.
const blockSep = "\n\n"

// FullText returns the book's cleaned text as chunk and parent offsets see
// it: every block in reading order, joined by a blank line. The reader and
// the citation checker index into this string.
func FullText(doc *Document) string {
	var sb strings.Builder
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			if sb.Len() > 0 {
				sb.WriteString(blockSep)
			}
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// blockPos is where a block lies in the full text; head is where its table
// header rows end (start when it has none).
type blockPos struct{ start, end, head int }

// unit is a piece of the full text that is never divided further: a
// paragraph, or a slice of an oversize one.
type unit struct {
	start, end int
	tokens     int
}

type chunker struct {
	tok      *Tokenizer
	opt      ChunkOptions
	doc      *Document
	full     string
	pages    []citebook.PageSpan // page starts as absolute offsets into full
	words    []citebook.WordBox  // printed words, absolute offsets into full, in text order
	nextLine int                 // first unused line number in words
}

// Split turns a parsed book into parents (one per section that has text)
// and children (paragraph-sized chunks within a parent's token budget). IDs
// are derived from the book, the heading path and the text, so an unchanged
// paragraph keeps its ID in the next version of the book and an edited one
// gets a new ID; re-indexing then touches only what changed. Version,
// tenant and groups are left for the indexer to fill.
func Split(doc *Document, bookID string, tok *Tokenizer, opt ChunkOptions) ([]citebook.Parent, []citebook.Chunk) {
	c := &chunker{tok: tok, opt: opt.normalized(), doc: doc, full: FullText(doc)}
	// Offsets of every block, and where each section's blocks begin in it.
	var blocks []blockPos
	first := make([]int, len(doc.Sections)+1)
	off := 0
	for si, s := range doc.Sections {
		first[si] = len(blocks)
		for _, b := range s.Blocks {
			if off > 0 {
				off += len(blockSep)
			}
			blocks = append(blocks, blockPos{off, off + len(b.Text), off + min(max(b.Header, 0), len(b.Text))})
			c.addWords(b.Geometry, off)
			for _, p := range b.Pages {
				printed := p.Printed
				if printed == "" {
					printed = doc.Label(p.Page)
				}
				c.pages = append(c.pages, citebook.PageSpan{Offset: off + p.Offset, Page: p.Page, Printed: printed})
			}
			off += len(b.Text)
		}
	}
	first[len(doc.Sections)] = len(blocks)

	// Counting tokens is most of the cost of chunking, and every block is
	// counted on its own, so blocks are cut on all CPUs; the result is the
	// same as a sequential pass.
	blockUnits := make([][]unit, len(blocks))
	parallel(len(blocks), func(i int) {
		blockUnits[i] = c.blockUnits(blocks[i].start, blocks[i].end)
	})

	var parents []citebook.Parent
	var chunks []citebook.Chunk
	var chunkParent []int // index in parents of each chunk
	for si, s := range doc.Sections {
		if len(s.Blocks) == 0 {
			continue
		}
		parents = append(parents, citebook.Parent{
			BookID:      bookID,
			Ordinal:     len(parents),
			HeadingPath: append([]string(nil), s.HeadingPath...),
			CharStart:   blocks[first[si]].start,
			CharEnd:     blocks[first[si+1]-1].end,
		})
		var units []unit
		for _, u := range blockUnits[first[si]:first[si+1]] {
			units = append(units, u...)
		}
		for _, r := range c.merge(units) {
			chunks = append(chunks, citebook.Chunk{
				BookID:       bookID,
				Ordinal:      len(chunks),
				CharStart:    r.start,
				CharEnd:      r.end,
				Tokens:       r.tokens,
				IndexContext: c.tableContext(blocks[first[si]:first[si+1]], r.start),
			})
			chunkParent = append(chunkParent, len(parents)-1)
		}
	}

	// Text-derived fields depend on nothing but the text and its offsets.
	parallel(len(parents)+len(chunks), func(i int) {
		if i < len(parents) {
			p := &parents[i]
			p.Text = c.full[p.CharStart:p.CharEnd]
			p.Pages = c.spans(p.CharStart, p.CharEnd)
			p.PageStart, p.PrintedStart, p.PageEnd, p.PrintedEnd = c.pageRange(p.CharStart, p.CharEnd)
			return
		}
		ch := &chunks[i-len(parents)]
		ch.Text = c.full[ch.CharStart:ch.CharEnd]
		ch.ContentHash = contentHash(ch.Text)
		ch.Language = detectLanguage(ch.Text, doc.Language)
		ch.Pages = c.spans(ch.CharStart, ch.CharEnd)
		ch.PageStart, ch.PrintedStart, ch.PageEnd, ch.PrintedEnd = c.pageRange(ch.CharStart, ch.CharEnd)
		ch.Geometry = c.geometry(ch.CharStart, ch.CharEnd)
	})

	// IDs count repeats in document order, so they are assigned in one pass.
	parentSeen := map[string]int{}
	chunkSeen := map[string]int{}
	pathKeys := make([]string, len(parents))
	for i := range parents {
		p := &parents[i]
		pathKeys[i] = strings.Join(p.HeadingPath, "\x1f")
		p.ID = shortHash(bookID, pathKeys[i], strconv.Itoa(parentSeen[pathKeys[i]]))
		parentSeen[pathKeys[i]]++
	}
	for i := range chunks {
		ch := &chunks[i]
		p := &parents[chunkParent[i]]
		pathKey := pathKeys[chunkParent[i]]
		key := pathKey + "\x00" + ch.ContentHash
		ch.ID = shortHash(bookID, pathKey, ch.ContentHash, strconv.Itoa(chunkSeen[key]))
		chunkSeen[key]++
		ch.ParentID = p.ID
		ch.HeadingPath = p.HeadingPath
	}
	return parents, chunks
}

// Bounds of a table's caption: the short paragraphs right above it on its
// page (a lead-in such as "Outstanding long-term debt obligations ... are as
// follows:", the units) that a caption found by the parser has not already
// put in the heading path.
const (
	maxCaptionBlocks = 3
	maxCaptionBytes  = 200
)

// tableContext returns the index-only context of a chunk starting at start
// among a section's blocks: when the chunk continues a table past its header
// rows, the table's caption and header rows, one line each, else "".
func (c *chunker) tableContext(blocks []blockPos, start int) string {
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].start > start }) - 1
	if i < 0 {
		return ""
	}
	b := blocks[i]
	if b.head == b.start || start < b.head || start >= b.end {
		return ""
	}
	page, _ := citebook.PageAt(c.pages, b.start)
	var lines []string
	for j := i - 1; j >= 0 && i-j <= maxCaptionBlocks; j-- {
		p := blocks[j]
		if p.end-p.start > maxCaptionBytes || p.head > p.start || footnote(c.full[p.start:p.end]) {
			break
		}
		if pg, _ := citebook.PageAt(c.pages, p.start); pg != page {
			break
		}
		lines = append(lines, c.full[p.start:p.end])
	}
	slices.Reverse(lines)
	lines = append(lines, c.full[b.start:b.head])
	return strings.Join(lines, "\n")
}

// footnote reports whether a paragraph opens with a footnote mark ("*",
// "(1)", "(a)"): the end of the table above, not a caption of the next.
func footnote(t string) bool {
	if strings.HasPrefix(t, "*") {
		return true
	}
	if len(t) >= 3 && t[0] == '(' && t[2] == ')' {
		return t[1] >= '0' && t[1] <= '9' || t[1] >= 'a' && t[1] <= 'z'
	}
	return false
}

// parallel calls f for 0..n-1 on all CPUs, each index once.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// shortHash is a 64-bit hex digest of its parts, long enough to be unique
// within a library and short enough to read in logs and URLs.
func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// contentHash identifies a text across versions.
func contentHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// spans returns the page starts inside full[start:end], relative to start,
// the first at offset 0; nil for books without pages.
func (c *chunker) spans(start, end int) []citebook.PageSpan {
	if len(c.pages) == 0 {
		return nil
	}
	var out []citebook.PageSpan
	if p, printed := citebook.PageAt(c.pages, start); p > 0 {
		out = append(out, citebook.PageSpan{Offset: 0, Page: p, Printed: printed})
	}
	for _, s := range c.pages {
		if s.Offset > start && s.Offset < end {
			if n := len(out); n > 0 && out[n-1].Page == s.Page {
				continue
			}
			out = append(out, citebook.PageSpan{Offset: s.Offset - start, Page: s.Page, Printed: s.Printed})
		}
	}
	return out
}

// pageRange returns the first and last page (and printed labels) that
// full[start:end] touches.
func (c *chunker) pageRange(start, end int) (first int, firstPrinted string, last int, lastPrinted string) {
	if len(c.pages) == 0 {
		return 0, "", 0, ""
	}
	first, firstPrinted = citebook.PageAt(c.pages, start)
	last, lastPrinted = citebook.PageAt(c.pages, max(start, end-1))
	if first == 0 {
		for _, s := range c.pages {
			if s.Offset >= start && s.Offset < end {
				first, firstPrinted = s.Page, s.Printed
				break
			}
		}
	}
	return first, firstPrinted, last, lastPrinted
}

// merge packs consecutive paragraphs of one parent into children: a child
// grows while it is under MinTokens and the next paragraph still fits
// MaxTokens. Pieces of a split paragraph are left as they are.
//
// Counting is the expensive step of ingestion, so a merged child is not
// re-tokenized: the tokenizer splits text into pieces at line breaks before
// encoding, so joining paragraphs with a blank line adds at most the
// separator token at each join. Tokens is therefore exact for a single
// paragraph and the sum plus one per join for merged ones; budgeting two per
// join keeps MaxTokens a hard limit.
func (c *chunker) merge(units []unit) []unit {
	var out []unit
	var cur []unit
	sum := 0
	emit := func() {
		if len(cur) == 0 {
			return
		}
		r := unit{start: cur[0].start, end: cur[len(cur)-1].end, tokens: len(cur) - 1}
		for _, u := range cur {
			r.tokens += u.tokens
		}
		out = append(out, r)
		cur, sum = nil, 0
	}
	for _, u := range units {
		if len(cur) > 0 && (sum >= c.opt.MinTokens || sum+u.tokens+2 > c.opt.MaxTokens || u.start != cur[len(cur)-1].end+len(blockSep)) {
			emit()
		}
		if len(cur) > 0 {
			sum += 2 // the blank line between paragraphs, with margin
		}
		cur = append(cur, u)
		sum += u.tokens
	}
	emit()
	return out
}

// blockUnits returns a block as one unit, or as pieces within the budget
// when it is too long, each after the first starting with a short overlap.
func (c *chunker) blockUnits(start, end int) []unit {
	n := c.tok.Count(c.full[start:end])
	if n <= c.opt.MaxTokens {
		return []unit{{start, end, n}}
	}
	budget := c.opt.MaxTokens - c.opt.Overlap
	pieces := c.pack(start, end, n, levelLine, budget)
	for i := 1; i < len(pieces); i++ {
		if c.opt.Overlap == 0 {
			break
		}
		prev := pieces[i-1]
		from := c.overlapStart(prev.start, prev.end)
		if from >= pieces[i].start {
			continue
		}
		if t := c.tok.Count(c.full[from:pieces[i].end]); t <= c.opt.MaxTokens {
			pieces[i].start, pieces[i].tokens = from, t
		}
	}
	return pieces
}

// Split levels, coarsest first: a piece is cut at lines, then sentences,
// then words, then characters, only as far as needed to fit the budget.
const (
	levelLine = iota
	levelSentence
	levelWord
	levelRune
)

// pack splits full[start:end], n tokens long (every caller has just counted
// it), into contiguous pieces of at most budget tokens, cutting at the
// coarsest boundaries that make the pieces fit.
func (c *chunker) pack(start, end, n, level, budget int) []unit {
	text := c.full[start:end]
	if n <= budget {
		return []unit{{start, end, n}}
	}
	cuts := boundaries(text, level)
	if len(cuts) == 0 && level < levelRune {
		return c.pack(start, end, n, level+1, budget)
	}
	var out []unit
	var group []int // segment start offsets (relative) of the open group
	groupEnd, sum := 0, 0
	flush := func() {
		switch {
		case len(group) == 1: // one segment, counted already
			out = append(out, unit{start + group[0], start + groupEnd, sum})
		case len(group) > 1:
			out = append(out, c.fit(start, group, groupEnd, level, budget)...)
		}
		group, sum = nil, 0
	}
	prev := 0
	for _, cut := range append(cuts, len(text)) {
		if cut <= prev {
			continue
		}
		segStart, segEnd := prev, cut
		prev = cut
		n := c.tok.Count(text[segStart:segEnd])
		switch {
		case n > budget:
			flush()
			if level < levelRune {
				out = append(out, c.pack(start+segStart, start+segEnd, n, level+1, budget)...)
			} else {
				out = append(out, unit{start + segStart, start + segEnd, n})
			}
			continue
		case sum+n > budget:
			flush()
		}
		group = append(group, segStart)
		groupEnd, sum = segEnd, sum+n
	}
	flush()
	return out
}

// fit emits a group of segments as one piece when the joined text fits the
// budget (token counts are not exactly additive), halving it otherwise.
func (c *chunker) fit(base int, segs []int, end, level, budget int) []unit {
	start := base + segs[0]
	n := c.tok.Count(c.full[start : base+end])
	if n <= budget || len(segs) == 1 {
		if n > budget && level < levelRune {
			return c.pack(start, base+end, n, level+1, budget)
		}
		return []unit{{start, base + end, n}}
	}
	mid := len(segs) / 2
	return append(c.fit(base, segs[:mid], segs[mid], level, budget), c.fit(base, segs[mid:], end, level, budget)...)
}

// overlapStart picks where the overlap copied from the piece full[start:end]
// begins: the earliest sentence start (or, for text with spaces, word start)
// whose tail fits the overlap budget. It returns end when nothing fits, so no
// CJK sentence is ever entered mid-way.
func (c *chunker) overlapStart(start, end int) int {
	window := start
	if end-start > c.opt.Overlap*12 {
		window = end - c.opt.Overlap*12
		for window < end && !utf8.RuneStart(c.full[window]) {
			window++
		}
	}
	tail := c.full[window:end]
	best := end
	for _, level := range []int{levelSentence, levelWord} {
		cuts := boundaries(tail, level)
		for i := len(cuts) - 1; i >= 0; i-- {
			at := window + cuts[i]
			if at >= end {
				continue
			}
			if c.tok.Count(c.full[at:end]) > c.opt.Overlap {
				break
			}
			best = at
		}
		if best < end || hasCJK(tail) {
			break
		}
	}
	return best
}

// boundaries returns the offsets inside text where a piece may start at the
// given level (never 0).
func boundaries(text string, level int) []int {
	var cuts []int
	switch level {
	case levelLine:
		for i := 0; i < len(text); i++ {
			if text[i] == '\n' && i+1 < len(text) {
				cuts = append(cuts, i+1)
			}
		}
	case levelSentence:
		for i, r := range text {
			next := i + utf8.RuneLen(r)
			switch {
			case isCJKStop(r):
				next = skipClosers(text, next)
			case r == '.' || r == '!' || r == '?':
				j := skipClosers(text, next)
				if j >= len(text) || (text[j] != ' ' && text[j] != '\n') {
					continue
				}
				next = j
				for next < len(text) && (text[next] == ' ' || text[next] == '\n') {
					next++
				}
			default:
				continue
			}
			if next < len(text) && (len(cuts) == 0 || cuts[len(cuts)-1] < next) {
				cuts = append(cuts, next)
			}
		}
	case levelWord:
		for i, r := range text {
			next := i + utf8.RuneLen(r)
			if (r == ' ' || r == '\n' || r == '，' || r == '、' || r == '：') && next < len(text) {
				if len(cuts) == 0 || cuts[len(cuts)-1] < next {
					cuts = append(cuts, next)
				}
			}
		}
	default:
		n := 0
		for i := range text {
			if n > 0 && n%8 == 0 {
				cuts = append(cuts, i)
			}
			n++
		}
	}
	return cuts
}

// isCJKStop reports full-width sentence-ending punctuation.
func isCJKStop(r rune) bool {
	switch r {
	case '。', '！', '？', '；', '｡':
		return true
	}
	return false
}

// skipClosers moves past closing quotes and brackets that belong to the
// sentence just ended.
func skipClosers(text string, i int) int {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '"', '\'', ')', ']', '”', '’', '」', '』', '）', '】', '》':
			i += n
		default:
			return i
		}
	}
	return i
}

// hasCJK reports whether text contains Han, kana or Hangul characters.
func hasCJK(text string) bool {
	for _, r := range text {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

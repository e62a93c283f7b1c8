package qa

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// Extractive answers without a model: it quotes one contiguous passage of
// the context — up to three consecutive sentences of one chunk — that holds
// the most of the question's IDF-weighted key terms. One passage reads as an
// answer and cites one place in the book, where sentences picked from
// several passages for their overlap read as a collage and point all over
// it. Every statement is a verbatim sentence citing its own chunk, so it
// always verifies; when no passage covers enough of the question it says
// nothing, and the pipeline refuses.
type Extractive struct {
	terms       func(string) []string
	maxSentence int
	minCoverage float64 // IDF-weighted share of the question's terms the passage must hold
	minTerms    int     // distinct question terms it must hold (fewer if the question has fewer)
}

// NewExtractive segments with terms (analysis.Terms).
func NewExtractive(terms func(string) []string) *Extractive {
	return &Extractive{terms: terms, maxSentence: 3, minCoverage: 0.15, minTerms: 2}
}

// ExtractiveModel is the model name the extractive answerer reports.
const ExtractiveModel = "extractive"

// Answer weighs the question's terms by their rarity in the context itself;
// the pipeline calls AnswerWeighted with weights from the whole scope.
func (e *Extractive) Answer(ctx context.Context, question string, chunks []ContextChunk) (Draft, error) {
	return e.AnswerWeighted(ctx, question, chunks, Evidence{})
}

// sentence is a unit evidence is read from and quoted (chunkUnits): a
// sentence of prose or a table's row.
type sentence struct {
	text  string
	terms map[string]bool
	// own are a table row's terms without its table's (nil: prose): a row
	// answers only when it names something the question asks about
	// itself, not merely by standing in the statement the question names.
	own map[string]bool
}

// AnswerWeighted quotes the best passage. weights maps key terms to their
// weight (IDF over the scope); nil weighs the question's content terms by
// their rarity among the context's sentences. A passage's score is its
// weighted coverage, discounted by the rank of its chunk's passage and, past
// 300 bytes, by length, so the shortest window that holds the answer wins.
func (e *Extractive) AnswerWeighted(_ context.Context, question string, chunks []ContextChunk, ev Evidence) (Draft, error) {
	d := Draft{Model: ExtractiveModel, Statements: []Statement{}}
	weights := ev.Weights
	all, nsent := e.sentences(chunks, newUnitCache(e.terms, ev.Aliases))
	if nsent == 0 {
		return d, nil
	}
	// Given weights, the pipeline's answerability check already found the
	// context holds enough of the key terms; one rare term may then carry
	// a passage ("炮身的容量有多大？" is answered by the sentence with 容量):
	// bestPassage asks for one term instead of minTerms.
	given := weights != nil
	if weights == nil {
		weights = map[string]float64{}
		for _, t := range questionTerms(question, e.terms) {
			df := 0
			for _, cs := range all {
				for _, s := range cs.sents {
					if s.terms[t] {
						df++
					}
				}
			}
			weights[t] = math.Log(1 + float64(nsent)/float64(df+1))
		}
	}
	kind := askedType(question)
	// A symbol the question types on its own ("$$") is its subject: a
	// passage without it answers a neighbouring question (lshort-zh-cn's
	// page on the equation environment, for why not to write $$). The
	// pipeline refuses when no passage shows it at all.
	alone := analysis.StandaloneSymbols(question)
	def := whatIsAsked(question)
	bestChunk, bestFrom, bestTo, _ := e.bestPassage(all, weights, given, kind, def, alone)
	if bestChunk == nil {
		return d, nil
	}
	d.Statements = e.passage(d.Statements, bestChunk, bestFrom, bestTo)
	// A question that plainly asks two things ("how do I warn everyone …,
	// and how do I keep the shutdown …") gets a passage for each part the
	// first passage does not cover (coordinated), in the question's order.
	if parts := coordinated(question, e.terms); len(parts) > 1 && given {
		type win struct {
			c        *chunkSents
			from, to int
		}
		shown := []win{{bestChunk, bestFrom, bestTo}}
		for _, part := range parts {
			pw := partWeights(weights, part, e.terms)
			if len(pw) == 0 || windowCover(bestChunk.sents[bestFrom:bestTo+1], pw) >= e.minCoverage {
				continue
			}
			c, from, to, _ := e.bestPassage(all, pw, given, askedType(part), whatIsAsked(part), analysis.StandaloneSymbols(part))
			if c == nil || slices.Contains(shown, win{c, from, to}) {
				continue
			}
			shown = append(shown, win{c, from, to})
			d.Statements = e.passage(d.Statements, c, from, to)
		}
	}
	return d, nil
}

// sentences splits the context into the units passages are made of, with
// a break (an empty sentence) where a unit cannot be quoted, and counts the
// quotable ones.
func (e *Extractive) sentences(chunks []ContextChunk, uc *unitCache) (all []chunkSents, nsent int) {
	for _, c := range chunks {
		cs := chunkSents{c: c}
		units, tab := uc.units(&c.Chunk)
		if tab != nil {
			// A table's row is its unit: the whole table is one
			// "sentence" too long to quote, and a row means what its
			// table's title and column header say ("2018" is in the
			// header, "cash flows" in the title).
			cs.table, cs.header = true, tab.header
		}
		var lead map[string]bool // a heading line's terms, for the sentence after it
		_, headEnd := leadHeading(&c.Chunk)
		for i, u := range units {
			s := u.text
			if i == 0 && tab == nil && headEnd > 0 {
				// The section's title is no passage to quote, but what
				// follows it is about it: its first sentence holds its terms.
				lead = u.terms
				cs.sents = append(cs.sents, sentence{})
				continue
			}
			if s == "" || utf8.RuneCountInString(s) < 12 || len(s) > 800 || leaderShare(s) > 0.2 || isCode(s) {
				// A break in the passage: windows never span it.
				cs.sents = append(cs.sents, sentence{})
				lead = nil // the title's terms are the next sentence's only
				continue
			}
			if lead != nil {
				u.terms = maps.Clone(u.terms) // the cache's, shared
				maps.Copy(u.terms, lead)
				lead = nil
			}
			cs.sents = append(cs.sents, u)
			nsent++
		}
		all = append(all, cs)
	}
	return all, nsent
}

// chunkSents is a context chunk split into sentences; an empty sentence is
// a break no passage spans.
type chunkSents struct {
	c     ContextChunk
	sents []sentence
	// table says the chunk is a table, its units rows; header holds its
	// column header lines, quoted before its row.
	table  bool
	header []string
}

// bestPassage finds the window of up to maxSentence consecutive sentences
// of one chunk that scores best for weights (see AnswerWeighted); nil when
// none holds enough of them. score is the window's (0 for none).
func (e *Extractive) bestPassage(all []chunkSents, weights map[string]float64, given bool, kind answerType, def *whatIs, alone map[string]bool) (*chunkSents, int, int, float64) {
	// Sums run over the terms in one fixed order: taken in map order they
	// differ in the last bits from run to run, and that decided whether a
	// sentence adding nothing extended the passage (cov <= prevCov).
	keys := slices.Sorted(maps.Keys(weights))
	total := 0.0
	for _, t := range keys {
		total += weights[t]
	}
	if total == 0 {
		return nil, 0, 0, 0
	}
	need := min(e.minTerms, len(weights))
	if given {
		need = min(1, len(weights))
	}
	var symbols []string
	for _, t := range keys {
		if analysis.IsSymbol(t) && alone[t] {
			symbols = append(symbols, t)
		}
	}
	var (
		best      float64
		bestChunk *chunkSents
		bestFrom  int
		bestTo    int
		bestSize  int
	)
	for ci := range all {
		cs := &all[ci]
		for i := range cs.sents {
			have := map[string]bool{}
			size := 0
			prevCov := 0.0
			typed := false   // the passage states what the question asks for (its type, or the definition asked for)
			defines := false // … the definition asked for (see passageDiscount)
			width := e.maxSentence
			if cs.table {
				width = 1 // a row is a passage; the next row is another line item
			}
			for j := i; j < min(len(cs.sents), i+width); j++ {
				s := cs.sents[j]
				if s.text == "" || s.own != nil && !holdsAny(s.own, weights) {
					break
				}
				size += len(s.text)
				defines = defines || def.states(s.text)
				typed = typed || defines || kind.statedIn(s.text)
				for t := range s.terms {
					if weights[t] > 0 {
						have[t] = true
					}
				}
				got := 0.0
				for _, t := range keys {
					if have[t] {
						got += weights[t]
					}
				}
				cov := got / total
				if j > i && cov <= prevCov {
					break // a sentence that adds nothing does not extend the passage
				}
				prevCov = cov
				if cov < e.minCoverage || len(have) < need || !holdsAll(symbols, have) {
					continue
				}
				score := cov * passageDiscount(cs.c, defines) / math.Sqrt(max(1, float64(size)/300))
				if typed {
					score *= typeBoost
				}
				// Of equal scores the shorter passage wins: it holds the
				// same evidence with less around it.
				// (Scores are sums over map iterations, so equal means
				// within rounding.)
				if score > best+tieEps || score > best-tieEps && bestChunk != nil && size < bestSize {
					best, bestChunk, bestFrom, bestTo, bestSize = score, cs, i, j, size
				}
			}
		}
	}
	return bestChunk, bestFrom, bestTo, best
}

// passage appends the statement quoting the window [from, to] of a
// chunk. The passage is one statement citing one quote, the chunk's text
// from its first sentence to its last: a reader checks one place, and a
// passage printed across a page break is cited as the pages it runs over
// ("pp. 120–121"), not as a sentence on each page, the first of which is
// only the lead-in to the second.
func (e *Extractive) passage(out []Statement, cs *chunkSents, from, to int) []Statement {
	sents := cs.sents[from : to+1]
	if len(cs.header) > 0 {
		// A row's numbers read only under their column header ("2018
		// 2017 2016"), so the header is quoted first, from the same chunk.
		h := strings.Join(cs.header, "\n")
		if strings.Contains(cs.c.Chunk.Text, h) && !strings.Contains(sents[0].text, h) {
			out = append(out, Statement{Text: readable(h), Citations: []Claim{{ChunkID: cs.c.Chunk.ID, Quote: h}}})
		}
	}
	text, last := cs.c.Chunk.Text, sents[len(sents)-1].text
	qi, qj, ok := passageSpan(text, sents[0].text, last)
	if !ok {
		for _, s := range sents {
			out = append(out, Statement{
				Text:      readable(s.text),
				Citations: []Claim{{ChunkID: cs.c.Chunk.ID, Quote: s.text}},
			})
		}
		return out
	}
	body := readable(text[qi:qj])
	if end, block, ok := announced(text, qj, last); ok {
		qj, body = end, body+" "+block
	}
	return append(out, Statement{
		Text:      body,
		Citations: []Claim{{ChunkID: cs.c.Chunk.ID, Quote: text[qi:qj]}},
	})
}

// partWeights restricts weights to the key terms of one part of a question.
func partWeights(weights map[string]float64, part string, terms func(string) []string) map[string]float64 {
	out := map[string]float64{}
	for _, t := range questionTerms(part, terms) {
		if w, ok := weights[t]; ok {
			out[t] = w
		}
	}
	return out
}

// holdsAny reports whether terms hold a term of positive weight.
func holdsAny(terms map[string]bool, weights map[string]float64) bool {
	for t := range terms {
		if weights[t] > 0 {
			return true
		}
	}
	return false
}

// windowCover is the weighted share of weights the sentences hold.
func windowCover(sents []sentence, weights map[string]float64) float64 {
	total, got := 0.0, 0.0
	for _, t := range slices.Sorted(maps.Keys(weights)) {
		total += weights[t]
		for _, s := range sents {
			if s.terms[t] {
				got += weights[t]
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// passageSpan is where text runs from the first occurrence of first to
// the end of the next occurrence of last at or after it; ok is false when
// either is missing.
func passageSpan(text, first, last string) (from, to int, ok bool) {
	i := strings.Index(text, first)
	if i < 0 {
		return 0, 0, false
	}
	j := strings.Index(text[i:], last)
	if j < 0 {
		return 0, 0, false
	}
	return i, i + j + len(last), true
}

// readable turns a sentence into answer text: whitespace collapsed, and a
// command typed at a prompt inside it (R's "> x <- 1" on its own line) set
// in backticks without the prompt, so "read as > HousePrice <- …" does not
// read as prose. The quote stays the verbatim sentence.
func readable(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if cmd, ok := dropPrompt(strings.TrimSpace(l)); ok && i > 0 {
			lines[i] = "`" + cmd + "`"
		}
	}
	return strings.Join(strings.Fields(strings.Join(lines, "\n")), " ")
}

// prompts are the prompts readable drops before a command it sets as
// code; the root prompt "# " stays: it says who runs the command.
var prompts = []string{"> ", ">>> ", "$ ", "+ "}

// dropPrompt returns line t without the prompt it was typed at, and
// whether it had one of prompts.
func dropPrompt(t string) (string, bool) {
	for _, p := range prompts {
		if strings.HasPrefix(t, p) {
			return strings.TrimSpace(strings.TrimPrefix(t, p)), true
		}
	}
	return t, false
}

// isCode reports a line typed at a prompt (R's "> ", a shell's "$ ",
// Python's ">>> "): code shows how, but as a statement it answers nothing.
func isCode(s string) bool {
	for _, p := range []string{"> ", ">>> ", "$ ", "# ", "+ "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isHeadingLine reports a line that is one of the chunk's own headings,
// with or without its number ("6.3. Controlling terminal for maintainer
// scripts" under the heading "Controlling terminal for maintainer scripts"):
// EPUB, Markdown and text books keep a section's title as its text's first
// line, and quoted alone it answers nothing — it only repeats the
// question's words ("Can a maintainer script ask questions on the
// terminal?" was answered "Controlling terminal for maintainer scripts").
// The heading still counts for retrieval and answerability; it is only no
// passage to quote.
func isHeadingLine(s string, path []string) bool {
	if len(path) == 0 {
		return false
	}
	fs := analysis.Fold(s)
	for _, h := range path {
		fh := analysis.Fold(h)
		if fh == "" || !strings.HasSuffix(fs, fh) {
			continue
		}
		if sectionNumber(fs[:len(fs)-len(fh)]) {
			return true
		}
	}
	return false
}

// sectionNumber reports what may stand before a heading's title: nothing,
// or its number as Fold leaves it ("63" of "6.3.", "a2" of "A.2", "chapter12",
// "partiv").
func sectionNumber(p string) bool {
	for _, w := range []string{"chapter", "section", "appendix", "part"} {
		if strings.HasPrefix(p, w) {
			p = p[len(w):]
			break
		}
	}
	if p == "" {
		return true
	}
	if p[0] >= 'a' && p[0] <= 'z' && len(p) > 1 && p[1] >= '0' && p[1] <= '9' {
		p = p[1:] // an appendix letter before its number
	}
	return strings.Trim(p, "0123456789") == "" || strings.Trim(p, "ivxlc") == ""
}

// tieEps is the difference below which two passage scores are equal.
const tieEps = 1e-9

// passageRank is the better of a passage's ranks before and after
// reranking: the term-overlap reranker sees a passage with its neighbours,
// retrieval weighed the chunk itself (BM25 over the whole scope), and a
// passage either puts near the top deserves the small discount.
func passageRank(c ContextChunk) int {
	if c.Retrieved > 0 && c.Retrieved < c.Rank {
		return c.Retrieved
	}
	return max(c.Rank, 1)
}

// passageDiscount is what retrieval's order costs a passage's evidence
// score: rankDiscount a step down the reranked context, and at least the
// share of the first passage's fused score it has (Lead), unless a
// reranker moved it up (a configured model or cross-encoder outranks the
// fused scores), or the window states the definition the question asks
// for (defines), which a chunk's fused score cannot see: "A data frame is
// a list with class …" is one of many passages naming data frames (a
// window merely of the answer's type, a year for "when", is no such
// evidence). A flat step treated a passage fused at two thirds of the
// first like a near tie, and a few more of the question's words in one
// window took the answer off a first passage that stood clear: "Is there a
// lint tool in Debian that checks my shell scripts …" quoted "See Shell
// Mistakes … to learn from mistakes" (fused 0.67 of the first) over the
// table row "shellcheck … lint tool for shell scripts". Measured before
// it was kept (book scope, builtin embedder, extractive): fourth held-out
// set citation page accuracy 0.667 → 0.778, FinanceBench book 0.606 →
// 0.697, the blind sixth set 0.588 → 0.647; books-dev, the first three
// held-out sets, FinanceBench shared and CMRC moved no answer onto or off
// a gold page (three FinanceBench shared answers moved between wrong
// pages). The share squared lost a first held-out answer; exempting every
// typed window, not only definitions, lost the sixth set's gain.
func passageDiscount(c ContextChunk, defines bool) float64 {
	d := 1 / (1 + rankDiscount*float64(passageRank(c)-1))
	if c.Lead > 0 && c.Rank >= c.Retrieved && !defines {
		d = min(d, c.Lead)
	}
	return d
}

// rankDiscount is how much each step down the reranked context costs a
// passage: retrieval already weighed the whole chunk against the question,
// which a few sentences' term overlap cannot see.
const rankDiscount = 0.1

// Package analysis turns text into the terms citebook searches by: one
// tokenizer, one CJK segmentation and one stop-word list, shared by the
// lexical index (indexing and querying), the builtin embedder, the answering
// pipeline's thresholds, reranking and extraction, and evaluation — so a
// question is analysed exactly as the books it is matched against. Modelled
// on bleve's analysis package (tokenizer → token filters), reduced to what
// citebook needs; it has no dependencies inside the module.
package analysis

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Fold keeps the letters and digits of s, lower-cased, so texts compare
// whatever their spacing, punctuation, line breaking and case: a gold
// answer inside an answer ("CHCONH" in "分子式为CHCONH。"), pdftotext's
// page text against the parser's.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Terms splits text into the terms the index stores and queries match.
// Words of alphabetic scripts are lowercased and lightly stemmed (English
// plurals, an acronym's too: "CPUs" is "cpu"), so "Vectors" matches
// "vector". Scripts written without spaces (Chinese, Japanese kana,
// Korean) yield every character and every pair of adjacent characters:
// unigrams keep recall for one-character words, bigrams give the precision
// of two-character words without a dictionary.
// Non-ASCII text is NFKC-normalised first, so ligatures from PDFs ("ﬁle")
// and full-width forms in CJK text ("ＰＤＦ", "２０２４") match what people
// type.
func Terms(s string) []string {
	// Sized for English prose (a term every six bytes or so), so the list
	// is not regrown term by term: the answering pipeline segments every
	// question and passage it reads.
	out := make([]string, 0, len(s)/6+1)
	EachTerm(s, func(t []byte) { out = append(out, string(t)) })
	if len(out) == 0 {
		return nil // as before the sizing: no terms, no list
	}
	return out
}

// EachTerm calls fn with each term Terms(s) would return, in the same
// order, without allocating a string per term: the answering pipeline's
// threshold checks every hit's text for the question's terms on each
// search, and building the term list was a sixth of its CPU. fn must not
// keep t, which is overwritten by the next term.
func EachTerm(s string, fn func(t []byte)) { eachTerm(s, false, fn) }

// EachTermV1 is EachTerm with the plural rule of hash-ngram-v1 (pluralV1),
// for the builtin embedder alone: its vectors are stored, so the terms it
// hashes must stay what they were when a library was embedded, while the
// lexical index, which re-segments on start when the analysis changes (its
// snapshot's fingerprint), follows Terms.
func EachTermV1(s string, fn func(t []byte)) { eachTerm(s, true, fn) }

func eachTerm(s string, v1 bool, fn func(t []byte)) {
	if !isASCII(s) {
		// Invalid bytes become separators first: left in place they can hide
		// the next character from normalisation ("\xf1ĳ" kept the ĳ ligature
		// that "ĳ" alone folds to "ij"), and a term must match itself.
		s = norm.NFKC.String(spaceFullWidthEnds(strings.ToValidUTF8(s, " ")))
	}
	// The buffers fn is handed escape to the heap (the compiler cannot see
	// that fn keeps no term), so they are one allocation, not three: a
	// search segments its question and passages many times, and the three
	// were an eighth of its allocations (BenchmarkServeSearch).
	bufs := new(struct {
		word [64]byte
		cjk  [2 * utf8.UTFMax]byte
		sym  [16]byte
	})
	var (
		word = bufs.word[:0]
		cjk  = bufs.cjk[:]
		prev rune // previous CJK rune in the current run, 0 outside a run
		sym  = bufs.sym[:]
	)
	wide := false             // word holds a non-ASCII rune
	caps, lastCap := 0, false // capital ASCII letters in word, and whether the last letter was one (acronymPlural)
	symStart, skip := -1, 0   // start of the current run of ASCII symbols; bytes consumed ahead
	flushSym := func(end int) {
		if symStart >= 0 {
			if t := symbolTerm(s[symStart:end]); t != "" {
				fn(append(sym[:0], t...))
			}
			symStart = -1
		}
	}
	flush := func() {
		if len(word) > 0 {
			if wide && !norm.NFKC.IsNormal(word) {
				// Lower-casing can leave a normalisable sequence: "Y" and a
				// combining ring stay apart under NFKC (no capital "Y̊"
				// exists), lower-cased they compose to "ẙ"; a term must be
				// what segmenting it again gives.
				word = norm.NFKC.Bytes(word)
			}
			if !v1 && !wide && acronymPlural(word, caps, lastCap) {
				word = word[:len(word)-1]
			}
			fn(stemWord(word, wide, v1))
			word, wide, caps, lastCap = word[:0], false, 0, false
		}
	}
	for i, r := range s {
		if i < skip {
			continue
		}
		if r < 0x80 { // ASCII fast path: most text in most books
			prev = 0
			switch {
			case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
				flushSym(i)
				word = append(word, byte(r))
				lastCap = false
			case r == ',' && symStart < 0 && thousands(word, s[i+1:]):
				// "1,577" is one number, as a table prints it and a
				// question may type it ("1577"); split, its halves
				// would also double a table row's length.
			case 'A' <= r && r <= 'Z':
				flushSym(i)
				word = append(word, byte(r+'a'-'A'))
				caps, lastCap = caps+1, true
			case isSymbolByte(byte(r)):
				flush()
				if n := rOperator(s[i:]); n > 0 {
					// R's %in%, %o%: one operator, not a word between
					// two percent signs.
					flushSym(i)
					fn(bytes.ToLower(append(sym[:0], s[i:i+n]...)))
					skip = i + n
					continue
				}
				if symStart < 0 {
					symStart = i
				}
			default:
				flush()
				flushSym(i)
			}
			continue
		}
		flushSym(i)
		switch {
		case IsCJK(r):
			flush()
			fn(utf8.AppendRune(cjk[:0], r))
			if prev != 0 {
				fn(utf8.AppendRune(utf8.AppendRune(cjk[:0], prev), r))
			}
			prev = r
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			prev, wide = 0, true
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default:
			prev = 0
			flush()
		}
	}
	flush()
	flushSym(len(s))
}

// spaceFullWidthEnds puts a space after each full-width sentence end
// (！？；): NFKC folds them to ASCII punctuation, which would join the next
// sentence's symbols into one run ("！$$" → "!$$"), while Sentences splits
// there — and a text's terms must be its sentences' terms in turn (the
// lexical index marks sentences in the stored term sequence).
func spaceFullWidthEnds(s string) string {
	if !strings.ContainsAny(s, "！？；") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
		if r == '！' || r == '？' || r == '；' {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Symbol terms. Code books are about operators and markup as much as
// words: a question about "$$", "<<-", "#!/", "%in%", "->", "&&", "|>" or
// "::" can only find the page that explains it if the symbol is a term.
// A run of ASCII punctuation becomes one term after the prose punctuation
// at its ends is stripped (the quotes and brackets around "$$", the full
// stop after "->."), when two or three characters are left: single
// characters ("$", "/", "-") are everywhere and tell nothing, longer runs
// are rules and leaders ("-----", "....."). R's %name% operators are terms
// whole. The underscore stays a separator between words.

// isSymbolByte reports ASCII punctuation a symbol term is made of.
func isSymbolByte(b byte) bool {
	return b > ' ' && b < 0x7f && b != '_' &&
		!('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9')
}

// proseEnds is the punctuation stripped from a symbol run's ends.
const proseEnds = ".,;?'\"()[]{}`"

// maxSymbol is the longest symbol term, in bytes.
const maxSymbol = 3

// symbolTerm is the term a run of symbol bytes yields, or "".
func symbolTerm(run string) string {
	run = strings.Trim(run, proseEnds)
	if len(run) < 2 || len(run) > maxSymbol {
		return ""
	}
	return run
}

// rOperator returns the length of an R operator "%name%" (one to eight
// ASCII letters between percent signs) at the start of s, or 0.
func rOperator(s string) int {
	if len(s) < 3 || s[0] != '%' {
		return 0
	}
	for i := 1; i < len(s) && i <= 9; i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z':
		case b == '%' && i > 1:
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// StandaloneSymbols lists the symbol terms a question types on their own
// (between spaces, quotes or brackets, or beside CJK text): "why not write
// $$ for display maths", "what does `<<-` do". Such a symbol is what the
// question asks about. A symbol glued to letters or digits is part of a
// longer token — the shebang of "#!/bin/sh", the "::" of std::vector —
// whose words carry it: searched or weighed, "#!/" drew a question about
// which shell runs /bin/sh to a code listing that starts with "#!/bin/sh".
//
// The result is nil when there are none (as for most questions): the
// answering pipeline asks this of every question several times a search.
func StandaloneSymbols(q string) map[string]bool {
	var out map[string]bool
	for tok := range strings.FieldsFuncSeq(q, func(r rune) bool { return r <= ' ' || r >= 0x80 }) {
		tok = strings.Trim(tok, proseEnds)
		// Tokens are ASCII: only a run of symbol bytes (or an R operator,
		// which starts with one) gives a symbol term, so a token without
		// one, a plain word, needs no segmenting.
		if !strings.ContainsFunc(tok, func(r rune) bool { return r < 0x80 && isSymbolByte(byte(r)) }) {
			continue
		}
		n, sym := 0, ""
		EachTerm(tok, func(t []byte) {
			if n++; n == 1 && IsSymbol(string(t)) {
				sym = string(t)
			}
		})
		if n == 1 && sym != "" {
			if out == nil {
				out = map[string]bool{}
			}
			out[sym] = true
		}
	}
	return out
}

// IsSymbol reports a symbol term ("$$", "<<-", "%in%"): Terms emits it
// for operators and markup. The builtin embedder leaves them out, so
// vectors stored before symbols were terms stay valid.
func IsSymbol(t string) bool {
	return t != "" && isSymbolByte(t[0])
}

// thousands reports whether a comma after word separates thousands: word is
// digits and rest starts with exactly three digits.
func thousands(word []byte, rest string) bool {
	if len(word) == 0 || len(rest) < 3 {
		return false
	}
	for _, b := range word {
		if !isDigit(b) {
			return false
		}
	}
	return isDigit(rest[0]) && isDigit(rest[1]) && isDigit(rest[2]) && (len(rest) == 3 || !isDigit(rest[3]))
}

// QueryTerms turns a question into the unique terms a keyword search looks
// up. Stop words are dropped unless nothing else is left (they match nearly
// every chunk, add almost nothing to BM25 and make the search visit every
// row). In runs of CJK characters only the bigrams are kept, and the
// characters of runs too short to have one: a question's single characters
// ("的", "是", "年") match most passages of a Chinese library and drown the
// bigrams that name what is asked; the index keeps unigrams, so a
// one-character question still finds its passages. A word that joins
// letters and digits also looks up its parts ("FY2018" → "fy2018", "fy",
// "2018"), since books write "fiscal 2018" as often as "FY2018".
func QueryTerms(q string) []string {
	terms := Terms(q)
	var alone map[string]bool // symbols typed on their own (StandaloneSymbols)
	var glued []string        // the others, looked up only when nothing else is
	seen := map[string]bool{}
	var keep, stop []string
	add := func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		if IsStopword(t) {
			stop = append(stop, t)
		} else {
			keep = append(keep, t)
		}
	}
	for i, t := range terms {
		if cjkUnigram(t) && inBigram(terms, i) {
			continue
		}
		if IsSymbol(t) {
			if alone == nil {
				alone = StandaloneSymbols(q)
			}
			if !alone[t] {
				if !seen[t] {
					seen[t] = true
					glued = append(glued, t)
				}
				continue // glued to a word ("#!/bin/sh"): its words are looked up
			}
		}
		add(t)
		for _, part := range compoundParts(t) {
			add(part)
		}
	}
	if len(keep) == 0 {
		if len(stop) == 0 {
			return glued // "%in%%o%": symbols glued to each other
		}
		return stop
	}
	return keep
}

// compoundParts splits an ASCII word of letters and digits into its runs
// of at least two letters or three digits; nil for other words. A quarter
// or half glued to its year is its year (PeriodYear).
func compoundParts(t string) []string {
	if !isASCII(t) {
		return nil
	}
	if y := PeriodYear(t); y != "" {
		return []string{y}
	}
	var out []string
	start := 0
	for i := 1; i <= len(t); i++ {
		if i < len(t) && isDigit(t[i]) == isDigit(t[start]) {
			continue
		}
		if i-start == len(t) {
			return nil // one run: not a compound
		}
		if run := t[start:i]; isDigit(run[0]) && len(run) >= 3 || !isDigit(run[0]) && len(run) >= 2 {
			out = append(out, run)
		}
		start = i
	}
	return out
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// PeriodYear returns the year of a quarter or half typed glued to it, as
// readers of filings write them ("Q22023" is Q2 2023, "h12024" H1 2024),
// or "" for any other word. Read as a run of digits it was the number
// 22023, which no filing prints: the question was refused as one about a
// number the filing never states.
func PeriodYear(t string) string {
	if len(t) != 6 || t[0]|0x20 != 'q' && t[0]|0x20 != 'h' || t[1] < '1' || t[1] > '4' {
		return ""
	}
	y := t[2:]
	if !(y[0] == '1' && y[1] == '9' || y[0] == '2' && y[1] == '0') || !isDigit(y[2]) || !isDigit(y[3]) {
		return ""
	}
	return y
}

// cjkUnigram reports whether t is a single CJK character.
func cjkUnigram(t string) bool {
	r, n := utf8.DecodeRuneInString(t)
	return n == len(t) && IsCJK(r)
}

// inBigram reports whether the unigram terms[i] is part of a bigram that
// Terms emitted next to it: the bigram ending in it follows it, the one
// starting with it follows the next unigram.
func inBigram(terms []string, i int) bool {
	if i+1 < len(terms) && utf8.RuneCountInString(terms[i+1]) == 2 && strings.HasSuffix(terms[i+1], terms[i]) {
		return true
	}
	return i+2 < len(terms) && utf8.RuneCountInString(terms[i+2]) == 2 && strings.HasPrefix(terms[i+2], terms[i])
}

// ContentTerms drops stop words and repeats from segmented terms: what a
// passage must share with a question to be about it. Unlike QueryTerms it
// never falls back to stop words, so a question made only of them has no
// content at all.
func ContentTerms(terms []string) []string {
	out := terms[:0:0]
	seen := map[string]bool{}
	for _, t := range terms {
		t = strings.ToLower(t)
		if IsStopword(t) || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// TermSet is the set of a text's lower-cased terms.
func TermSet(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[strings.ToLower(t)] = true
	}
	return m
}

// IsCJK reports whether r belongs to a script written without spaces
// between words.
func IsCJK(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// stemWord strips English plural endings from a word, in place in the
// word's buffer; it is deliberately light so it never merges unrelated
// words. v1 true applies hash-ngram-v1's rule alone (pluralV1: the builtin
// embedder's, frozen). Otherwise accents are folded first (foldMarks), and
// "-es" comes off after a sibilant that cannot end a singular in "e" (x,
// sh, tch, rch, nch, zz): "taxes", "boxes", "hashes", "matches", "searches"
// meet "tax", "box", "hash", "match", "search", where v1 left "taxe",
// "boxe", … that no singular shares ("-ches" after a vowel keeps its "e":
// "caches" → "cache"); classical plurals go to their singular
// (classicalPlural). wide false promises the word is ASCII (eachTerm
// knows), which spares a scan of every word's bytes.
func stemWord(w []byte, wide, v1 bool) []byte {
	if wide && !isASCII(w) {
		if v1 {
			return w
		}
		var ok bool
		if w, ok = foldMarks(w); !ok {
			return w
		}
	}
	if !v1 {
		if n := len(w); n >= 5 && w[n-1] == 's' && w[n-2] == 'e' && sibilantEnd(w[:n-2]) {
			return w[:n-2]
		}
		if c, ok := classicalPlural(w); ok {
			return c
		}
	}
	return pluralV1(w)
}

// classicalPlurals are the Latin and Greek plurals of technical books that
// no suffix rule reaches without also catching "prices" or "cheeses":
// R-intro prints "matrices" 44 times beside "matrix" 105 times.
var classicalPlurals = map[string]string{
	"matrices": "matrix", "indices": "index", "vertices": "vertex", "appendices": "appendix", "simplices": "simplex",
	"vortices": "vortex", "apices": "apex", "crises": "crisis", "diagnoses": "diagnosis", "prognoses": "prognosis",
	"criteria": "criterion", "phenomena": "phenomenon",
}

// classicalPlural gives the singular of a classical plural: "-theses" →
// "-thesis" (hypotheses, parentheses, syntheses), "-yses" → "-ysis"
// (analyses), or one of classicalPlurals; ok false for any other word.
func classicalPlural(w []byte) ([]byte, bool) {
	n := len(w)
	if n < 6 {
		return w, false
	}
	switch {
	case w[n-1] == 's' && w[n-2] == 'e' && w[n-3] == 's':
		switch {
		case w[n-4] == 'e' && w[n-5] == 'h' && w[n-6] == 't', w[n-4] == 'y':
			w[n-2] = 'i' // -ses → -sis
			return w, true
		case w[n-4] != 'i' && w[n-4] != 'o':
			return w, false
		}
	case w[n-1] == 's' && w[n-2] == 'e' && w[n-3] == 'c' && w[n-4] == 'i':
	case w[n-1] == 'a' && (w[n-2] == 'i' && w[n-3] == 'r' || w[n-2] == 'n' && w[n-3] == 'e'):
	default:
		return w, false
	}
	if c, ok := classicalPlurals[string(w)]; ok {
		return append(w[:0], c...), true
	}
	return w, false
}

// foldMarks takes the accents off a Latin word, in place, when every
// letter of it is an ASCII letter with combining marks ("Gödel" → "godel",
// "naïve", "café", "Erdős"), so a question typed without them finds the
// book, as search engines' ASCII folding does; it reports false and leaves
// the word alone when any letter is not (Greek, Cyrillic, "ø", "ß"): a
// half-folded word would match neither spelling.
func foldMarks(w []byte) ([]byte, bool) {
	var buf [16]byte
	var folded [64]byte
	out := folded[:0] // written apart, so a word that does not fold stays as it was
	for i := 0; i < len(w); {
		if w[i] < 0x80 {
			out = append(out, w[i])
			i++
			continue
		}
		_, size := utf8.DecodeRune(w[i:])
		d := norm.NFD.Append(buf[:0], w[i:i+size]...)
		if len(d) < 2 || d[0] >= 0x80 {
			return w, false
		}
		for k := 1; k < len(d); {
			r, n := utf8.DecodeRune(d[k:])
			if !unicode.Is(unicode.Mn, r) {
				return w, false
			}
			k += n
		}
		out = append(out, d[0])
		i += size
	}
	// One byte a letter where each was two or more: it fits in w.
	return append(w[:0], out...), true
}

// sibilantEnd reports whether a stem ends in x, sh, tch, rch, nch or zz.
func sibilantEnd(s []byte) bool {
	n := len(s)
	switch {
	case s[n-1] == 'x':
		return true
	case n >= 2 && s[n-1] == 'h' && s[n-2] == 's':
		return true
	case n >= 3 && s[n-1] == 'h' && s[n-2] == 'c':
		return s[n-3] == 't' || s[n-3] == 'r' || s[n-3] == 'n'
	case n >= 2 && s[n-1] == 'z' && s[n-2] == 'z':
		return true
	}
	return false
}

// acronymPlural reports an acronym's plural as typed: capitals and a
// small "s" ("IDs", "CPUs", "APIs", "VMs"), the word lower-cased with caps
// capitals, lastCap whether its last letter was one. The plural rules read
// the lower-cased word, in which "ids", "cpus" and "apis" keep their "s" (a
// word ending in "us" or "is" is no plural, three letters are too few to
// tell): a question about the IDs on its data lines was told the book
// never mentions "ids" beside its "ID". What is left is stemmed as any
// word, so a term still segments to itself.
func acronymPlural(word []byte, caps int, lastCap bool) bool {
	n := len(word)
	return caps >= 2 && caps == n-1 && !lastCap && word[n-1] == 's'
}

// pluralV1 is the plural rule the builtin embedder's features were fixed
// with (hash-ngram-v1, see EachTermV1), on an ASCII word: -ies → -y, -sses
// → -ss, else a final "s" after anything but s, u, i. Frozen: stored
// vectors depend on it.
func pluralV1(w []byte) []byte {
	if len(w) < 4 {
		return w
	}
	n := len(w)
	if w[n-1] != 's' {
		return w
	}
	switch a, b := w[n-3], w[n-2]; {
	case a == 'i' && b == 'e' && n > 4: // -ies
		w[n-3] = 'y'
		return w[:n-2]
	case w[n-4] == 's' && a == 's' && b == 'e': // -sses
		return w[:n-2]
	case b != 's' && b != 'u' && b != 'i':
		return w[:n-1]
	}
	return w
}

func isASCII[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// IsStopword reports terms that carry no topic: English function words and
// the words questions are phrased with ("what", "explain"), as Terms emits
// them (stemmed: "does" → "doe"), the pieces contractions and possessives
// leave ("s", "t", "ll"; "doesn" and the other negated auxiliaries of
// "doesn't", as NLTK's and Snowball's English lists have them, but not
// "won", also a word, nor the "m" of "I'm", also a variable: "an n by m
// array"), and Chinese particles and question words. A chunk
// sharing only these with a question is not about it, and a search for them
// visits every row. Personal pronouns other than "I", "we", "you" and
// "they" are kept: "Call me Ishmael" and "what did she say" hinge on them
// (a question's own "me" and "my" are still no key terms: IsAskerWord).
func IsStopword(t string) bool {
	_, ok := stopwords[t]
	return ok
}

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doe doing down during each few for from
further had has have having here how i if in into is it its
itself just more most no nor not now of off on once only or other our ours ourselve
ourselves out over own same should so some such than that the their theirs them themselve
themselves then there these they this those through to too under until up very was wa we were
what when where which while who whom why will with would you your yours yourself yourselve
yourselves tell explain describe give please
s t d ll re ve
don doesn didn isn aren wasn weren hasn haven hadn couldn wouldn shouldn mustn needn mightn shan ain
的 是 了 在 和 有 我 他 这 也 吗 呢 什么 哪 哪个 哪些 怎么 怎样 如何 为什么 多少 谁 几 为什`) {
		m[w] = struct{}{}
	}
	return m
}()

// IsAskerWord reports the words by which whoever asks a question refers to
// themself: "I", "me", "my", "myself" (as Terms emits them). In a
// question they never name what the book must be about — "warns me before
// one of my hard disks fails" asks about disks — so the answering
// pipeline leaves them out of a question's key terms. They are not stop
// words: in a book's text, and in a search for it, "me" and "my" can
// carry the meaning ("Call me Ishmael", "my.cnf"). Left out: "we" and
// "our", stop words already, and words that also name things once
// lower-cased and stemmed: "us" (US GAAP), "mine" ("mines", "text mining").
func IsAskerWord(t string) bool {
	switch t {
	case "i", "me", "my", "myself":
		return true
	}
	return false
}

// SentenceStart reports whether text before a token ends a sentence (or is
// only space and opening quotes, brackets or Markdown emphasis), so a
// capital there is grammar, not a name. Both checks of names use it: the
// question's names a book must mention (qa) and a statement's names its
// quote must hold (citation).
func SentenceStart(before string) bool {
	before = strings.TrimRight(before, " \t\n\"'“‘(`*")
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune(".!?:;。！？：；]", r)
}

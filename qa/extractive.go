package qa

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// Extractive answers without a model: it quotes the sentences of the
// context that best cover the question's terms. Every statement is a
// verbatim sentence citing its own chunk, so it always verifies; when no
// sentence covers enough of the question it says nothing, and the pipeline
// refuses.
type Extractive struct {
	terms       func(string) []string
	maxSentence int
	minCoverage float64 // IDF-weighted share of the question's terms a sentence must hold
	minTerms    int     // distinct question terms a sentence must hold (fewer if the question has fewer)
}

// NewExtractive segments with terms (analysis.Terms).
func NewExtractive(terms func(string) []string) *Extractive {
	return &Extractive{terms: terms, maxSentence: 3, minCoverage: 0.15, minTerms: 2}
}

// ExtractiveModel is the model name the extractive answerer reports.
const ExtractiveModel = "extractive"

type sentence struct {
	text  string
	chunk string
	rank  int
	terms map[string]bool
	score float64
}

// Answer picks up to three sentences. A sentence's score is the IDF-weighted
// share of the question's content terms it contains (weights from the
// context itself, so words every passage shares count little and a question
// term absent from all of them counts most), discounted by the rank of its
// passage and, for long sentences, by length.
func (e *Extractive) Answer(_ context.Context, question string, chunks []ContextChunk) (Draft, error) {
	d := Draft{Model: ExtractiveModel, Statements: []Statement{}}
	q := analysis.ContentTerms(e.terms(question))
	if len(q) == 0 {
		return d, nil
	}
	var sents []*sentence
	for _, c := range chunks {
		for _, s := range Sentences(c.Chunk.Text) {
			if utf8.RuneCountInString(s) < 12 || len(s) > 800 || leaderShare(s) > 0.2 || isCode(s) {
				continue
			}
			sents = append(sents, &sentence{text: s, chunk: c.Chunk.ID, rank: c.Rank, terms: analysis.TermSet(e.terms(s))})
		}
	}
	if len(sents) == 0 {
		return d, nil
	}
	weight := map[string]float64{}
	total := 0.0
	for _, t := range q {
		df := 0
		for _, s := range sents {
			if s.terms[t] {
				df++
			}
		}
		weight[t] = math.Log(1 + float64(len(sents))/float64(df+1))
		total += weight[t]
	}
	need := min(e.minTerms, len(q))
	for _, s := range sents {
		got, n := 0.0, 0
		for _, t := range q {
			if s.terms[t] {
				got += weight[t]
				n++
			}
		}
		cov := got / total
		if cov < e.minCoverage || n < need {
			continue
		}
		// Long runs (footnote blocks, flattened tables) hold many terms by
		// sheer size; past 250 bytes a sentence pays for its length.
		s.score = cov / (1 + 0.1*float64(s.rank-1)) / math.Sqrt(max(1, float64(len(s.text))/250))
	}
	sort.SliceStable(sents, func(i, j int) bool { return sents[i].score > sents[j].score })
	best := sents[0].score
	for _, s := range sents {
		if s.score <= 0 || s.score < 0.7*best || len(d.Statements) == e.maxSentence {
			break
		}
		d.Statements = append(d.Statements, Statement{
			Text:      strings.Join(strings.Fields(s.text), " "),
			Citations: []Claim{{ChunkID: s.chunk, Quote: s.text}},
		})
	}
	return d, nil
}

// Sentences splits text into sentences: after . ! ? followed by a space,
// after the CJK full stops 。！？ (with any closing quote or bracket), before
// bullets, and at blank lines that do not fall inside a sentence (PDF
// extraction leaves some there). Pieces are trimmed; empty ones dropped.
func Sentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next := i + size
		switch {
		case r == '。' || r == '！' || r == '？' || r == '；':
			for next < len(text) {
				c, sz := utf8.DecodeRuneInString(text[next:])
				if !strings.ContainsRune("”’」』）)\"", c) {
					break
				}
				next += sz
			}
			flush(next)
		case r == '.' || r == '!' || r == '?':
			j := next
			for j < len(text) {
				c, sz := utf8.DecodeRuneInString(text[j:])
				if !strings.ContainsRune("\"')]”’", c) {
					break
				}
				j += sz
			}
			if j == len(text) {
				flush(j)
			} else if c, _ := utf8.DecodeRuneInString(text[j:]); unicode.IsSpace(c) {
				flush(j)
				next = j
			}
		case r == '•' || r == '▪' || r == '◦' || r == '●':
			flush(i)
			start = next
		case r == '\n' && strings.HasPrefix(text[next:], "\n") && !continues(text[start:i], text[next+1:]):
			flush(i)
		}
		i = next
	}
	flush(len(text))
	return out
}

// continues reports whether a blank line sits inside a sentence: the text
// after it starts with a lower-case letter, or the text before it ends
// mid-phrase (a comma, or a lower-case letter not followed by a capital).
func continues(before, after string) bool {
	before = strings.TrimRight(before, " \t\n")
	after = strings.TrimLeft(after, " \t\n")
	if before == "" || after == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(before)
	first, _ := utf8.DecodeRuneInString(after)
	return unicode.IsLower(first) || last == ',' || (unicode.IsLower(last) && !unicode.IsUpper(first))
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

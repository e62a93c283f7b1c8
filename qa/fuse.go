package qa

import (
	"sort"

	"github.com/citebook/citebook"
)

// candidate is one chunk found for one query, with every score that ranked
// it on its way through the pipeline.
type candidate struct {
	// chunk is the hit's own chunk, in the retrieval's slice of hits (see
	// fuse), shared and never written: a copy per candidate was a fifth of
	// a search's bytes.
	chunk    *citebook.Chunk
	query    int
	vecScore float64
	vecRank  int     // 1-based, 0 when the vector side did not find it
	lexScore float64 // BM25
	lexRank  int     // 1-based, 0 when the lexical side did not find it
	own      float64 // the chunk's own fused evidence, before page aggregation
	fused    float64 // the score retrieval ranks by
	rerank   float64
	// rerankRank is the 1-based place after reranking, 0 when the
	// candidate was not among the passages reranked.
	rerankRank int
	// seenVec and seenLex are the ranks in the search of the whole scope,
	// which the trace reports (a book-routed search ranks in fewer books).
	seenVec, seenLex int
	// kept says the candidate passed the threshold (see threshold);
	// contents that it was dropped as a table of contents (isContents).
	kept, contents bool
	// titled says its heading path names a statement or phrase the
	// question names (see boost).
	titled bool
	// xScore is BM25 of the expanded query, when xFound (see fuse).
	xScore float64
	xFound bool
	// lex is a keyword hit's handle on the chunk's row in the lexical
	// index (zero when only the vectors found it), handed to the features'
	// reads of the index (ChunkTerms) so they skip its look-up by ID.
	lex citebook.RowRef
}

// Fusion weighs the two retrievers and says how a page's chunks pool their
// evidence. The weights depend on what the embedder is: the builtin one
// hashes words, so its vectors are a second, weaker lexical signal, and an
// equal-weight fusion of two lexical signals loses to BM25 alone; a
// semantic model finds paraphrases BM25 cannot and earns a larger share.
type Fusion struct {
	Lexical float64 `json:"lexical"` // weight of the normalised BM25 score of the question
	Vector  float64 `json:"vector"`  // weight of the normalised cosine
	// Expansion weighs BM25 of the question expanded with the books'
	// definitions (see expand), when they apply.
	Expansion float64 `json:"expansion"`
	// Page is the share of the other chunks' evidence a page (or, for books
	// without pages, a section) adds to its best chunk: the cited unit is a
	// page, and a statement whose header, rows and caption fall into three
	// chunks is found by their sum.
	Page float64 `json:"page"`
	// Repeat scales the score of a page's second and later chunks, so the
	// top of the ranking shows different pages before more of the same
	// one; 1 keeps chunks where their own evidence puts them.
	Repeat float64 `json:"repeat"`
	// Heading, Phrase and Proximity weigh the query features (see boost):
	// a phrase the question names (or a synonym of it) in the chunk's
	// headings, in its text, and the share of the question's adjacent
	// term pairs the chunk holds adjacent.
	Heading   float64 `json:"heading"`
	Phrase    float64 `json:"phrase"`
	Proximity float64 `json:"proximity"`
	// Section and Cover weigh the question's key terms by their IDF in
	// scope (see salient): their share named in the chunk's heading path
	// (innermost heading first) and their share its text holds, each term
	// once however often it repeats.
	Section float64 `json:"section"`
	Cover   float64 `json:"cover"`
	// Rewrite weighs BM25 of a model's keyword rewrites of the question
	// (see rewrite), each normalised by its best hit, a chunk taking its
	// best rewrite; it applies only when a Rewriter is configured, and 0
	// turns the rewrites off.
	Rewrite float64 `json:"rewrite"`
}

// Embedder kinds that select default fusion weights.
const (
	KindLexical  = "lexical"  // the builtin hashed embedder
	KindSemantic = "semantic" // a trained embedding model
)

// DefaultFusion returns the fusion tuned on the dev sets (books-dev,
// FinanceBench dev, CMRC 2018 trial; see the README) for an embedder kind.
// The builtin embedder's vectors earn no ranking weight: every share tried
// (0.05 to 0.5) ranked worse than BM25 alone on FinanceBench and books-dev,
// since they only re-weigh the words BM25 already matched; they still gate
// the threshold. A semantic model earns 0.3 (bge-small-en-v1.5 on books-dev:
// 0.5 and 0.7 ranked below BM25 alone, 0.3 above it; on FinanceBench 0.5 and
// 0.7 lifted page recall@1 but not @5). Page pooling is off:
// it lifted books-dev and lowered FinanceBench, whose short statement pages
// sit between long notes pages. A page's second and later chunks count half
// (Repeat 0.5), so the top five name more pages: with statements parsed as
// whole tables this lifted FinanceBench book-scope page recall@5 0.438 →
// 0.484 and books-dev recall@10 0.943 → 0.971, hit@1 unchanged.
//
// The semantic kind's weights were re-tuned with bge-small-en-v1.5 on
// FinanceBench dev (book scope and shared index; 13 settings of vector
// weight 0.3/0.5/0.7, Repeat 1/0.5, Heading 0.5–2.5, Proximity 0–0.6 and a
// vector depth of 40, see the README): Repeat 0.5 and Heading 1 took page
// recall@5 from 0.688 / 0.555 to 0.719 / 0.586, on both halves of the
// questions, and kept books-dev level. A model's cosine already ranks the
// statement a question names near the top, so the heading feature needs
// less weight than with hashed vectors (2.5 lowered both scopes). Its
// Proximity is 0.6: of 12 settings around these (vector weight 0.2–0.5,
// Heading 0.5/1.5, Proximity 0/0.6, Repeat 1, Expansion 0/0.4) it was the
// best on books-dev (bge-small-en-v1.5: page recall@1/@5 level, MRR@10
// 0.839 → 0.854), left CMRC (bge-small-zh-v1.5) unchanged, and checked on
// FinanceBench dev lifted book-scope page recall@5 0.742 → 0.758, shared
// level (0.594), with tables' header rows indexed (README, 2026-12-01).
//
// The query features read the text, not the vectors: with the builtin
// embedder a page whose headings name the statement the question names (or
// implies by a line item, see DefaultStatements) gains 1.5 (1 with a model,
// above) — the page is that statement, while BM25 of a question like "did
// gross margin improve?" finds the notes that discuss margins (FinanceBench
// book scope page recall@5 at depth 80: heading 0 → 0.5 → 1.0 → 1.5 gave
// 0.586 → 0.664 → 0.695 → 0.727; shared 0.555 from 0.5 up); the share of
// the question's adjacent term pairs a chunk holds adjacent adds up to 0.3,
// 0.6 with a model (books-dev page recall@1 0.714 → 0.743). An exact vocabulary phrase in
// the text (Phrase) lowered recall@1 and stays off.
//
// Cover 0.15 (builtin embedder; see salient) was chosen rotating over
// books-dev's three books: on a grid of Cover 0–0.3 and Section 0–0.3,
// the setting best on two books (page MRR@10) was scored on the third;
// with Section at 0, no book ranked worse held out and lshort-zh-cn rose
// 0.860 → 0.875 (all: page recall@1 0.743 → 0.771, CMRC shared hit@1
// 0.976 → 0.978, FinanceBench unchanged). More weight loses first places to chunks that
// hold the question's words in one sentence but answer another question
// (Cover 0.3: 0.743). Section stays off: 0.3 lifted books-dev
// recall@10 0.971 → 1.000 but cost FinanceBench shared-index page
// recall@5 0.555 → 0.539, whose headings are statement titles the
// Heading feature already reads. The semantic kind keeps both off: not
// measured with a model.
func DefaultFusion(kind string) Fusion {
	if kind == KindLexical {
		return Fusion{Lexical: 1, Vector: 0, Expansion: 0.2, Page: 0, Repeat: 0.5, Heading: 1.5, Proximity: 0.3,
			Section: 0, Cover: 0.15, Rewrite: defaultRewriteWeight}
	}
	return Fusion{Lexical: 0.7, Vector: 0.3, Expansion: 0.2, Page: 0, Repeat: 0.5, Heading: 1, Proximity: 0.6,
		Rewrite: defaultRewriteWeight}
}

// EmbedderKind tells the builtin embedder from a model by its version.
func EmbedderKind(v citebook.EmbeddingVersion) string {
	if v.Provider == "builtin" {
		return KindLexical
	}
	return KindSemantic
}

// fuse merges the two rankings by a convex combination of normalised
// scores (Bruch et al., "An Analysis of Fusion Functions for Hybrid
// Retrieval", 2023): BM25 divided by the best BM25 of the query (its
// theoretical minimum is 0), cosine min-max normalised over the retrieved
// list (its floor depends on the model: ~0 for the builtin embedder, ~0.7
// for e5). Unlike reciprocal rank fusion it keeps how far apart scores
// are, and with tuned weights it does not let a weak signal outvote a
// strong one. The chunks of one page then pool their evidence (see Fusion).
func fuse(query int, vec, lex, expanded []citebook.Hit, rewritten [][]citebook.Hit, w Fusion, qf *queryFeatures) []*candidate {
	// The candidates are allocated in blocks and found by ID in one map
	// sized for the hits: one allocation per candidate and the map's
	// growth were a twentieth of a search's CPU.
	size := len(vec) + len(lex) + len(expanded)
	if qf != nil {
		size += len(qf.titled)
	}
	byID := make(map[string]*candidate, size)
	out := make([]*candidate, 0, size)
	var block []candidate
	get := func(c *citebook.Chunk) *candidate {
		if x, ok := byID[c.ID]; ok {
			return x
		}
		if len(block) == cap(block) {
			block = make([]candidate, 0, max(16, size-len(out)))
		}
		block = append(block, candidate{chunk: c, query: query})
		x := &block[len(block)-1]
		byID[c.ID] = x
		out = append(out, x)
		return x
	}
	lo, hi := 0.0, 0.0
	for i, h := range vec {
		c := get(&vec[i].Chunk)
		c.vecRank, c.vecScore = i+1, h.Score
		if i == 0 || h.Score > hi {
			hi = max(hi, h.Score)
		}
		if i == 0 || h.Score < lo {
			lo = h.Score
		}
	}
	top := 0.0
	for i, h := range lex {
		c := get(&lex[i].Chunk)
		c.lexRank, c.lexScore, c.lex = i+1, h.Score, h.Ref
		top = max(top, h.Score)
	}
	if qf != nil {
		for i, h := range qf.titled {
			get(&qf.titled[i].Chunk).lex = h.Ref // candidates by their headings alone; boost scores them
		}
	}
	xtop := 0.0
	for i, h := range expanded {
		c := get(&expanded[i].Chunk)
		c.xScore, c.xFound, c.lex = h.Score, true, h.Ref
		xtop = max(xtop, h.Score)
	}
	var rw map[string]float64
	if len(rewritten) > 0 {
		rw = rewriteScores(rewritten, get)
	}
	for _, c := range out {
		c.own += w.Rewrite * rw[c.chunk.ID]
		if c.xFound && xtop > 0 {
			c.own += w.Expansion * c.xScore / xtop
		}
		if c.lexRank > 0 && top > 0 {
			c.own += w.Lexical * c.lexScore / top
		}
		if c.vecRank > 0 {
			v := 1.0
			if hi > lo {
				v = (c.vecScore - lo) / (hi - lo)
			}
			c.own += w.Vector * v
		}
		c.fused = c.own
	}
	boost(qf, out, w)
	if qf != nil {
		boostSalient(qf.salient, out, w)
	}
	pool(out, w)
	for _, c := range out {
		c.seenVec, c.seenLex = c.vecRank, c.lexRank
	}
	sortCandidates(out)
	return out
}

// sortCandidates orders by fused score, then cosine, then chunk ID.
func sortCandidates(out []*candidate) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].fused != out[j].fused {
			return out[i].fused > out[j].fused
		}
		if out[i].vecScore != out[j].vecScore {
			return out[i].vecScore > out[j].vecScore
		}
		return out[i].chunk.ID < out[j].chunk.ID
	})
}

// unit is what a chunk is cited as: its page, or its section in books
// without pages.
type unit struct {
	book, parent string
	page         int
}

func unitOf(c *citebook.Chunk) unit {
	if c.PageStart > 0 {
		return unit{book: c.BookID, page: c.PageStart}
	}
	return unit{book: c.BookID, parent: c.ParentID}
}

// pool gives each unit's best chunk the unit's evidence — its own score plus
// w.Page times the others' — and scales the others by w.Repeat.
func pool(cands []*candidate, w Fusion) {
	type pooled struct {
		best *candidate
		sum  float64
	}
	at := make(map[unit]int, len(cands))
	units := make([]pooled, 0, len(cands))
	of := make([]int, len(cands)) // each candidate's index in units
	for ci, c := range cands {
		u := unitOf(c.chunk)
		i, ok := at[u]
		if !ok {
			i = len(units)
			at[u] = i
			units = append(units, pooled{best: c})
		}
		of[ci] = i
		p := &units[i]
		p.sum += c.own
		if b := p.best; c.own > b.own || c.own == b.own && c.chunk.ID < b.chunk.ID {
			p.best = c
		}
	}
	for ci, c := range cands {
		p := units[of[ci]]
		if p.best == c {
			c.fused = c.own + w.Page*(p.sum-c.own)
		} else {
			c.fused = c.own * w.Repeat
		}
	}
}

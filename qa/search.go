package qa

import (
	"context"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
)

// found is retrieval's outcome: the filter it ran under, the queries, every
// candidate fused (for the trace) and the survivors of the threshold per
// query, best first.
type found struct {
	filter  citebook.Filter
	library citebook.Filter // everything the principal may read, before narrowing to the request's books
	// question is the question as searched and assessed: as asked, less
	// the names of the books searched (Trace.BookNames).
	question    string
	namesPerson bool // the question as asked names a person (namesSomeone)
	queries     []string
	all         []*candidate
	groups      [][]*candidate
}

// find runs the retrieval steps shared by Search and Ask: access filter,
// query planning, embedding, hybrid retrieval, fusion and thresholding.
func (p *Pipeline) find(ctx context.Context, pr citebook.Principal, req Request, tr *Trace, sw *stopwatch) (*found, error) {
	if err := Validate(&req); err != nil {
		return nil, err
	}
	if p.deps.Begin != nil {
		var err error
		if ctx, err = p.deps.Begin(ctx); err != nil {
			return nil, err
		}
	}
	q := req.Question
	tr.Question = q
	f, err := p.deps.Access.Filter(ctx, pr)
	if err != nil {
		return nil, err
	}
	lib := f
	f = acl.Narrow(f, req.BookIDs)
	sw.lap("acl")
	if err := p.checkEmbedding(ctx); err != nil {
		return nil, err
	}
	fd := &found{filter: f, library: lib, namesPerson: namesSomeone(req.Question)}
	// A question in the script the books do not print is searched, routed
	// and answered in theirs; the trace keeps it as asked.
	q, tr.Respelled = p.rescript(ctx, q, f)
	if fd.question, tr.BookNames, err = p.bookNames(ctx, q, f); err != nil {
		return nil, err
	}
	var respelled []string
	fd.question, respelled = p.respell(ctx, fd.question, f)
	tr.Respelled = append(tr.Respelled, respelled...)
	searchReq := req
	searchReq.Question = fd.question
	fd.queries = p.queries(ctx, searchReq)
	tr.SubQueries = fd.queries
	sw.lap("plan")
	if len(f.Books) == 0 {
		fd.groups = make([][]*candidate, len(fd.queries))
		return fd, nil
	}
	rewrites := p.rewrite(ctx, q, tr)
	sw.lap("rewrite")
	if tr.Books, tr.Period, err = p.route(ctx, q, f); err != nil {
		return nil, err
	}
	defs, err := p.scopeDefinitions(ctx, f)
	if err != nil {
		return nil, err
	}
	searched := make([]string, len(fd.queries))
	forms := make([]map[string][]string, len(fd.queries))
	for i, query := range fd.queries {
		searched[i] = expand(query, defs, p.thesaurus, p.pageKinds)
		if searched[i] != query {
			tr.Expanded = searched
		}
		if forms[i] = p.wordForms(ctx, query, f); forms[i] != nil {
			tr.Forms = forms
		}
	}
	sw.lap("route")
	vecs, err := p.embed(ctx, searched)
	if err != nil {
		return nil, err
	}
	sw.lap("embed")
	// From here on retrieval is CPU only (a remote embedder or model is
	// done with), so it waits for its turn: see Options.Concurrency.
	if p.turns != nil { // nil only in a Pipeline not made by NewPipeline
		select {
		case p.turns <- struct{}{}:
			defer func() { <-p.turns }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	sw.lap("queue")
	// The vector side keeps its depth: with the builtin embedder it only
	// gates the threshold, and 80 cosines above the minimum let off-topic
	// questions through (FinanceBench refusal accuracy 0.950 → 0.817).
	n := max(p.opts.OverFetch*p.k(req), p.opts.VectorDepth)
	nl := max(n, p.opts.Depth)
	min := p.minScore(req)
	small := false
	if p.deps.Stats != nil {
		if _, size, err := p.deps.Stats.DocFreq(ctx, nil, f); err == nil && size <= n {
			small = true
		}
	}
	for i, query := range fd.queries {
		qf := p.queryFeatures(query)
		weights := p.termWeights(ctx, query, f)
		if w := p.opts.Fusion; w.Section != 0 || w.Cover != 0 {
			qf.salient = newSalient(query, weights, p.deps.Terms, p.deps.ChunkTerms)
		}
		if qf.titleQuery != "" && p.opts.Fusion.Heading > 0 {
			tr.TitleQueries = append(tr.TitleQueries, qf.titleQuery)
		}
		var rw []string
		if i == 0 {
			rw = rewrites // of the question as asked, not of a sub-query
		}
		cands, err := p.search(ctx, sw, i, query, forms[i], searched[i], rw, vecs[i], f, lib, n, nl, &qf)
		if err != nil {
			return nil, err
		}
		if rf, ok := routedFilter(f, tr.Books); ok {
			routed, err := p.search(ctx, sw, i, query, forms[i], searched[i], rw, vecs[i], rf, lib, n, nl, &qf)
			if err != nil {
				return nil, err
			}
			cands = merge(cands, routed, tr.Books, p.opts.RouteBonus)
		}
		fd.all = append(fd.all, cands...)
		sw.lap("fuse")
		kept, _ := p.threshold(query, cands, min, small, weights)
		for _, c := range kept {
			c.kept = true
		}
		fd.groups = append(fd.groups, kept)
		sw.lap("threshold")
	}
	return fd, nil
}

// search retrieves one query inside f and fuses the rankings: the vector
// search of the (expanded) query, BM25 of the question as asked, and, when
// the books' definitions expanded it, BM25 of the expanded query as a third,
// lighter signal (spelling out "APT" as "advanced packaging tool" adds common
// words that must not outweigh the question's own), and BM25 of each model
// rewrite, inside the same filter. Every BM25 search is scored with the
// statistics of lib, the reader's library (LexicalSearcher).
func (p *Pipeline) search(ctx context.Context, sw *stopwatch, qi int, query string, forms map[string][]string, expanded string, rewrites []string, vec []float32, f, lib citebook.Filter, n, nl int, qf *queryFeatures) ([]*candidate, error) {
	vh, lh, err := p.retrieve(ctx, query, forms, vec, f, lib, n, nl)
	if err != nil {
		return nil, err
	}
	var xh []citebook.Hit
	if expanded != query {
		if xh, err = p.deps.Lexical.Search(ctx, expanded, f, lib, nl); err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "keyword search failed")
		}
		xh = keepMatching(xh, &f)
	}
	var th []citebook.Hit
	qf.titled = nil
	if qf.titleQuery != "" && p.opts.Fusion.Heading > 0 {
		if th, err = p.deps.Lexical.Search(ctx, qf.titleQuery, f, lib, nl); err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "keyword search failed")
		}
		qf.titled = keepMatching(th, &f)
	}
	rh, err := p.searchRewrites(ctx, rewrites, f, lib, nl)
	if err != nil {
		return nil, err
	}
	sw.lap("retrieve")
	out := fuse(qi, vh, lh, xh, rh, p.opts.Fusion, qf)
	sw.lap("fuse")
	return out, nil
}

// empty reports whether no query kept anything.
func (fd *found) empty() bool {
	for _, g := range fd.groups {
		if len(g) > 0 {
			return false
		}
	}
	return true
}

// traceHits lists every fused candidate with its scores; IDs and numbers
// only, so the trace carries no text.
func traceHits(all []*candidate) []TraceHit {
	out := make([]TraceHit, 0, len(all))
	for _, c := range all {
		out = append(out, TraceHit{
			ChunkID: c.chunk.ID, BookID: c.chunk.BookID, ParentID: c.chunk.ParentID, Page: c.chunk.PageStart,
			Query: c.query, VectorScore: c.vecScore, VectorRank: c.seenVec, LexRank: c.seenLex,
			Fused: c.fused, Rerank: c.rerank, RerankRank: c.rerankRank, Kept: c.kept,
		})
	}
	return out
}

// thresholdDrops lists the candidates the threshold dropped, query by
// query in fused order, for Ask's trace. Search's trace is thrown away, so
// find leaves this list to Ask (it was a twentieth of a search's allocations).
func thresholdDrops(all []*candidate) []Dropped {
	n := 0
	for _, c := range all {
		if !c.kept {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Dropped, 0, n)
	for _, c := range all {
		switch {
		case c.contents:
			out = append(out, Dropped{ChunkID: c.chunk.ID, Reason: "contents"})
		case !c.kept:
			out = append(out, Dropped{ChunkID: c.chunk.ID, Reason: "below_threshold"})
		}
	}
	return out
}

// Search is retrieval without answering, for callers that bring their own
// model ("retrieval as a tool"): per query, the chunks that passed the
// threshold, best first, at most k, scored by fused rank.
func (p *Pipeline) Search(ctx context.Context, pr citebook.Principal, req Request) ([]SearchResult, error) {
	var tr Trace
	sw := newStopwatch(&tr)
	fd, err := p.find(ctx, pr, req, &tr, sw)
	if err != nil {
		return nil, err
	}
	k := p.k(req)
	out := make([]SearchResult, len(fd.queries))
	for i, q := range fd.queries {
		out[i] = SearchResult{Query: q, Hits: make([]citebook.Hit, 0, min(k, len(fd.groups[i])))}
		for _, c := range fd.groups[i] {
			if len(out[i].Hits) == k {
				break
			}
			out[i].Hits = append(out[i].Hits, citebook.Hit{Chunk: *c.chunk, Score: c.fused})
		}
		if p.deps.Reranker == nil {
			out[i].Hits = p.evidenceHits(ctx, q, fd, out[i].Hits)
		}
	}
	return out, nil
}

// evidenceHits orders a query's hits as the builtin reranker orders an
// answer's context (evidenceOrder), so the first result is the one an
// answer would quote; each keeps its fused score.
func (p *Pipeline) evidenceHits(ctx context.Context, query string, fd *found, hits []citebook.Hit) []citebook.Hit {
	if len(hits) < 2 {
		return hits
	}
	keys, _ := p.keyTerms(ctx, query, fd.namesPerson, fd.library, fd.filter)
	weights := make(map[string]float64, len(keys))
	for _, k := range keys {
		weights[k.text] = k.weight
	}
	// Each hit carries its fused score as a share of the first's, as an
	// answer's context does (lead): without it a hit retrieval put far
	// below the first moved above it here on a few more words, where the
	// answer kept quoting the first.
	cs := make([]ContextChunk, len(hits))
	for i, h := range hits {
		cs[i] = ContextChunk{Chunk: h.Chunk, Rank: i + 1, Retrieved: i + 1, Primary: true, Lead: lead(h.Score, hits[0].Score)}
	}
	cs = p.evidence.evidenceOrder(query, cs, Evidence{Weights: weights, Aliases: p.thesaurus.aliases(query)}, nil)
	out := make([]citebook.Hit, len(cs))
	for i, c := range cs {
		out[i] = hits[c.Rank-1]
	}
	return out
}

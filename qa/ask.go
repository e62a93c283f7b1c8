package qa

import (
	"context"
	"slices"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
)

// Ask answers a question from the books pr may read. Every statement of the
// answer carries a verified citation; when none survives verification, or
// nothing relevant is found, the answer is a refusal. onDelta, when not
// nil, receives the verified answer text as it is released.
func (p *Pipeline) Ask(ctx context.Context, pr citebook.Principal, req Request, onDelta func(string)) (*Answer, error) {
	ans := &Answer{Citations: []citebook.Citation{}}
	tr := &ans.Trace
	sw := newStopwatch(tr)
	fd, err := p.find(ctx, pr, req, tr, sw)
	if err != nil {
		return nil, err
	}
	def := whatIsAsked(fd.question)
	p.rescueDefinition(ctx, def, fd)
	tr.Dropped = thresholdDrops(fd.all)
	defer func() { tr.Retrieved = traceHits(fd.all) }()
	if fd.empty() {
		tr.NothingFound = true
		tr.Answerability = Answerability{Code: CodeNothingRelevant, Reason: "no passage passed the relevance bar"}
		ans.Refused = true
		ans.Answer = p.opts.NothingMessage
		emit(onDelta, ans.Answer)
		return ans, nil
	}

	k := p.k(req)
	kept, dropped := dedupe(interleave(fd.groups), p.opts.Neighbours)
	tr.Dropped = append(tr.Dropped, dropped...)
	kept = def.first(kept)
	if pool := p.opts.RerankPool * k; len(kept) > pool {
		for _, c := range kept[pool:] {
			tr.Dropped = append(tr.Dropped, Dropped{ChunkID: c.chunk.ID, Reason: "below_k"})
		}
		kept = kept[:pool]
	}
	sw.lap("dedupe")
	passages := p.expand(ctx, kept, fd.filter)
	sw.lap("expand")
	passages = p.rerank(ctx, tr, tr.Question, passages)
	sw.lap("rerank")
	chunks, dropped, tokens := p.assemble(passages, k, p.opts.ContextTokens)
	tr.Dropped = append(tr.Dropped, dropped...)
	tr.ContextTokens = tokens
	titles, err := p.titles(ctx, chunks)
	if err != nil {
		return nil, err
	}
	inContext := make(map[string]citebook.Chunk, len(chunks))
	tr.Context = make([]string, len(chunks))
	for i := range chunks {
		chunks[i].BookTitle = titles[chunks[i].Chunk.BookID]
		inContext[chunks[i].Chunk.ID] = chunks[i].Chunk
		tr.Context[i] = chunks[i].Chunk.ID
	}
	sw.lap("assemble")

	tr.Answerability = p.assess(ctx, fd.question, fd.namesPerson, fd.library, fd.filter, chunks)
	sw.lap("assess")
	if !tr.Answerability.Answerable && p.opts.AnswerCoverage > 0 {
		ans.Refused = true
		ans.Answer = citation.RefusalMessage
		emit(onDelta, ans.Answer)
		return ans, nil
	}

	if p.deps.Reranker == nil {
		chunks = p.evidenceFirst(tr, fd.question, chunks, passages)
	}
	tr.Answerability.units = nil // the answer, and its trace, outlive the question

	draft, err := p.draft(ctx, p.deps.Answerer, tr, fd.question, chunks)
	tr.Guards.Attempts, tr.Guards.Retried, tr.Guards.FirstError = draft.Attempts, draft.Retried, draft.FirstError
	tr.Guards.ExampleEchoes = draft.ExampleEchoes
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// A model that fails, or replies with no usable JSON even when
		// constrained, must not reach the reader as an error or an answer:
		// the extractive answer stands in, or the question is refused.
		p.log.WarnContext(ctx, "answerer failed; falling back", "err", err)
		tr.Guards.ModelError = citebook.ErrorMessage(err)
		if p.deps.Fallback == nil {
			tr.Guards.Fallback = "refusal"
			tr.Answerability.Answerable = false
			tr.Answerability.Code, tr.Answerability.Reason = CodeModelFailed, "the language model gave no usable answer"
			ans.Refused, ans.Answer = true, citation.RefusalMessage
			emit(onDelta, ans.Answer)
			return ans, nil
		}
		tr.Guards.Fallback = "extractive"
		if draft, err = p.draft(ctx, p.deps.Fallback, tr, fd.question, chunks); err != nil {
			return nil, err
		}
	}
	tr.Model, tr.PromptTokens, tr.OutputTokens = draft.Model, draft.PromptTokens, draft.OutputTokens
	sw.lap("answer")

	known := p.readable(ctx, draft.Statements, inContext, fd.filter)
	res := citation.Verify(draft.Statements, inContext, func(id string) bool { return known[id] }, titles,
		citation.SupportCheck{Content: p.contentTerms})
	tr.Statements, tr.Unsupported, tr.NotSupported = res.Total, res.Unsupported, res.NotSupported
	tr.Rejected, tr.Snapped = res.Rejected, res.Snapped
	ans.Answer, ans.Refused, ans.Citations = res.Answer, res.Refused, res.Citations
	p.stillAnswers(&res, tr, inContext)
	if res.Refused && (res.Total > 0 || tr.Guards.ExampleEchoes > 0 || !p.opts.ModelMayRefuse) && p.deps.Fallback != nil && tr.Guards.Fallback == "" {
		// Nothing the model said survived verification, all it said was
		// the prompt's worked example, or it said nothing on a question
		// the answerability check judged answerable (a weak model's
		// failure to answer, not its judgment that the passages do not:
		// see Options.ModelMayRefuse): the extractive answer, verified by
		// construction, stands in for it. Its own statements pass the
		// same checks.
		tr.Guards.Fallback = "extractive"
		switch {
		case res.Total > 0:
			tr.Guards.ModelError = "no statement of the model's answer survived verification"
		case tr.Guards.ExampleEchoes > 0:
			tr.Guards.ModelError = "the model's answer only repeated the prompt's example"
		default:
			tr.Guards.ModelError = "the model gave no statement"
		}
		if fb, err := p.draft(ctx, p.deps.Fallback, tr, fd.question, chunks); err == nil && len(fb.Statements) > 0 {
			tr.Model = fb.Model
			res = citation.Verify(fb.Statements, inContext, nil, titles, citation.SupportCheck{Content: p.contentTerms})
			tr.Answerability.Answerable, tr.Answerability.Code, tr.Answerability.Reason = true, CodeAnswered, ""
			ans.Answer, ans.Refused, ans.Citations = res.Answer, res.Refused, res.Citations
			p.stillAnswers(&res, tr, inContext)
		}
	}
	if res.Refused {
		ans.Answer, ans.Refused, ans.Citations = citation.RefusalMessage, true, []citebook.Citation{}
	} else if lead := procedureLead(tr.Question, tr.Model, ans.Citations); lead != "" {
		// Its own paragraph: it introduces the quoted statements and is
		// not one of them.
		ans.Answer = lead + "\n\n" + ans.Answer
		res.Statements = append([]string{lead + "\n\n"}, res.Statements...)
	}
	citation.Place(ans.Citations, p.geometry(ctx, ans.Citations))
	sw.lap("verify")

	if len(ans.Citations) > 0 {
		ids := make([]string, 0, len(ans.Citations))
		seen := map[string]bool{}
		for _, c := range ans.Citations {
			if !seen[c.ChunkID] {
				seen[c.ChunkID] = true
				ids = append(ids, c.ChunkID)
			}
		}
		if err := p.deps.Library.IncrementHits(ctx, ids); err != nil {
			p.log.WarnContext(ctx, "cannot count citation hits", "err", err)
		}
	}
	if res.Refused {
		emit(onDelta, ans.Answer)
	} else {
		for i, s := range res.Statements {
			if i > 0 && !strings.HasSuffix(res.Statements[i-1], "\n") {
				s = " " + s
			}
			emit(onDelta, s)
		}
	}
	return ans, nil
}

// evidenceFirst is the builtin reranker's second step: once the
// answerability check has found the context answers, the context's
// passages are ordered by their evidence (evidenceOrder), and the trace's
// context and rerank ranks follow, so retrieval reports the order the
// answer is drawn from. The passages left out of the context keep their
// places.
func (p *Pipeline) evidenceFirst(tr *Trace, question string, chunks []ContextChunk, passages []*passage) []ContextChunk {
	// The answerability check segmented the context with the pipeline's
	// terms, which p.evidence segments with too (NewPipeline).
	out := p.evidence.evidenceOrder(question, chunks, Evidence{Weights: tr.Answerability.weights, Aliases: tr.Answerability.aliases}, tr.Answerability.units)
	byPrimary := make(map[string]*passage, len(passages))
	for _, x := range passages {
		byPrimary[x.primary.chunk.ID] = x
	}
	var moved []*passage
	var ranks []int
	for i := range out {
		tr.Context[i] = out[i].Chunk.ID
		if x, ok := byPrimary[out[i].Chunk.ID]; ok && out[i].Primary {
			moved = append(moved, x)
			ranks = append(ranks, x.primary.rerankRank)
		}
	}
	slices.Sort(ranks)
	for i, x := range moved {
		x.primary.rerankRank = ranks[i]
	}
	return out
}

func emit(onDelta func(string), s string) {
	if onDelta != nil {
		onDelta(s)
	}
}

// titles looks up the titles of the books in the context.
func (p *Pipeline) titles(ctx context.Context, chunks []ContextChunk) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range chunks {
		id := c.Chunk.BookID
		if _, ok := out[id]; ok {
			continue
		}
		b, err := p.deps.Library.Book(ctx, id)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read book %s", id)
		}
		out[id] = b.Title
	}
	return out, nil
}

// readable finds which cited IDs outside the context name chunks the
// principal may read. It only sharpens a rejection reason, and answers "no"
// for chunks outside the filter so a rejection never confirms that another
// tenant's or a denied chapter's chunk exists.
func (p *Pipeline) readable(ctx context.Context, sts []Statement, inContext map[string]citebook.Chunk, f citebook.Filter) map[string]bool {
	var ids []string
	for _, s := range sts {
		for _, c := range s.Citations {
			if _, ok := inContext[c.ChunkID]; !ok && c.ChunkID != "" {
				ids = append(ids, c.ChunkID)
			}
		}
	}
	known := map[string]bool{}
	if len(ids) == 0 {
		return known
	}
	got, err := p.deps.Vectors.Get(ctx, ids)
	if err != nil {
		p.log.WarnContext(ctx, "cannot look up cited chunks", "err", err)
		return known
	}
	for i := range got {
		if f.Match(&got[i]) {
			known[got[i].ID] = true
		}
	}
	return known
}

// geometry reads the word boxes of the cited chunks; without a source, or
// when it fails, citations go without boxes rather than the answer failing.
func (p *Pipeline) geometry(ctx context.Context, cits []citebook.Citation) map[string][]citebook.WordBox {
	if p.deps.Geometry == nil || len(cits) == 0 {
		return nil
	}
	ids := make([]string, 0, len(cits))
	for _, c := range cits {
		ids = append(ids, c.ChunkID)
	}
	g, err := p.deps.Geometry.Geometry(ctx, ids)
	if err != nil {
		p.log.WarnContext(ctx, "cannot read citation geometry", "err", err)
		return nil
	}
	return g
}

// draft runs an answerer, with the pipeline's key-term weights when it
// takes them: a weighing answerer reads the question as searched (its
// weights are that question's), a model the question as asked.
func (p *Pipeline) draft(ctx context.Context, a Answerer, tr *Trace, searched string, chunks []ContextChunk) (Draft, error) {
	if wa, ok := a.(WeightedAnswerer); ok && len(tr.Answerability.weights) > 0 {
		return wa.AnswerWeighted(ctx, searched, chunks, Evidence{
			Weights: tr.Answerability.weights, Aliases: tr.Answerability.aliases,
		})
	}
	return a.Answer(ctx, tr.Question, chunks)
}

package qa

import (
	"unicode"
)

// estimateTokens approximates a BPE count when no tokenizer is configured:
// about 4/3 tokens per Latin word and one per CJK character.
type estimateTokens struct{}

// Count estimates the tokens of s.
func (estimateTokens) Count(s string) int {
	words, cjk, inWord := 0, 0, false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			cjk++
			inWord = false
		case unicode.IsSpace(r):
			inWord = false
		case !inWord:
			words++
			inWord = true
		}
	}
	return cjk + (words*4+2)/3
}

// assemble takes passages in order until k are taken or the token budget is
// spent; the first passage is always taken so a long section still gets an
// answer. It returns the context, the dropped passages and the tokens used.
func (p *Pipeline) assemble(ps []*passage, k, budget int) (ctx []ContextChunk, dropped []Dropped, tokens int) {
	taken := 0
	for _, x := range ps {
		if taken == k {
			dropped = append(dropped, Dropped{ChunkID: x.primary.chunk.ID, Reason: "below_k"})
			continue
		}
		x.tokens = p.deps.Tokens.Count(x.text())
		if taken > 0 && tokens+x.tokens > budget {
			dropped = append(dropped, Dropped{ChunkID: x.primary.chunk.ID, Reason: "over_budget"})
			continue
		}
		taken++
		tokens += x.tokens
		for _, c := range x.chunks {
			ctx = append(ctx, ContextChunk{Chunk: c, Rank: taken, Retrieved: x.order, Primary: c.ID == x.primary.chunk.ID, Lead: x.lead})
		}
	}
	return ctx, dropped, tokens
}

package qa

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/lexical"
)

func TestParseStatements(t *testing.T) {
	want := []Statement{{Text: "R is a language.", Citations: []Claim{{ChunkID: "c1", Quote: "R is an integrated suite"}}}}
	tests := []struct {
		name  string
		reply string
		want  []Statement
		ok    bool
	}{
		{"bare", `{"statements":[{"text":"R is a language.","citations":[{"chunk_id":"c1","quote":"R is an integrated suite"}]}]}`, want, true},
		{"fenced with prose", "Here you go:\n```json\n{\"statements\":[{\"text\":\"R is a language.\",\"citations\":[{\"chunk_id\":\"c1\",\"quote\":\"R is an integrated suite\"}]}]}\n```\nHope it helps {sic}.", want, true},
		{"leading prose with braces", `Note {draft}: {"statements":[{"text":"R is a language.","citations":[{"id":" c1 ","quote":"R is an integrated suite"}]}]} done`, want, true},
		{"reasoning block first", `<think>maybe {"statements":[]} is right</think>{"statements":[{"text":"R is a language.","citations":[{"chunk":"c1","quote":"R is an integrated suite"}]}]}`, want, true},
		{"bare array", `[{"text":"R is a language.","citations":[{"chunk_id":"c1","quote":"R is an integrated suite"}]}]`, want, true},
		{"explicitly nothing", `{"statements":[]}`, []Statement{}, true},
		{"null statements", `{"statements":null}`, []Statement{}, true},
		{"LaTeX commands unescaped", `{"statements":[{"text":"Use \syntaxonly or \[ x \] \u00e9 \ud83d\ude00.","citations":[{"chunk_id":"c1","quote":"\usepackage{syntonly} \\ \newline"}]}]}`,
			[]Statement{{Text: "Use \\syntaxonly or \\[ x \\] é 😀.", Citations: []Claim{{ChunkID: "c1", Quote: "\\usepackage{syntonly} \\ \newline"}}}}, true},
		{"prose only", `I cannot answer that from the passages.`, nil, false},
		{"other JSON", `{"answer":"R is a language"}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStatements(tt.reply)
			require.Equal(t, tt.ok, err == nil, "%v", err)
			if tt.ok {
				require.Equal(t, tt.want, got)
			}
		})
	}
}

func TestFuse(t *testing.T) {
	hit := func(id string, s float64) citebook.Hit { return citebook.Hit{Chunk: citebook.Chunk{ID: id}, Score: s} }
	vec := []citebook.Hit{hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)}
	lex := []citebook.Hit{hit("c", 12), hit("d", 10)}
	got := fuse(0, vec, lex, nil, nil, Fusion{Lexical: 0.6, Vector: 0.4, Repeat: 1}, nil)
	ids := []string{}
	for _, c := range got {
		ids = append(ids, c.chunk.ID)
	}
	// Cosines min-max to a 1, b 0.5, c 0; BM25 over the best to c 1, d 10/12.
	// c: 0.6·1 = 0.6; d: 0.6·10/12 = 0.5; a: 0.4·1; b: 0.4·0.5.
	require.Equal(t, []string{"c", "d", "a", "b"}, ids)
	require.InDelta(t, 0.6, got[0].fused, 1e-12)
	require.InDelta(t, 0.5, got[1].fused, 1e-12)
	require.Equal(t, 3, got[0].vecRank)
	require.Equal(t, 1, got[0].lexRank)
	require.Equal(t, 0, got[1].vecRank)
	require.Equal(t, 0.0, got[1].vecScore)

	// With all weight on one side, fusion is that side's ranking.
	for _, tc := range []struct {
		w    Fusion
		want []string
	}{
		{Fusion{Lexical: 1, Repeat: 1}, []string{"c", "d"}},
		{Fusion{Vector: 1, Repeat: 1}, []string{"a", "b"}},
	} {
		got := fuse(0, vec, lex, nil, nil, tc.w, nil)
		require.Equal(t, tc.want, []string{got[0].chunk.ID, got[1].chunk.ID})
	}
}

// BM25 of the query as definitions expanded it is a third, lighter signal:
// it can lift a chunk the question's own words missed, never replace them.
// TestDefaultFusionByKind pins the weights each embedder kind was tuned to
// (README, Retrieval against BM25 alone): re-tuning one kind must not move
// the other's.
func TestDefaultFusionByKind(t *testing.T) {
	for _, tc := range []struct {
		version citebook.EmbeddingVersion
		want    Fusion
	}{
		{citebook.EmbeddingVersion{Provider: "builtin", Model: "hash", Dimension: 384},
			Fusion{Lexical: 1, Expansion: 0.2, Repeat: 0.5, Heading: 1.5, Proximity: 0.3, Cover: 0.15, Rewrite: 0.5}},
		{citebook.EmbeddingVersion{Provider: "openai", Model: "bge-small-en-v1.5", Dimension: 384},
			Fusion{Lexical: 0.7, Vector: 0.3, Expansion: 0.2, Repeat: 0.5, Heading: 1, Proximity: 0.6, Rewrite: 0.5}},
	} {
		require.Equal(t, tc.want, DefaultFusion(EmbedderKind(tc.version)), tc.version.Provider)
	}
}

func TestFuseExpanded(t *testing.T) {
	hit := func(id string, s float64) citebook.Hit { return citebook.Hit{Chunk: citebook.Chunk{ID: id}, Score: s} }
	lex := []citebook.Hit{hit("a", 10), hit("b", 6)}
	expanded := []citebook.Hit{hit("c", 20), hit("b", 10), hit("a", 5)}
	got := fuse(0, nil, lex, expanded, nil, Fusion{Lexical: 1, Expansion: 0.5, Repeat: 1}, nil)
	ids := []string{}
	for _, c := range got {
		ids = append(ids, c.chunk.ID)
	}
	// a: 1 + 0.5·0.25; b: 0.6 + 0.5·0.5; c: 0.5·1.
	require.Equal(t, []string{"a", "b", "c"}, ids)
	require.InDelta(t, 1.125, got[0].fused, 1e-12)
	require.Equal(t, 0, got[2].lexRank, "the expanded search does not rank as the question's BM25")
}

// The chunks of one page pool their evidence into the page's best chunk,
// and the page's other chunks step back so the next page is seen first.
func TestFusePoolsPages(t *testing.T) {
	hit := func(id string, page int, s float64) citebook.Hit {
		return citebook.Hit{Chunk: citebook.Chunk{ID: id, BookID: "b", PageStart: page, PageEnd: page}, Score: s}
	}
	// Page 7 has three moderate chunks (a statement split by the chunker),
	// page 3 one chunk that is a little better than each of them.
	lex := []citebook.Hit{hit("p3", 3, 10), hit("p7a", 7, 9), hit("p7b", 7, 8), hit("p7c", 7, 8), hit("p9", 9, 7)}
	got := fuse(0, nil, lex, nil, nil, Fusion{Lexical: 1, Page: 0.3, Repeat: 0.5}, nil)
	ids := []string{}
	for _, c := range got {
		ids = append(ids, c.chunk.ID)
	}
	require.Equal(t, []string{"p7a", "p3", "p9", "p7b", "p7c"}, ids)
	require.InDelta(t, 0.9+0.3*1.6, got[0].fused, 1e-12)
}

func TestDedupeDropsOverlappingPassages(t *testing.T) {
	c := func(id, parent string, ord int) *candidate {
		return &candidate{chunk: &citebook.Chunk{ID: id, ParentID: parent, Ordinal: ord}}
	}
	kept, dropped := dedupe(interleave([][]*candidate{
		{c("a10", "A", 10), c("a11", "A", 11), c("b1", "B", 1), c("a12", "A", 12)},
		{c("a11", "A", 11), c("c1", "C", 1), c("a9", "B", 9)},
	}), 1)
	var ids []string
	for _, k := range kept {
		ids = append(ids, k.chunk.ID)
	}
	// a11 is a neighbour of a10 in the same parent; a12 is not; a9 is in
	// another parent.
	require.Equal(t, []string{"a10", "c1", "b1", "a9", "a12"}, ids)
	require.Equal(t, []Dropped{{ChunkID: "a11", Reason: "duplicate_passage"}}, dropped)
}

func TestHTTPReranker(t *testing.T) {
	var seen rerankRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "Bearer k", r.Header.Get("Authorization"))
		require.NoError(t, json.NewDecoder(r.Body).Decode(&seen))
		if len(seen.Documents) == 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`))
	}))
	defer srv.Close()
	r := NewHTTPReranker(srv.URL+"/v1/rerank", "bge-reranker", "k", srv.Client())
	got, err := r.Rerank(context.Background(), "q", []string{"x", "y"})
	require.NoError(t, err)
	require.Equal(t, []float64{0.1, 0.9}, got)
	require.Equal(t, rerankRequest{Model: "bge-reranker", Query: "q", Documents: []string{"x", "y"}}, seen)
	_, err = r.Rerank(context.Background(), "q", []string{"x", "y", "z"})
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
}

func TestEstimateTokens(t *testing.T) {
	require.Equal(t, 0, estimateTokens{}.Count(""))
	require.Equal(t, 4, estimateTokens{}.Count("one two three"))
	require.Equal(t, 5, estimateTokens{}.Count("第一次使用"))
}

func TestExtractiveSkipsCodeAndLeaders(t *testing.T) {
	e := NewExtractive(analysis.Terms)
	chunk := func(id, text string, rank int) ContextChunk {
		return ContextChunk{Chunk: citebook.Chunk{ID: id, Text: text}, Rank: rank}
	}
	d, err := e.Answer(context.Background(), "How are lists concatenated with c()?", []ContextChunk{
		chunk("toc", "6.2.1 Concatenating lists . . . . . . . . . . . . . . 30", 1),
		chunk("code", "> list.ABC <- c(list.A, list.B, list.C)", 1),
		chunk("prose", "When the concatenation function c() is given list arguments, the result is an object of mode list also.", 2),
		chunk("other", "Vectors must have their values all of the same mode.", 3),
	})
	require.NoError(t, err)
	require.Len(t, d.Statements, 1)
	require.Equal(t, "prose", d.Statements[0].Citations[0].ChunkID)
	require.Equal(t, ExtractiveModel, d.Model)

	d, err = e.Answer(context.Background(), "what time is dinner today?", []ContextChunk{
		chunk("prose", "Time series are handled by the ts class, as we shall see.", 1),
		chunk("other", "Vectors must have their values all of the same mode.", 2),
	})
	require.NoError(t, err)
	require.Empty(t, d.Statements, "one shared term is no answer")
}

// TestThreshold runs with the term list (Terms) and with the allocation-free
// segmentation the server wires (EachTerm): both must decide alike.
func TestThreshold(t *testing.T) {
	for _, each := range []func(string, func([]byte)){nil, analysis.EachTerm} {
		t.Run(fmt.Sprintf("EachTerm=%v", each != nil), func(t *testing.T) {
			testThreshold(t, &Pipeline{deps: Deps{Terms: analysis.Terms, EachTerm: each}, opts: Options{}.withDefaults()})
		})
	}
}

func testThreshold(t *testing.T, p *Pipeline) {
	c := func(id, text string, cos float64, vr, lr int) *candidate {
		return &candidate{chunk: &citebook.Chunk{ID: id, Text: text}, vecScore: cos, vecRank: vr, lexRank: lr, seenVec: vr, seenLex: lr}
	}
	tests := []struct {
		name  string
		query string
		cand  *candidate
		keep  bool
	}{
		{"moderate cosine and two shared terms", "How do I change the length of an object?", c("a", "To change the length of a vector, assign to it", 0.3, 1, 0), true},
		{"moderate cosine, one shared term", "How do I change the length of an object?", c("b", "The length of time", 0.3, 1, 0), false},
		{"stopwords do not count", "what time is dinner today?", c("c", "What is the time series class?", 0.26, 1, 1), false},
		{"strong cosine alone", "How do I change the length of an object?", c("d", "Resizing vectors", 0.5, 1, 0), true},
		{"below the minimum", "How do I change the length of an object?", c("e", "change the length of an object", 0.1, 1, 0), false},
		{"top keyword hit holding most terms", "as.integer digits coercion", c("f", "> d <- as.integer(digits) coercion", 0, 0, 2), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, dropped := p.threshold(tt.query, []*candidate{tt.cand}, 0.2, false, nil)
			require.Equal(t, tt.keep, len(kept) == 1)
			require.Equal(t, !tt.keep, len(dropped) == 1)
		})
	}
	// cands come in fused order: a low keyword hit holding most terms is
	// kept when the fusion put it among the first, dropped behind three
	// passages it ranked higher.
	low := c("g", "> d <- as.integer(digits) coercion", 0, 0, 9)
	kept, _ := p.threshold("as.integer digits coercion", []*candidate{low}, 0.2, false, nil)
	require.Len(t, kept, 1, "low keyword hit fused first")
	ahead := []*candidate{c("x1", "nothing", 0, 0, 1), c("x2", "nothing", 0, 0, 2), c("x3", "nothing", 0, 0, 3), low}
	kept, _ = p.threshold("as.integer digits coercion", ahead, 0.2, false, nil)
	require.NotContains(t, kept, low, "low keyword hit")

	// A statement page whose heading the question names ("the cash flow
	// statement") holds few of its words in its rows: kept when the fusion
	// ranks it among the first, not when it only shares words, and not
	// behind three passages ranked higher.
	q := "What was the FY2018 capital expenditure amount, as shown in the cash flow statement?"
	stmt := func() *candidate {
		s := c("s", "(Millions) 2018 2017\nPurchases of property, plant and equipment (1,577) (1,373)", 0, 0, 44)
		s.titled = true
		return s
	}
	kept, _ = p.threshold(q, []*candidate{stmt()}, 0.2, false, nil)
	require.Len(t, kept, 1, "titled statement page fused first")
	untitled := stmt()
	untitled.titled = false
	kept, _ = p.threshold(q, []*candidate{untitled}, 0.2, false, nil)
	require.Empty(t, kept, "the same rows without the named title")
	routed := stmt()
	routed.seenLex = 0 // found by the search of the routed filing alone
	routed.lexRank = 5
	kept, _ = p.threshold(q, []*candidate{routed}, 0.2, false, nil)
	require.Len(t, kept, 1, "titled statement page of the routed filing")
	late := stmt()
	kept, _ = p.threshold(q, []*candidate{c("x1", "nothing", 0, 0, 1), c("x2", "nothing", 0, 0, 2), c("x3", "nothing", 0, 0, 3), late}, 0.2, false, nil)
	require.NotContains(t, kept, late, "titled but fused fourth")

	// A keyword hit fused above what the threshold kept, and holding as
	// much of the question, is kept with it: the context does not hold a
	// chunk of two shared words while the one naming the jail is dropped.
	jq := "Why was he locked up in jail during his first summer at the pond?"
	jail := c("jail", "near the end of the first summer I was seized and put into jail", 0, 0, 3)
	pond := c("pond", "the pond already calm as in a summer evening", 0.25, 4, 0)
	kept, dropped := p.threshold(jq, []*candidate{jail}, 0.2, false, nil)
	require.Empty(t, kept, "alone it holds too little of the question")
	require.Len(t, dropped, 1)
	kept, _ = p.threshold(jq, []*candidate{jail, pond}, 0.2, false, nil)
	require.Equal(t, []*candidate{jail, pond}, kept, "kept, in fused order, beside a weaker chunk kept")
	far := []*candidate{pond}
	for i := range p.opts.LexicalRank {
		far = append([]*candidate{c(fmt.Sprint("x", i), "nothing", 0, 0, 20+i)}, far...)
	}
	far = append(far[:p.opts.LexicalRank], append([]*candidate{jail}, far[p.opts.LexicalRank:]...)...)
	kept, _ = p.threshold(jq, far, 0.2, false, nil)
	require.Equal(t, []*candidate{pond}, kept, "not below the first LexicalRank places")

	// In a scope of a few chunks (one article) a top keyword hit sharing
	// enough terms is kept on any cosine; in a book it needs most terms.
	art := c("j", "乡里制是中国古代农村社会基层组织体系", 0.05, 1, 1)
	kept, _ = p.threshold("乡里制是什么样的组织？", []*candidate{art}, 0.2, true, nil)
	require.Len(t, kept, 1)
	kept, _ = p.threshold("乡里制是什么样的组织体系，由谁设立，官员有哪些？", []*candidate{art}, 0.2, false, nil)
	require.Empty(t, kept)

	// A raised minimum raises the strong bar with it: at 0.8 (an e5-like
	// model) a 0.76 off-topic cosine is dropped, and 0.9 no longer passes on
	// cosine alone (the strong bar is now 1.05) but needs shared terms.
	offTopic := c("h", "Revenue of the Consumer Health segment", 0.76, 1, 0)
	kept, _ = p.threshold("Who won the 2018 World Cup final?", []*candidate{offTopic}, 0.8, false, nil)
	require.Empty(t, kept)
	close := c("i", "Revenue of the Consumer Health segment", 0.9, 1, 0)
	kept, _ = p.threshold("Who won the 2018 World Cup final?", []*candidate{close}, 0.8, false, nil)
	require.Empty(t, kept, "above the minimum but sharing no terms")
	kept, _ = p.threshold("What was Consumer Health revenue?", []*candidate{close}, 0.8, false, nil)
	require.Len(t, kept, 1, "above the minimum and sharing terms")
	require.Equal(t, []int{0, 1, 2, 2, 2, 2, 2, 2, 2, 3, 4}, []int{needTerms(0), needTerms(1), needTerms(2), needTerms(3),
		needTerms(4), needTerms(5), needTerms(6), needTerms(7), needTerms(8), needTerms(9), needTerms(15)})
}

// TestThresholdWeighsRareTerms: the keyword rule weighs the query's terms
// by their rarity in scope, without question fillers. A top BM25 chunk that
// lacks only a word every chunk holds ("debian") and a filler ("actually")
// is kept; counted term by term it held 4 of 8 and was dropped.
func TestThresholdWeighsRareTerms(t *testing.T) {
	p := &Pipeline{deps: Deps{Terms: analysis.Terms}, opts: Options{}.withDefaults()}
	q := "On Debian, which shell actually runs a script that starts with #!/bin/sh?"
	top := &candidate{chunk: &citebook.Chunk{ID: "sh", Text: "Many system scripts may be interpreted by any POSIX shell. " +
		"The default non-interactive POSIX shell /bin/sh is a symlink pointing to /usr/bin/dash."}, lexRank: 1, seenLex: 1}
	kept, _ := p.threshold(q, []*candidate{top}, 0.2, false, nil)
	require.Empty(t, kept, "equal weights: 4 of 8 terms")
	p.deps.Stats = fixedStats{n: 800, df: map[string]int{"debian": 600, "shell": 120, "run": 80, "script": 90, "start": 40, "bin": 30, "sh": 25}}
	kept, _ = p.threshold(q, []*candidate{top}, 0.2, false, p.termWeights(context.Background(), q, citebook.Filter{}))
	require.Len(t, kept, 1, "weighted by rarity, the chunk holds most of the question")
	w := p.termWeights(context.Background(), q, citebook.Filter{})
	require.NotContains(t, w, "actually", "fillers carry no weight")
	require.Greater(t, w["sh"], w["debian"])
	// A scope too small for statistics weighs terms equally.
	p.deps.Stats = fixedStats{n: 3}
	require.Nil(t, p.termWeights(context.Background(), q, citebook.Filter{}))
}

// fixedStats reports fixed document frequencies over n chunks.
type fixedStats struct {
	n  int
	df map[string]int
}

func (s fixedStats) DocFreq(_ context.Context, terms []string, _ citebook.Filter) ([]int, int, error) {
	out := make([]int, len(terms))
	for i, t := range terms {
		out[i] = s.df[t]
	}
	return out, s.n, nil
}

// TestExtractiveRanksByRetrieval: a passage the reranker moved down keeps
// the small discount of its retrieval rank, and of two equally good
// passages the shorter is quoted, whatever their order in the context.
func TestExtractiveRanksByRetrieval(t *testing.T) {
	e := NewExtractive(analysis.Terms)
	q := "If I convert plain ASCII text files to UTF-8, will they take more space?"
	gold := ContextChunk{Chunk: citebook.Chunk{ID: "gold", Text: "When ASCII plain text data is converted to UTF-8 one, it has exactly the same content and size as the original ASCII one."}, Rank: 3, Retrieved: 1}
	near := ContextChunk{Chunk: citebook.Chunk{ID: "near", Text: "Old names with non-ASCII characters may be in legacy encodings. Please convert the text to UTF-8 with conversion tools."}, Rank: 1, Retrieved: 2}
	// The neighbour holds almost as much of the question (5.0 against 5.2).
	w := map[string]float64{"convert": 1, "plain": 1.2, "ascii": 1, "text": 1, "file": 1, "utf": 1, "8": 1, "take": 1, "space": 1}
	d, err := e.AnswerWeighted(context.Background(), q, []ContextChunk{near, gold}, Evidence{Weights: w})
	require.NoError(t, err)
	require.NotEmpty(t, d.Statements)
	require.Equal(t, "gold", d.Statements[0].Citations[0].ChunkID)
	gold.Retrieved = 0 // the reranked order alone
	d, err = e.AnswerWeighted(context.Background(), q, []ContextChunk{near, gold}, Evidence{Weights: w})
	require.NoError(t, err)
	require.Equal(t, "near", d.Statements[0].Citations[0].ChunkID)

	long := ContextChunk{Chunk: citebook.Chunk{ID: "long", Text: "The newcommand macro defines commands with arguments, as the next example of this section shows in full."}, Rank: 1}
	short := ContextChunk{Chunk: citebook.Chunk{ID: "short", Text: "The newcommand macro defines commands with arguments."}, Rank: 1}
	for _, order := range [][]ContextChunk{{long, short}, {short, long}} {
		d, err = e.Answer(context.Background(), "How does newcommand define commands with arguments?", order)
		require.NoError(t, err)
		require.Equal(t, "short", d.Statements[0].Citations[0].ChunkID)
	}
}

func TestOpenModelRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  ModelConfig
	}{
		{"no model", ModelConfig{Provider: "openai"}},
		{"unknown provider", ModelConfig{Provider: "claude", Model: "m"}},
		// langchaingo would log.Fatal on this URL and end the process.
		{"unparsable ollama URL", ModelConfig{Provider: "ollama", Model: "m", URL: "http://[::1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenModel(tc.cfg)
			require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "%v", err)
		})
	}
}

// TestAnalyseMatchesTermLists: analyse reads a chunk in one pass over its
// segmentation; it must answer as the padded strings joined from term lists
// do, for each field asked for, on prose, tables, CJK, stop words and
// nothing.
func TestAnalyseMatchesTermLists(t *testing.T) {
	chunks := []citebook.Chunk{
		{HeadingPath: []string{"Consolidated Statements of Cash Flows", "Investing"}, Text: "Purchases of the property, plant and equipment (1,577) 2018 studies; flows investing"},
		{HeadingPath: []string{"第一章", "乡里制"}, Text: "乡里制是中国古代农村社会基层组织体系。FY2018 ﬁle ＰＤＦ file pdf"},
		{Text: "what is the of and"},
		{},
	}
	pairs := [][2]string{{"cash", "flow"}, {"flow", "investing"}, {"purchase", "property"}, {"property", "plant"},
		{"plant", "equipment"}, {"2018", "study"}, {"fy2018", "file"}, {"file", "pdf"}, {"pdf", "file"}, {"investing", "purchase"}, {"the", "of"}}
	// The same, reading the terms the lexical index kept for the chunks.
	x, err := lexical.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	defer x.Close()
	for i := range chunks {
		chunks[i].ID, chunks[i].Tenant, chunks[i].BookID = fmt.Sprint("c", i), "t", "b"
	}
	require.NoError(t, x.Upsert(context.Background(), chunks))
	for _, c := range chunks {
		headTerms := analysis.Terms(strings.Join(c.HeadingPath, " "))
		terms := analysis.Terms(c.Text)
		content := " " + strings.Join(contentRun(append(headTerms, terms...)), " ") + " "
		n := 0
		for _, p := range pairs {
			if strings.Contains(content, " "+p[0]+" "+p[1]+" ") {
				n++
			}
		}
		want := chunkTerms{
			head:  strings.Join(headTerms, ""),
			text:  " " + strings.Join(terms, " ") + " ",
			pairs: n,
		}
		for _, src := range []ChunkTerms{nil, x} {
			require.Equal(t, want, analyse(src, &c, citebook.RowRef{}, true, true, newPairScan(pairs)), c.Text)
			require.Equal(t, chunkTerms{pairs: n}, analyse(src, &c, citebook.RowRef{}, false, false, newPairScan(pairs)), c.Text)
			require.Equal(t, chunkTerms{head: want.head}, analyse(src, &c, citebook.RowRef{}, true, false, newPairScan(nil)), c.Text)
			require.Equal(t, chunkTerms{text: want.text}, analyse(src, &c, citebook.RowRef{}, false, true, newPairScan(nil)), c.Text)
		}
	}
	require.Equal(t, 7, analyse(nil, &chunks[0], citebook.RowRef{}, false, false, newPairScan(pairs)).pairs, "the first chunk's pairs")
	require.Equal(t, 7, analyse(x, &chunks[0], citebook.RowRef{}, false, false, newPairScan(pairs)).pairs, "the first chunk's pairs, as indexed")
}

// restoreCommands undoes what a JSON escape did to a LaTeX command the
// passages hold, and nothing else.
func TestRestoreCommands(t *testing.T) {
	book := []string{`例如，在数学环境下，\frac12和\frac{1}{2}的效果是一样的。`, `使用\newline或\newpage等命令。 {\small The small and \textbf{bold} Romans}`}
	for _, tc := range []struct{ name, in, want string }{
		{"form feed of \\frac", "在数学环境下，\frac12和\frac{1}{2}", `在数学环境下，\frac12和\frac{1}{2}`},
		{"tab of \\textbf", "The small and \textbf{bold}", `The small and \textbf{bold}`},
		{"line feed of \\newline", "使用\newline或\newpage", `使用\newline或\newpage`},
		{"a real line break stays", "first line\nnext line", "first line\nnext line"},
		{"a command the passages lack stays eaten", "\tableofcontents", "\tableofcontents"},
		{"a control character before no letter", "a\t1", "a\t1"},
		{"nothing to do", `already \frac12`, `already \frac12`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, restoreCommands(tc.in, book))
		})
	}
}

// Every model reply is read by decodeFirst, so a LaTeX command written
// unescaped into any of them (here the rewriter's queries) is kept, not the
// whole reply lost.
func TestDecodeFirstKeepsUnescapedLaTeX(t *testing.T) {
	got, ok := decodeFirst[queries]("```json\n{\"queries\":[\"\\syntaxonly 宏包\", \"\\[ 公式\"]}\n```", nil)
	require.True(t, ok)
	require.Equal(t, []string{`\syntaxonly 宏包`, `\[ 公式`}, got.Queries)
	// prose, a reasoning block and a bare array around the value
	n, ok := decodeFirst[[]int]("<think>[9]</think> I pick [2, 1].", nil)
	require.True(t, ok)
	require.Equal(t, []int{2, 1}, n)
}

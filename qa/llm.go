package qa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/citebook/citebook"
)

// ModelConfig selects a chat model: an OpenAI-compatible server (OpenAI,
// vLLM, llama.cpp, LM Studio, …) or Ollama.
type ModelConfig struct {
	Provider string // "openai" or "ollama"
	URL      string // OpenAI: base URL including /v1; Ollama: server URL
	Model    string
	Key      string // bearer key for OpenAI-compatible servers; may be empty
	Client   *http.Client
	// Timeout bounds one model call (0: DefaultLLMTimeout); a small
	// model on a CPU shared with other work may need more.
	Timeout time.Duration

	responseFormat *openai.ResponseFormat // output schema, for the constrained retry
}

// OpenModel builds the langchaingo client for cfg.
func OpenModel(cfg ModelConfig) (llms.Model, error) {
	if cfg.Model == "" {
		return nil, citebook.Errorf(citebook.EINVALID, "a model name is needed for the %s provider", cfg.Provider)
	}
	switch cfg.Provider {
	case "openai":
		key := cfg.Key
		if key == "" {
			key = "unused" // local servers need no key, the client insists on one
		}
		opts := []openai.Option{openai.WithModel(cfg.Model), openai.WithToken(key)}
		if cfg.URL != "" {
			opts = append(opts, openai.WithBaseURL(strings.TrimRight(cfg.URL, "/")))
		}
		if cfg.Client != nil {
			opts = append(opts, openai.WithHTTPClient(cfg.Client))
		}
		if cfg.responseFormat != nil {
			opts = append(opts, openai.WithResponseFormat(cfg.responseFormat))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "cannot configure the OpenAI-compatible model")
		}
		return m, nil
	case "ollama":
		opts := []ollama.Option{ollama.WithModel(cfg.Model)}
		if cfg.URL != "" {
			// langchaingo calls log.Fatal on a URL it cannot parse; a bad
			// setting must be an error, not the end of the process.
			if _, err := url.Parse(cfg.URL); err != nil {
				return nil, citebook.Wrap(err, citebook.EINVALID, "the Ollama URL %q is not a URL", cfg.URL)
			}
			opts = append(opts, ollama.WithServerURL(cfg.URL))
		}
		if cfg.Client != nil {
			opts = append(opts, ollama.WithHTTPClient(cfg.Client))
		}
		m, err := ollama.New(opts...)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "cannot configure the Ollama model")
		}
		return m, nil
	}
	return nil, citebook.Errorf(citebook.EINVALID, "unknown model provider %q (want openai or ollama)", cfg.Provider)
}

// answerSystem is the answerer's instruction, short enough for a 0.5B
// model to follow. The JSON shape lets citations be checked mechanically.
// Quotes are checked against the passage: a near-verbatim one is snapped
// to the book's text (citation.snap), but only when it follows one stretch
// of the passage closely, so the prompt asks for exactly what a small model
// gets wrong (Qwen 0.5B: its own answer or the question written as the
// quote, whole paragraphs, two sentences stitched into one).
const answerSystem = `You answer questions about a book using ONLY the passages given.
Reply with one JSON object and nothing else, in this shape:
{"statements":[{"text":"...","citations":[{"chunk_id":"...","quote":"..."}]}]}
- text: one short sentence that answers the question, in the language of the question.
- chunk_id: the chunk_id of the passage that says it.
- quote: ONE sentence copied character for character from that passage, at most 40 words. It is the passage's sentence, not your answer and not the question. Never a whole paragraph, never two sentences joined, no "...", no words changed.
- Every number and name in text must appear in its quote.
- If the passages do not answer the question, reply {"statements":[]}.`

// The few-shot example, as one user turn and the model's reply. Its text
// must never reach a reader: exampleEcho drops a statement repeating it.
const (
	exampleChunkID = "example-7"
	exampleText    = "Yes, it switches itself off when the water boils."
	exampleUser    = `Passages:

<passage chunk_id="` + exampleChunkID + `" book="Kettle manual" section="Use">
The kettle switches itself off when the water boils. Descale it every month to keep it working.
</passage>

Question: Does the kettle turn off by itself?`
	exampleReply = `{"statements":[{"text":"` + exampleText + `","citations":[{"chunk_id":"` + exampleChunkID + `","quote":"The kettle switches itself off when the water boils."}]}]}`
	exampleNone  = `Passages:

<passage chunk_id="example-8" book="Kettle manual" section="Care">
Descale the kettle every month to keep it working.
</passage>

Question: What colour is the kettle?`
)

// FormatContext renders the context the way the answerer's prompt shows it;
// each passage is tagged with its chunk ID so citations can name it.
func FormatContext(chunks []ContextChunk) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, `<passage chunk_id="%s" book="%s" section="%s"`, attr(c.Chunk.ID), attr(c.BookTitle),
			attr(citebook.HeadingString(c.Chunk.HeadingPath)))
		if c.Chunk.PageStart > 0 {
			fmt.Fprintf(&b, ` page="%d"`, c.Chunk.PageStart)
		}
		b.WriteString(">\n")
		b.WriteString(c.Chunk.Text)
		b.WriteString("\n</passage>\n\n")
	}
	return b.String()
}

// attr escapes a value for a passage tag, so a heading holding ">" or a
// quote cannot break the markup the model reads.
func attr(s string) string { return html.EscapeString(s) }

// LLMAnswerer drafts answers with a chat model.
type LLMAnswerer struct {
	model     llms.Model
	name      string
	maxTokens int
	// timeout bounds one model call: a small model on a loaded CPU can
	// crawl (grammar-constrained sampling at under one token a second was
	// seen), and the reader is better served by the fallback than by a
	// wait of minutes.
	timeout time.Duration
	// constrained builds a model whose output is held to the statements
	// JSON schema, with chunk_id limited to the context's IDs; nil when the
	// provider cannot constrain output (the retry then asks for JSON mode).
	constrained func(ids []string) (llms.Model, error)
}

// DefaultLLMTimeout bounds one model call unless Timeout says otherwise.
const DefaultLLMTimeout = 90 * time.Second

// NewLLMAnswerer uses model, reporting name in traces.
func NewLLMAnswerer(model llms.Model, name string) *LLMAnswerer {
	return &LLMAnswerer{model: model, name: name, maxTokens: 500, timeout: DefaultLLMTimeout}
}

// Timeout sets the bound on one model call; zero keeps the default. A slow
// local model (a CPU shared with other work) may need more.
func (a *LLMAnswerer) Timeout(d time.Duration) *LLMAnswerer {
	if d > 0 {
		a.timeout = d
	}
	return a
}

// Constrain lets the answerer retry a malformed reply with output held to
// the answer's JSON schema (OpenAI-compatible servers: OpenAI, vLLM,
// llama.cpp's llama-server, which turns the schema into a grammar).
func (a *LLMAnswerer) Constrain(cfg ModelConfig) *LLMAnswerer {
	if cfg.Provider != "openai" {
		return a
	}
	a.constrained = func(ids []string) (llms.Model, error) {
		c := cfg
		c.responseFormat = statementsSchema(ids)
		return OpenModel(c)
	}
	return a
}

// statementsSchema is the answer's JSON schema; chunk_id may only name a
// passage of the context.
func statementsSchema(ids []string) *openai.ResponseFormat {
	enum := make([]any, len(ids))
	for i, id := range ids {
		enum[i] = id
	}
	str := func() *openai.ResponseFormatJSONSchemaProperty {
		return &openai.ResponseFormatJSONSchemaProperty{Type: "string"}
	}
	claim := &openai.ResponseFormatJSONSchemaProperty{Type: "object", Required: []string{"chunk_id", "quote"},
		Properties: map[string]*openai.ResponseFormatJSONSchemaProperty{
			"chunk_id": {Type: "string", Enum: enum}, "quote": str()}}
	st := &openai.ResponseFormatJSONSchemaProperty{Type: "object", Required: []string{"text", "citations"},
		Properties: map[string]*openai.ResponseFormatJSONSchemaProperty{
			"text": str(), "citations": {Type: "array", Items: claim}}}
	return &openai.ResponseFormat{Type: "json_schema", JSONSchema: &openai.ResponseFormatJSONSchema{
		Name: "answer", Strict: true,
		Schema: &openai.ResponseFormatJSONSchemaProperty{Type: "object", Required: []string{"statements"},
			Properties: map[string]*openai.ResponseFormatJSONSchemaProperty{"statements": {Type: "array", Items: st}}},
	}}
}

// ErrMalformed marks a model reply that held no usable answer JSON even
// after the constrained retry; the pipeline falls back instead of failing.
var ErrMalformed = errors.New("the language model did not return the expected JSON")

// Answer asks the model for JSON statements (JSON mode, one worked example)
// and parses them leniently (code fences, prose around the JSON, reasoning
// blocks). A malformed or empty reply (not a failed or timed-out call,
// which a retry would only repeat) is retried once with output held to
// the schema; if that fails too, the error wraps ErrMalformed and the
// pipeline falls back. Statements repeating the prompt's example are
// dropped here, whatever their citations.
func (a *LLMAnswerer) Answer(ctx context.Context, question string, chunks []ContextChunk) (Draft, error) {
	d := Draft{Model: a.name, Statements: []Statement{}}
	if len(chunks) == 0 {
		return d, nil
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, answerSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, exampleUser),
		llms.TextParts(llms.ChatMessageTypeAI, exampleReply),
		llms.TextParts(llms.ChatMessageTypeHuman, exampleNone),
		llms.TextParts(llms.ChatMessageTypeAI, `{"statements":[]}`),
		llms.TextParts(llms.ChatMessageTypeHuman, "Passages:\n\n"+FormatContext(chunks)+"Question: "+question),
	}
	sts, err := a.generate(ctx, a.model, msgs, &d, llms.WithJSONMode())
	if errors.Is(err, ErrMalformed) && ctx.Err() == nil {
		d.Retried = true
		model := a.model
		var opts []llms.CallOption
		if a.constrained != nil {
			ids := make([]string, len(chunks))
			for i, c := range chunks {
				ids[i] = c.Chunk.ID
			}
			if m, cerr := a.constrained(ids); cerr == nil {
				model = m
			} else {
				opts = append(opts, llms.WithJSONMode())
			}
		} else {
			opts = append(opts, llms.WithJSONMode())
		}
		d.FirstError = citebook.ErrorMessage(err)
		sts, err = a.generate(ctx, model, msgs, &d, opts...)
	}
	if err != nil {
		return d, err
	}
	d.Statements, d.ExampleEchoes = dropExample(sts)
	restoreStatements(d.Statements, chunks)
	return d, nil
}

// generate runs one model call and parses its reply.
func (a *LLMAnswerer) generate(ctx context.Context, m llms.Model, msgs []llms.MessageContent, d *Draft, opts ...llms.CallOption) ([]Statement, error) {
	d.Attempts++
	ch, err := complete(ctx, m, msgs, a.maxTokens, a.timeout, opts...)
	if err != nil {
		return nil, err
	}
	d.PromptTokens += intInfo(ch.GenerationInfo, "PromptTokens")
	d.OutputTokens += intInfo(ch.GenerationInfo, "CompletionTokens")
	sts, err := ParseStatements(ch.Content)
	if err != nil {
		return nil, citebook.Wrap(ErrMalformed, citebook.EUNAVAILABLE, "the language model did not return the expected JSON")
	}
	return sts, nil
}

// dropExample removes statements that repeat the prompt's worked example
// (its text or its made-up chunk ID): a weak model copies the example when
// it has nothing to say, and that text must never read as an answer.
func dropExample(sts []Statement) ([]Statement, int) {
	out := sts[:0:0]
	n := 0
	ex := strings.ToLower(strings.Trim(exampleText, ". "))
	for _, st := range sts {
		echo := strings.Contains(strings.ToLower(st.Text), ex) || strings.Contains(strings.ToLower(st.Text), "switches itself off")
		for _, c := range st.Citations {
			if strings.HasPrefix(c.ChunkID, "example-") {
				echo = true
			}
		}
		if echo {
			n++
			continue
		}
		out = append(out, st)
	}
	return out, n
}

func intInfo(info map[string]any, key string) int {
	switch v := info[key].(type) {
	case int:
		return v
	case int32:
		return int(v)
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// wireClaim accepts the citation spellings models drift into.
type wireClaim struct {
	ChunkID string `json:"chunk_id"`
	ID      string `json:"id"`
	Chunk   string `json:"chunk"`
	Quote   string `json:"quote"`
}

type wireStatement struct {
	Text      string      `json:"text"`
	Citations []wireClaim `json:"citations"`
}

// ParseStatements extracts the statements from a model reply: the first
// JSON value that is {"statements": [...]} or a bare array of statements
// (see decodeFirst for where it is looked for).
func ParseStatements(reply string) ([]Statement, error) {
	var sts []Statement
	if _, ok := decodeFirst(reply, func(raw json.RawMessage) bool {
		var ok bool
		sts, ok = decodeStatements(raw)
		return ok
	}); ok {
		return sts, nil
	}
	return nil, citebook.Errorf(citebook.EUNAVAILABLE, "no statements JSON in the model reply")
}

func decodeStatements(raw json.RawMessage) ([]Statement, bool) {
	var wrapped map[string]json.RawMessage
	var list []wireStatement
	if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped["statements"] != nil {
		if err := json.Unmarshal(wrapped["statements"], &list); err != nil {
			return nil, false
		}
	} else if err := json.Unmarshal(raw, &list); err != nil || (len(list) > 0 && list[0].Text == "") {
		return nil, false
	}
	out := make([]Statement, 0, len(list))
	for _, w := range list {
		st := Statement{Text: w.Text, Citations: []Claim{}}
		for _, c := range w.Citations {
			id := c.ChunkID
			if id == "" {
				id = c.ID
			}
			if id == "" {
				id = c.Chunk
			}
			st.Citations = append(st.Citations, Claim{ChunkID: strings.TrimSpace(id), Quote: c.Quote})
		}
		out = append(out, st)
	}
	return out, true
}

// planSystem asks for sub-queries as JSON.
const planSystem = `Split the user's question into 1 to 5 short, self-contained search queries that together cover everything the question asks. Reply with JSON only: {"queries":["...","..."]}. Keep the language of the question.`

// LLMPlanner splits questions with a chat model.
type LLMPlanner struct {
	call *chatCall
	max  int
}

// NewLLMPlanner uses the model cfg names; one call is bounded by
// cfg.Timeout like every other model call.
func NewLLMPlanner(cfg ModelConfig) (*LLMPlanner, error) {
	c, err := newChatCall(cfg)
	if err != nil {
		return nil, err
	}
	return &LLMPlanner{call: c, max: 5}, nil
}

// queries is the reply the planner and the rewriter ask for.
type queries struct {
	Queries []string `json:"queries"`
}

// askQueries sends question under the system prompt and reads the first
// queries object in the reply that accept takes (nil: any); what names the
// reply in the error when there is none.
func (c *chatCall) askQueries(ctx context.Context, system, question string, maxTokens int, accept func(queries) bool, what string) ([]string, error) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, question),
	}
	text, err := c.reply(ctx, msgs, queriesSchema(), maxTokens)
	if err != nil {
		return nil, err
	}
	out, ok := decodeFirst(text, accept)
	if !ok {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "no %s JSON in the model's reply", what)
	}
	return out.Queries, nil
}

// SubQueries returns 1–5 sub-queries.
func (p *LLMPlanner) SubQueries(ctx context.Context, question string) ([]string, error) {
	qs, err := p.call.askQueries(ctx, planSystem, question, 300, func(q queries) bool { return len(q.Queries) > 0 }, "sub-queries")
	if err != nil {
		return nil, err
	}
	return qs[:min(len(qs), p.max)], nil
}

package qa

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"

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

// answerSystem is the answerer's instruction. The JSON shape lets citations
// be checked mechanically; quotes must be verbatim because they are.
const answerSystem = `You answer questions about books using ONLY the passages given to you.
Reply with JSON only, no other text, in exactly this shape:
{"statements":[{"text":"one sentence of the answer","citations":[{"chunk_id":"id of the passage","quote":"words copied exactly from that passage"}]}]}
Rules:
- Every statement cites at least one passage that supports it.
- A quote is copied verbatim, character for character, from the passage whose chunk_id you give: one sentence or phrase, at most 40 words. Never paraphrase inside a quote.
- Only use chunk_id values of the passages below.
- If the passages do not answer the question, reply {"statements":[]}.
- Write the statements in the language of the question.`

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
}

// NewLLMAnswerer uses model, reporting name in traces.
func NewLLMAnswerer(model llms.Model, name string) *LLMAnswerer {
	return &LLMAnswerer{model: model, name: name, maxTokens: 1500}
}

// Answer asks the model for JSON statements and parses them leniently
// (code fences, prose around the JSON, reasoning blocks). A reply that holds
// no statements is a draft without statements, which the pipeline refuses.
func (a *LLMAnswerer) Answer(ctx context.Context, question string, chunks []ContextChunk) (Draft, error) {
	d := Draft{Model: a.name, Statements: []Statement{}}
	if len(chunks) == 0 {
		return d, nil
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, answerSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, "Passages:\n\n"+FormatContext(chunks)+"Question: "+question),
	}
	resp, err := a.model.GenerateContent(ctx, msgs, llms.WithTemperature(0), llms.WithMaxTokens(a.maxTokens))
	if err != nil {
		return d, citebook.Wrap(err, citebook.EUNAVAILABLE, "the language model failed")
	}
	if len(resp.Choices) == 0 {
		return d, citebook.Errorf(citebook.EUNAVAILABLE, "the language model returned no answer")
	}
	ch := resp.Choices[0]
	d.PromptTokens, d.OutputTokens = intInfo(ch.GenerationInfo, "PromptTokens"), intInfo(ch.GenerationInfo, "CompletionTokens")
	sts, err := ParseStatements(ch.Content)
	if err != nil {
		return d, citebook.Wrap(err, citebook.EUNAVAILABLE, "the language model did not return the expected JSON")
	}
	d.Statements = sts
	return d, nil
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

var (
	thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fence      = regexp.MustCompile("(?s)```(?:json|JSON)?\\s*(.*?)```")
)

// ParseStatements extracts the statements from a model reply: the first
// JSON value that is {"statements": [...]} or a bare array of statements,
// looked for inside code fences first, then anywhere in the text.
func ParseStatements(reply string) ([]Statement, error) {
	reply = thinkBlock.ReplaceAllString(reply, "")
	var candidates []string
	for _, m := range fence.FindAllStringSubmatch(reply, -1) {
		candidates = append(candidates, m[1])
	}
	candidates = append(candidates, reply)
	for _, text := range candidates {
		for i := 0; i < len(text); i++ {
			if text[i] != '{' && text[i] != '[' {
				continue
			}
			var raw json.RawMessage
			if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&raw); err != nil {
				continue
			}
			if sts, ok := decodeStatements(raw); ok {
				return sts, nil
			}
		}
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
	model llms.Model
	max   int
}

// NewLLMPlanner uses model.
func NewLLMPlanner(model llms.Model) *LLMPlanner { return &LLMPlanner{model: model, max: 5} }

// SubQueries returns 1–5 sub-queries.
func (p *LLMPlanner) SubQueries(ctx context.Context, question string) ([]string, error) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, planSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, question),
	}
	resp, err := p.model.GenerateContent(ctx, msgs, llms.WithTemperature(0), llms.WithMaxTokens(300))
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "the language model failed to plan sub-queries")
	}
	if len(resp.Choices) == 0 {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "the language model returned no sub-queries")
	}
	text := thinkBlock.ReplaceAllString(resp.Choices[0].Content, "")
	if m := fence.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		var out struct {
			Queries []string `json:"queries"`
		}
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&out); err == nil && len(out.Queries) > 0 {
			if len(out.Queries) > p.max {
				out.Queries = out.Queries[:p.max]
			}
			return out.Queries, nil
		}
	}
	return nil, citebook.Errorf(citebook.EUNAVAILABLE, "no sub-queries JSON in the model reply")
}

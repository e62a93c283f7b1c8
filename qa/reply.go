package qa

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/citebook/citebook"
)

// How a model's reply is read, for every use of a chat model (answer,
// planner, reranker, rewriter): one bounded call, then the first JSON value
// of the text that has the expected shape, wherever the model put it.

var (
	thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fence      = regexp.MustCompile("(?s)```(?:json|JSON)?\\s*(.*?)```")
)

// complete runs one model call at temperature 0, bounded by timeout (0: by
// ctx alone), and returns its first choice. A failed or timed-out call is
// EUNAVAILABLE; an empty reply wraps ErrMalformed as well, since a retry
// with output held to a schema may get what the first reply lacked.
func complete(ctx context.Context, m llms.Model, msgs []llms.MessageContent, maxTokens int, timeout time.Duration, opts ...llms.CallOption) (*llms.ContentChoice, error) {
	opts = append(opts, llms.WithTemperature(0), llms.WithMaxTokens(maxTokens))
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := m.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "the language model failed")
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Content) == "" {
		return nil, citebook.Wrap(ErrMalformed, citebook.EUNAVAILABLE, "the language model returned an empty reply")
	}
	return resp.Choices[0], nil
}

// decodeFirst decodes the first JSON value of a model's reply that decodes
// as a T and that accept takes (nil: any): inside code fences first, then
// anywhere in the text (models wrap their JSON in prose), reasoning blocks
// removed. Last it tries the text with every backslash that starts no JSON
// escape kept as a backslash: a model quoting a LaTeX book writes
// "\syntaxonly" or "\[" into a JSON string unescaped, and Go rejects the
// whole value.
func decodeFirst[T any](text string, accept func(T) bool) (T, bool) {
	text = thinkBlock.ReplaceAllString(text, "")
	var candidates []string
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		candidates = append(candidates, m[1])
	}
	candidates = append(candidates, text)
	for _, c := range candidates {
		if fixed := escapeBackslashes(c); fixed != c {
			candidates = append(candidates, fixed)
		}
	}
	for _, c := range candidates {
		for i := 0; i < len(c); i++ {
			if c[i] != '{' && c[i] != '[' {
				continue
			}
			var v T
			if json.NewDecoder(strings.NewReader(c[i:])).Decode(&v) == nil && (accept == nil || accept(v)) {
				return v, true
			}
		}
	}
	var zero T
	return zero, false
}

// escapeBackslashes doubles every backslash that does not start a valid
// JSON escape (\" \\ \/ \b \f \n \r \t \uXXXX). A valid one is left as it
// is, though "\newcommand" then decodes as a line break and "ewcommand":
// restoreCommands puts such commands back where the context holds them.
func escapeBackslashes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && (strings.IndexByte(`"\\/bfnrt`, s[i+1]) >= 0 || (s[i+1] == 'u' && isHex4(s[i+2:]))) {
			b.WriteString(s[i : i+2])
			i++
			continue
		}
		b.WriteString(`\\`)
	}
	return b.String()
}

func isHex4(s string) bool {
	if len(s) < 4 {
		return false
	}
	for i := 0; i < 4; i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// escaped maps the control characters JSON escapes decode to back to the
// escape's letter.
var escaped = map[byte]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// restoreCommands puts back the LaTeX commands a JSON escape ate from a
// model's text. A model that writes "\frac", "\textbf" or "\newline" into a
// JSON string unescaped gets a form feed and "rac", a tab and "extbf", a
// line break and "ewline"; such a quote would never verify verbatim. A
// control character followed by letters is read as backslash, escape
// letter and letters wherever one of texts (the passages the model read)
// holds that command; elsewhere — a real line break before a word — it is
// left alone. It only ever restores a command the book holds, and the
// quote is then verified against its chunk like any other.
func restoreCommands(s string, texts []string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		e, ok := escaped[s[i]]
		if !ok {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		if j == i+1 {
			continue
		}
		cmd := `\` + string(e) + s[i+1:j]
		for _, t := range texts {
			if strings.Contains(t, cmd) {
				b.WriteString(s[last:i])
				b.WriteString(cmd[:2])
				last = i + 1
				break
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// restoreStatements applies restoreCommands to the text and quotes of
// statements, against the context's passages.
func restoreStatements(sts []Statement, chunks []ContextChunk) {
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Chunk.Text
	}
	for i := range sts {
		sts[i].Text = restoreCommands(sts[i].Text, texts)
		for j := range sts[i].Citations {
			sts[i].Citations[j].Quote = restoreCommands(sts[i].Citations[j].Quote, texts)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/eval"
)

// The eval command runs a JSONL dataset end to end: it indexes the book
// found in --corpus, asks through the server's pipeline and prints the
// summary contract.
func TestEvalCommandJSONL(t *testing.T) {
	dir := t.TempDir()
	guide, err := filepath.Abs("../../index/testdata/field-guide.md")
	require.NoError(t, err)
	books := filepath.Join(dir, "books")
	require.NoError(t, os.MkdirAll(books, 0o755))
	require.NoError(t, os.Symlink(guide, filepath.Join(books, "field-guide.md")))
	dataset := filepath.Join(dir, "questions.jsonl")
	require.NoError(t, writeJSONL(dataset, []eval.Question{
		{ID: "stand", Question: "Where should the hive stand sit on a rooftop?", Books: []string{"field-guide"},
			Answerable: true, Gold: eval.Gold{Evidence: []string{
				"the hive stand should sit above a load-bearing wall rather than the middle of the roof"}}},
		{ID: "worldcup", Question: "Who won the 2018 FIFA World Cup final?", Books: []string{"field-guide"}},
	}))
	out := filepath.Join(dir, "out")

	stdout, err := run(t, "eval", "--data", filepath.Join(dir, "data"), "--dataset", dataset, "--format", "jsonl",
		"--corpus", books, "--out", out, "--json")
	require.NoError(t, err)
	// run merges stderr, where progress goes, into the output.
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout[strings.Index(stdout, "{"):]), &s), stdout)
	for _, k := range []string{"questions", "recall_at_k", "mrr_at_10", "ndcg_at_10", "page_recall_at_k",
		"citation_page_accuracy", "citation_precision", "citation_recall", "refusal_accuracy",
		"answered_coverage", "latency_ms", "hit_rate", "context_duplication_rate", "tokens_per_question", "setup"} {
		require.Contains(t, s, k)
	}
	require.EqualValues(t, 2, s["questions"])
	require.EqualValues(t, 1, s["ranked_questions"], "the evidence sentence is found in one chunk")
	setup := s["setup"].(map[string]any)
	require.Equal(t, "book", setup["scope"])
	require.Equal(t, "embedded", setup["store"])
	require.Contains(t, setup["embedder"], "builtin")
	for _, f := range []string{eval.ResultsFile, eval.MarkdownFile, eval.HTMLFile} {
		_, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
	}

	_, err = run(t, "eval", "--data", filepath.Join(dir, "data"), "--dataset", dataset, "--format", "squad")
	require.ErrorContains(t, err, "unknown --format")
}

// writeJSONL writes a dataset in the form `eval --format jsonl` reads.
func writeJSONL(path string, qs []eval.Question) error {
	var b bytes.Buffer
	for i := range qs {
		if err := json.NewEncoder(&b).Encode(&qs[i]); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/eval"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
)

// evalFlags are the flags of `citebook eval`.
type evalFlags struct {
	cfg     *library.Config
	dataset string
	format  string
	corpus  string
	scope   string
	limit   int
	books   []string
	out     string
	json    bool
}

func newEvalCmd() *cobra.Command {
	f := &evalFlags{cfg: newConfig()}
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval, citations and refusals on a question set",
		Long: `Eval indexes the books a dataset needs into the library (--data; unchanged
books are skipped) and asks every question through the same pipeline the
server uses, then writes results.json, report.md and report.html to --out.

Formats: financebench (financebench_dev.jsonl; filings in --corpus/pdfs),
cmrc (SQuAD-style CMRC 2018 JSON; each article is written as a text file
into --out/books and indexed as a book) and jsonl (citebook's own format,
one question per line; books are --corpus/<book id>.pdf|.epub|.md|.txt).
--scope book searches only each question's books, --scope shared searches
every book of the dataset at once. --limit N keeps the first N answerable
questions (and the unanswerable ones about their books); --book ID keeps
only the questions about those books.

--json prints the summary: {"questions","recall_at_k":{"1","5","10"},
"mrr_at_10","ndcg_at_10","hit_rate","hit_at_k":{"1","5","10"},
"page_recall_at_k":{"1","5","10"},
"citation_page_accuracy","citation_precision","citation_recall",
"refusal_accuracy","answered_coverage","latency_ms":{"p50","p95"},
"context_duplication_rate","tokens_per_question","signals":{"fused",
"bm25_only","vectors_only": {"recall_at_k","page_recall_at_k","hit_at_k",
"mrr_at_10"}},"setup":{...,"fusion"}}. The signals rank the same retrieved
candidates by each retriever alone, so fusion is always measured against
BM25 alone in the same run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd, f) },
	}
	fs := cmd.Flags()
	addLibraryFlags(fs, f.cfg)
	addAnswerFlags(fs, f.cfg)
	fs.StringVar(&f.dataset, "dataset", "", "dataset file")
	fs.StringVar(&f.format, "format", "jsonl", "dataset format: financebench, cmrc or jsonl")
	fs.StringVar(&f.corpus, "corpus", "", "directory holding the dataset's documents (default: the dataset's directory)")
	fs.StringVar(&f.scope, "scope", eval.ScopeBook, "search scope: book (each question's own books) or shared (all books)")
	fs.IntVar(&f.limit, "limit", 0, "evaluate only the first N answerable questions (0: all)")
	fs.StringSliceVar(&f.books, "book", nil, "evaluate only the questions about these book IDs (repeatable)")
	fs.StringVar(&f.out, "out", "eval-out", "directory for the reports")
	fs.BoolVar(&f.json, "json", false, "print the summary as JSON")
	_ = cmd.MarkFlagRequired("dataset")
	return cmd
}

func runEval(cmd *cobra.Command, f *evalFlags) error {
	ctx := cmd.Context()
	corpus := f.corpus
	if corpus == "" {
		corpus = filepath.Dir(f.dataset)
	}
	var (
		ds  *eval.Dataset
		err error
	)
	switch f.format {
	case "financebench":
		ds, err = eval.LoadFinanceBench(f.dataset, corpus)
	case "cmrc":
		ds, err = eval.LoadCMRC(f.dataset, filepath.Join(f.out, "books"))
	case "jsonl":
		ds, err = eval.LoadJSONL(f.dataset, corpus)
	default:
		return citebook.Errorf(citebook.EINVALID, "unknown --format %q (financebench, cmrc or jsonl)", f.format)
	}
	if err != nil {
		return err
	}
	ds.OnlyBooks(f.books)
	ds.Limit(f.limit)

	a, p, err := library.OpenAnswering(ctx, *f.cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	errw := cmd.ErrOrStderr()
	h, err := eval.New(a.Builder, p, a.Meta, eval.Config{
		Scope:  f.scope,
		Terms:  analysis.Terms,
		Logger: a.Log,
		Setup: eval.Setup{Embedder: a.Embed.Version().String(), Store: f.cfg.Store, Answerer: f.cfg.Answerer(),
			RetrievalModel: f.cfg.RetrievalModel(),
			Fusion:         fmt.Sprintf("%s %+v", qa.EmbedderKind(a.Embed.Version()), p.Fusion()),
			MinScore:       p.Options().MinScore, AnswerCoverage: p.Options().AnswerCoverage,
			AnswerCoverageCJK: p.Options().AnswerCoverageCJK},
		Progress: func(done, total int) {
			if done == total || done%25 == 0 {
				fmt.Fprintf(errw, "eval: %d/%d questions\n", done, total)
			}
		},
	})
	if err != nil {
		return err
	}
	res, err := h.Run(ctx, ds)
	if err != nil {
		return err
	}
	if err := eval.WriteReport(f.out, res); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, res.Summary)
	}
	fmt.Fprint(out, eval.Markdown(&eval.Results{Summary: res.Summary}))
	fmt.Fprintf(out, "\nreports: %s\n", filepath.Join(f.out, eval.HTMLFile))
	return nil
}

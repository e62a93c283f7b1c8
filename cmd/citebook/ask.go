package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
)

// askFlags are the flags of `citebook ask`.
type askFlags struct {
	cfg    *library.Config
	books  []string
	tenant string
	user   string
	groups []string
	admin  bool
	split  bool
	json   bool
}

func newAskCmd() *cobra.Command {
	f := &askFlags{cfg: newConfig()}
	cmd := &cobra.Command{
		Use:   `ask "QUESTION"`,
		Short: "Answer a question from the books, with verified citations",
		Long: `Ask retrieves the passages the principal (--tenant, --user, --groups) may
read, has the answerer write statements citing them, and keeps only the
statements whose quotes are found verbatim in the cited passage. Each
citation names the book, chapter, printed and physical page of the quote.
Without a model (--llm none) the answer quotes the best matching sentences.

--json prints {"answer","refused","citations":[{"n","chunk_id","book_id",
"book_title","heading_path","page","printed_page","quote","char_start",
"char_end"}],"trace"}; a quote printed across a page break adds "pages" and
"printed_pages" ("120–121"). The trace lists what was retrieved, dropped,
given to the answerer and rejected.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAsk(cmd, f, args[0]) },
	}
	fs := cmd.Flags()
	addLibraryFlags(fs, f.cfg)
	addAnswerFlags(fs, f.cfg)
	fs.StringSliceVar(&f.books, "book", nil, "only these book IDs (repeatable)")
	fs.StringVar(&f.tenant, "tenant", defaultTenant, "tenant asking")
	fs.StringVar(&f.user, "user", "", "user asking")
	fs.StringSliceVar(&f.groups, "groups", nil, "groups of the user")
	fs.BoolVar(&f.admin, "admin", false, "ask as a tenant admin (sees every book of the tenant)")
	fs.BoolVar(&f.split, "split", false, "let the model split the question into sub-queries")
	fs.BoolVar(&f.json, "json", false, "print the answer as JSON")
	return cmd
}

func runAsk(cmd *cobra.Command, f *askFlags, question string) error {
	ctx := cmd.Context()
	req := qa.Request{Question: question, BookIDs: f.books, Split: f.split}
	// The same check as HTTP and MCP, before the library is opened.
	if err := qa.Validate(&req); err != nil {
		return err
	}
	lib, p, err := library.OpenAnswering(ctx, *f.cfg, nil)
	if err != nil {
		return err
	}
	defer lib.Close()
	pr := citebook.Principal{Tenant: f.tenant, User: f.user, Groups: f.groups, Admin: f.admin}
	out := cmd.OutOrStdout()
	var onDelta func(string)
	if !f.json {
		onDelta = func(s string) { fmt.Fprint(out, s) }
	}
	ans, err := p.Ask(ctx, pr, req, onDelta)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, ans)
	}
	fmt.Fprintln(out)
	writeCitations(out, ans.Citations)
	return nil
}

// writeCitations prints numbered citations the way a reader looks them up:
// [1] Title — Chapter > Section, p. 31 (physical 37): “quote”.
func writeCitations(w io.Writer, cs []citebook.Citation) {
	if len(cs) > 0 {
		fmt.Fprintln(w)
	}
	for _, c := range cs {
		var b strings.Builder
		fmt.Fprintf(&b, "[%d] %s", c.N, c.BookTitle)
		if h := citebook.HeadingString(c.HeadingPath); h != "" {
			b.WriteString(" — " + h)
		}
		switch {
		case c.PrintedPages != "":
			fmt.Fprintf(&b, ", pp. %s", c.PrintedPages) // across a page break
		case c.PrintedPage != "" && c.PrintedPage != fmt.Sprint(c.Page):
			fmt.Fprintf(&b, ", p. %s (physical %d)", c.PrintedPage, c.Page)
		case c.Page > 0:
			fmt.Fprintf(&b, ", p. %d", c.Page)
		}
		fmt.Fprintf(&b, ": “%s”", strings.Join(strings.Fields(c.Quote), " "))
		fmt.Fprintln(w, b.String())
	}
}

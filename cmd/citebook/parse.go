package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest"
)

// parseOutput is the public JSON contract of `citebook parse --json`. Page
// fields are null for reflowable books, so consumers can tell "no pages"
// from "page 0".
type parseOutput struct {
	Title    string          `json:"title"`
	Format   citebook.Format `json:"format"`
	Pages    *int            `json:"pages"`
	Language string          `json:"language"`
	Outline  []parseOutline  `json:"outline"`
	Parents  []parseParent   `json:"parents"`
	Chunks   []parseChunk    `json:"chunks"`
}

type parseOutline struct {
	Title string `json:"title"`
	Level int    `json:"level"`
	Page  *int   `json:"page"`
}

type parseParent struct {
	ID          string   `json:"id"`
	HeadingPath []string `json:"heading_path"`
	PageStart   *int     `json:"page_start"`
	PageEnd     *int     `json:"page_end"`
}

type parseChunk struct {
	ID           string   `json:"id"`
	ParentID     string   `json:"parent_id"`
	HeadingPath  []string `json:"heading_path"`
	PageStart    *int     `json:"page_start"`
	PageEnd      *int     `json:"page_end"`
	PrintedStart *string  `json:"printed_page_start"`
	PrintedEnd   *string  `json:"printed_page_end"`
	CharStart    int      `json:"char_start"`
	CharEnd      int      `json:"char_end"`
	Tokens       int      `json:"tokens"`
	Text         string   `json:"text"`
	IndexContext string   `json:"index_context,omitempty"` // searched, never shown: a continued table's caption and header rows
}

// newParseCmd shows what indexing a file would produce, without touching any
// store: the way to check a book's structure and chunking before indexing.
func newParseCmd() *cobra.Command {
	var asJSON bool
	var lim ingest.Limits
	opt := ingest.DefaultChunkOptions()
	cmd := &cobra.Command{
		Use:   "parse FILE",
		Short: "Show the outline, parents and chunks a book would be indexed as (no side effects)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.MaxTokens < 32 {
				return citebook.Errorf(citebook.EINVALID, "--max-tokens must be at least 32")
			}
			opt.MinTokens = min(opt.MinTokens, opt.MaxTokens/2)
			doc, err := ingest.ParseOptions{Limits: lim}.ParseFile(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tok, err := ingest.NewTokenizer()
			if err != nil {
				return err
			}
			parents, chunks := ingest.Split(doc, "parse", tok, opt)
			out := buildParseOutput(doc, parents, chunks)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			return printParse(cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().IntVar(&opt.MaxTokens, "max-tokens", opt.MaxTokens, "largest chunk, in cl100k_base tokens")
	cmd.Flags().DurationVar(&lim.Timeout, "parse-timeout", 0, "longest the parse may take (default "+ingest.DefaultLimits().Timeout.String()+"; Ctrl-C stops it sooner)")
	return cmd
}

// intOrNil maps "no page" (0) to JSON null.
func intOrNil(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func buildParseOutput(doc *ingest.Document, parents []citebook.Parent, chunks []citebook.Chunk) parseOutput {
	out := parseOutput{
		Title: doc.Title, Format: doc.Format, Pages: intOrNil(doc.Pages), Language: doc.Language,
		Outline: []parseOutline{}, Parents: []parseParent{}, Chunks: []parseChunk{},
	}
	for _, o := range doc.Outline {
		out.Outline = append(out.Outline, parseOutline{Title: o.Title, Level: o.Level, Page: intOrNil(o.Page)})
	}
	for _, p := range parents {
		out.Parents = append(out.Parents, parseParent{ID: p.ID, HeadingPath: p.HeadingPath, PageStart: intOrNil(p.PageStart), PageEnd: intOrNil(p.PageEnd)})
	}
	for _, c := range chunks {
		out.Chunks = append(out.Chunks, parseChunk{
			ID: c.ID, ParentID: c.ParentID, HeadingPath: c.HeadingPath,
			PageStart: intOrNil(c.PageStart), PageEnd: intOrNil(c.PageEnd),
			PrintedStart: strOrNil(c.PrintedStart), PrintedEnd: strOrNil(c.PrintedEnd),
			CharStart: c.CharStart, CharEnd: c.CharEnd, Tokens: c.Tokens, Text: c.Text, IndexContext: c.IndexContext,
		})
	}
	return out
}

// printParse renders the result as tables a person can scan.
func printParse(w io.Writer, out parseOutput) error {
	pages := "none (reflowable)"
	if out.Pages != nil {
		pages = fmt.Sprint(*out.Pages)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Title:\t%s\nFormat:\t%s\nLanguage:\t%s\nPages:\t%s\nParents:\t%d\nChunks:\t%d\n\n",
		out.Title, out.Format, out.Language, pages, len(out.Parents), len(out.Chunks))
	fmt.Fprintln(tw, "PAGE\tOUTLINE")
	for _, o := range out.Outline {
		fmt.Fprintf(tw, "%s\t%s%s\n", pageText(o.Page, o.Page), strings.Repeat("  ", o.Level), o.Title)
	}
	fmt.Fprintln(tw, "\nPARENT\tPAGES\tHEADING")
	for _, p := range out.Parents {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.ID, pageText(p.PageStart, p.PageEnd), citebook.HeadingString(p.HeadingPath))
	}
	fmt.Fprintln(tw, "\nCHUNK\tPARENT\tPAGES\tPRINTED\tCHARS\tTOKENS\tTEXT\tHEADING\tINDEX CONTEXT")
	for _, c := range out.Chunks {
		printed := ""
		if c.PrintedStart != nil {
			printed = *c.PrintedStart
			if c.PrintedEnd != nil && *c.PrintedEnd != printed {
				printed += "-" + *c.PrintedEnd
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d-%d\t%d\t%s\t%s\t%s\n", c.ID, c.ParentID, pageText(c.PageStart, c.PageEnd), printed,
			c.CharStart, c.CharEnd, c.Tokens, preview(c.Text, 50), citebook.HeadingString(c.HeadingPath), preview(c.IndexContext, 60))
	}
	return tw.Flush()
}

func pageText(start, end *int) string {
	switch {
	case start == nil:
		return "-"
	case end == nil || *end == *start:
		return fmt.Sprint(*start)
	}
	return fmt.Sprintf("%d-%d", *start, *end)
}

// preview shortens a chunk to one line of at most n characters.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

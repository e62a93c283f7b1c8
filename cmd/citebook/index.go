package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/jsonl"
	"github.com/citebook/citebook/internal/library"
)

// indexFlags are the flags of `citebook index`.
type indexFlags struct {
	cfg      *library.Config
	book     string
	title    string
	tenant   string
	groups   []string
	manifest string
	resume   bool
	verify   bool
	repair   bool
	json     bool
}

func newIndexCmd() *cobra.Command {
	f := &indexFlags{cfg: newConfig()}
	cmd := &cobra.Command{
		Use:   "index [FILE]",
		Short: "Index a book (PDF, EPUB, Markdown, text), re-embedding only what changed",
		Long: `Index parses and chunks a book, embeds the chunks that are new and switches
the book to the new version once every chunk is stored. An unchanged book is
skipped in well under a second. A failed build leaves the previous version
served; --resume continues it without redoing finished batches.

A manifest (--manifest, a JSON array or JSON lines) indexes many books; each
entry has book_id, title, tenant, groups and path (relative to the manifest);
an entry without tenant or groups takes --tenant and --groups.
--verify compares the stores with the metadata of the served version
(without FILE it only verifies --book); --repair fixes what differs.
--json prints one result object per book (job_id, book_id, version, status,
chunks, embedded, upserted, deleted).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runIndex(cmd, f, args) },
	}
	fs := cmd.Flags()
	addLibraryFlags(fs, f.cfg)
	fs.StringVar(&f.book, "book", "", "book ID (default: the file name without extension)")
	fs.StringVar(&f.title, "title", "", "book title (default: the title found in the file)")
	fs.StringVar(&f.tenant, "tenant", defaultTenant, "tenant that owns the book")
	fs.StringSliceVar(&f.groups, "groups", nil, "groups allowed to read the book (default: every user of the tenant)")
	fs.StringVar(&f.manifest, "manifest", "", "JSON or JSON-lines file listing books to index")
	fs.BoolVar(&f.resume, "resume", false, "continue a failed build of the same content")
	fs.BoolVar(&f.verify, "verify", false, "check the stores against the metadata after indexing")
	fs.BoolVar(&f.repair, "repair", false, "with --verify: re-store missing chunks and delete extra ones")
	fs.BoolVar(&f.cfg.Reembed, "reembed", f.cfg.Reembed, "switch the library to this embedder, re-embedding the book")
	fs.BoolVar(&f.json, "json", false, "print results as JSON")
	fs.DurationVar(&f.cfg.JobDeadline, "deadline", f.cfg.JobDeadline, "longest one book's job may run before it is cancelled and fails")
	fs.IntVar(&f.cfg.BatchSize, "batch-size", f.cfg.BatchSize, "chunks per recorded batch, the unit of progress and --resume")
	return cmd
}

func runIndex(cmd *cobra.Command, f *indexFlags, args []string) error {
	ctx := cmd.Context()
	if f.repair && !f.verify {
		return citebook.Errorf(citebook.EINVALID, "--repair needs --verify")
	}
	var inputs []index.BookInput
	switch {
	case f.manifest != "" && len(args) > 0:
		return citebook.Errorf(citebook.EINVALID, "give a FILE or --manifest, not both")
	case f.manifest != "":
		var err error
		if inputs, err = readManifest(f.manifest); err != nil {
			return err
		}
		for i := range inputs {
			inputs[i].Resume = f.resume
			// An entry that names no tenant or groups takes the flags'.
			if inputs[i].Tenant == "" {
				inputs[i].Tenant = f.tenant
			}
			if inputs[i].Groups == nil {
				inputs[i].Groups = f.groups
			}
		}
	case len(args) == 1:
		id := f.book
		if id == "" {
			if id = bookIDFromPath(args[0]); id == "" {
				return citebook.Errorf(citebook.EINVALID, "cannot derive a book ID from %s; pass --book", args[0])
			}
		}
		inputs = []index.BookInput{{BookID: id, Title: f.title, Tenant: f.tenant, Groups: f.groups,
			Path: args[0], Resume: f.resume}}
	case f.verify && f.book != "":
	default:
		return citebook.Errorf(citebook.EINVALID, "give a FILE to index, --manifest, or --verify --book ID")
	}

	a, err := library.Open(ctx, *f.cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	// Books go through the same job runner as the server's uploads, one at
	// a time: the deadline applies, and Ctrl-C cancels the running job,
	// which records its end before the command exits.
	runner := a.Runner(index.RunnerOptions{Workers: 1, OwnOnly: true, Grace: 3 * time.Second})
	defer runner.Close(context.WithoutCancel(ctx))
	out := cmd.OutOrStdout()
	enc := json.NewEncoder(out)
	var failed error
	for _, in := range inputs {
		in.Progress = progressFor(in.BookID, a.Log)
		res, err := runner.Run(ctx, in)
		if res != nil {
			if f.json {
				if err := enc.Encode(res); err != nil {
					return err
				}
			} else {
				printResult(out, res)
			}
		}
		if err != nil {
			a.Log.ErrorContext(ctx, "index failed", "book", in.BookID, "err", err)
			if len(inputs) == 1 || ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", in.BookID, citebook.ErrorMessage(err))
			failed = citebook.Errorf(citebook.ErrorCode(err), "some books failed to index; see `citebook jobs`")
			continue
		}
		if f.verify {
			if err := runVerify(cmd, a, in.BookID, f); err != nil {
				return err
			}
		}
	}
	if len(inputs) == 0 {
		return runVerify(cmd, a, f.book, f)
	}
	return failed
}

// runVerify verifies (and maybe repairs) one book and prints the report.
func runVerify(cmd *cobra.Command, a *library.Library, bookID string, f *indexFlags) error {
	rep, err := a.Builder.Verify(cmd.Context(), bookID, f.repair)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	// Drift left unrepaired fails the command in both modes, so scripts
	// reading the JSON report can trust the exit status too.
	drift := citebook.Errorf(citebook.ECONFLICT, "stores differ from the metadata of %s", bookID)
	if f.json {
		if err := json.NewEncoder(out).Encode(rep); err != nil {
			return err
		}
		if !rep.OK() && !rep.Repaired {
			return drift
		}
		return nil
	}
	fmt.Fprintf(out, "verify %s v%d: %d chunks expected; vector store: %d missing, %d extra; lexical index: %d missing, %d extra",
		rep.BookID, rep.Version, rep.Expected, len(rep.Vector.Missing), len(rep.Vector.Extra),
		len(rep.Lexical.Missing), len(rep.Lexical.Extra))
	switch {
	case rep.OK():
		fmt.Fprintln(out, " — OK")
	case rep.Repaired:
		fmt.Fprintln(out, " — repaired")
	default:
		fmt.Fprintln(out, " — run with --repair to fix")
		return drift
	}
	return nil
}

func printResult(w io.Writer, r *index.JobResult) {
	if r.Unchanged {
		fmt.Fprintf(w, "%s: unchanged (version %d, %d chunks)\n", r.BookID, r.Version, r.Chunks)
		return
	}
	fmt.Fprintf(w, "%s: version %d %s (job %d): %d chunks, %d embedded, %d upserted, %d deleted\n",
		r.BookID, r.Version, r.Status, r.JobID, r.Chunks, r.Embedded, r.Upserted, r.Deleted)
}

// progressFor draws a bar when stderr is a terminal and logs plain lines
// (about every tenth of the work) otherwise, so CI logs stay readable.
func progressFor(bookID string, log *slog.Logger) func(done, total int) {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		var bar *progressbar.ProgressBar
		return func(done, total int) {
			if total == 0 {
				return
			}
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr),
					progressbar.OptionSetDescription("embedding "+bookID), progressbar.OptionShowCount(),
					progressbar.OptionClearOnFinish())
			}
			bar.Set(done)
			if done >= total {
				bar.Finish()
			}
		}
	}
	last := -1
	return func(done, total int) {
		if total == 0 {
			return
		}
		step := done * 10 / total
		if step != last || done == total {
			last = step
			log.Info("embedding", "book", bookID, "done", done, "total", total)
		}
	}
}

// bookIDFromPath derives a book ID from a file name: lower case, letters,
// digits and dashes.
func bookIDFromPath(p string) string {
	base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	var sb strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			sb.WriteRune(r)
		case sb.Len() > 0 && !strings.HasSuffix(sb.String(), "-"):
			sb.WriteByte('-')
		}
	}
	return strings.Trim(sb.String(), "-")
}

// readManifest reads book entries from a JSON array or JSON lines file;
// relative paths are resolved against the manifest's directory and missing
// book IDs derived from file names (tenant and groups are left to the
// caller).
func readManifest(path string) ([]index.BookInput, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read manifest %s", path)
	}
	var ins []index.BookInput
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &ins); err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "manifest %s is not valid JSON", path)
		}
	} else if ins, err = jsonl.Decode[index.BookInput](data, "manifest "+path, nil); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for i := range ins {
		if ins[i].Path == "" {
			return nil, citebook.Errorf(citebook.EINVALID, "manifest %s entry %d has no path", path, i+1)
		}
		if !filepath.IsAbs(ins[i].Path) {
			ins[i].Path = filepath.Join(dir, ins[i].Path)
		}
		if ins[i].BookID == "" {
			if ins[i].BookID = bookIDFromPath(ins[i].Path); ins[i].BookID == "" {
				return nil, citebook.Errorf(citebook.EINVALID, "manifest %s entry %d: cannot derive a book ID from %s; set book_id", path, i+1, ins[i].Path)
			}
		}
	}
	if len(ins) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "manifest %s lists no books", path)
	}
	return ins, nil
}

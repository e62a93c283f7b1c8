package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/library"
)

// jobView is a job with its batches, as `citebook jobs --json` prints it.
type jobView struct {
	index.Job
	Batches []index.Batch `json:"batches"`
}

func newJobsCmd() *cobra.Command {
	var (
		book   string
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "Show index job history, batch states and failure reasons",
		Args:  cobra.NoArgs,
	}
	cfg := newConfig()
	addDataFlag(cmd.Flags(), cfg)
	cmd.Flags().StringVar(&book, "book", "", "only this book's jobs")
	cmd.Flags().IntVar(&limit, "limit", 20, "show at most this many jobs, newest first (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print jobs with their batches as JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		db, err := library.OpenMeta(ctx, *cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		library.RecoverJobs(ctx, db, slog.Default())
		jobs, err := db.Jobs(ctx, book)
		if err != nil {
			return err
		}
		if limit > 0 && len(jobs) > limit {
			jobs = jobs[:limit]
		}
		views := make([]jobView, len(jobs))
		for i, j := range jobs {
			bs, err := db.Batches(ctx, j.ID)
			if err != nil {
				return err
			}
			if bs == nil {
				bs = []index.Batch{}
			}
			views[i] = jobView{Job: j, Batches: bs}
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), views)
		}
		printJobs(cmd.OutOrStdout(), views)
		return nil
	}
	return cmd
}

// printJobs renders one line per job, a batch summary, and the failure
// reason of each failed job and batch.
func printJobs(w io.Writer, views []jobView) {
	if len(views) == 0 {
		fmt.Fprintln(w, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tBOOK\tVERSION\tSTATUS\tSTARTED\tTOOK\tCHUNKS\tEMBEDDED\tUPSERTED\tDELETED\tBATCHES")
	for _, v := range views {
		took := "-"
		if !v.Finished.IsZero() {
			took = v.Finished.Sub(v.Started).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", v.ID, v.BookID, v.Version, v.Status,
			v.Started.Local().Format("2006-01-02 15:04:05"), took, v.Chunks, v.Embedded, v.Upserted, v.Deleted,
			batchSummary(v.Batches))
	}
	tw.Flush()
	for _, v := range views {
		if v.Error != "" {
			fmt.Fprintf(w, "job %d %s: %s\n", v.ID, v.Status, v.Error)
		}
		if v.SupersededBy != 0 {
			fmt.Fprintf(w, "job %d was superseded by job %d\n", v.ID, v.SupersededBy)
		}
		if o := v.OCR; o != nil {
			fmt.Fprintf(w, "job %d: OCR read %d of %d image-only pages\n", v.ID, o.Read, o.Pages)
			for _, f := range o.Failed {
				fmt.Fprintf(w, "  page %d: %s\n", f.Page, f.Error)
			}
		}
		for _, b := range v.Batches {
			if b.Status == index.BatchFailed {
				fmt.Fprintf(w, "  batch %d (%d chunks) failed after %d attempts: %s\n", b.N+1, len(b.ChunkIDs), b.Attempts, b.Error)
			}
		}
	}
}

// batchSummary counts batches by state, e.g. "3 done, 1 failed, 2 pending".
func batchSummary(bs []index.Batch) string {
	if len(bs) == 0 {
		return "-"
	}
	counts := map[index.BatchStatus]int{}
	for _, b := range bs {
		counts[b.Status]++
	}
	var parts []string
	for _, s := range []index.BatchStatus{index.BatchDone, index.BatchFailed, index.BatchPending} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

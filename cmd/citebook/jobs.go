package main

import (
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
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
		queued bool
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
	cmd.Flags().BoolVar(&queued, "queue", false, "print only the shared queue's waiting and running jobs, with the worker holding each (with --json: as JSON)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		db, err := openExistingMeta(ctx, *cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		library.RecoverJobs(ctx, db, slog.Default())
		queue, err := db.Entries(ctx, book)
		if err != nil {
			return err
		}
		if queued {
			open := []queueView{}
			for _, e := range queue {
				if !e.Job.Status.Ended() {
					open = append(open, queueView{Job: e.Job, Worker: e.Worker, Lease: e.Lease, Cancel: e.Cancel, Attempts: e.Attempts})
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), open)
			}
			printQueue(cmd.OutOrStdout(), queue)
			return nil
		}
		jobs, err := db.Jobs(ctx, book)
		if err != nil {
			return err
		}
		unrecorded, err := db.Unrecorded(ctx, book)
		if err != nil {
			return err
		}
		jobs = withUnrecorded(jobs, unrecorded)
		if limit > 0 && len(jobs) > limit {
			jobs = jobs[:limit]
		}
		views := make([]jobView, len(jobs))
		for i, j := range jobs {
			var bs []index.Batch
			if j.ID != 0 {
				if bs, err = db.Batches(ctx, j.ID); err != nil {
					return err
				}
			}
			if bs == nil {
				bs = []index.Batch{}
			}
			views[i] = jobView{Job: j, Batches: bs}
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), views)
		}
		printQueue(cmd.OutOrStdout(), queue)
		printJobs(cmd.OutOrStdout(), views)
		return nil
	}
	return cmd
}

// withUnrecorded adds to the recorded builds (newest first) the queue's
// ended jobs that left no build record — a book whose first build failed
// is removed with its records, and its job, and why it failed, would
// otherwise be listed nowhere — and orders them all newest first. A failed
// one names, as a recorded build does (index.RecoverJobs), the first later
// build of its book that superseded it: a process killed before it
// recorded its build leaves such a job, and `--resume` then builds anew.
func withUnrecorded(jobs []index.Job, unrecorded []index.QueueEntry) []index.Job {
	if len(unrecorded) == 0 {
		return jobs
	}
	recorded := len(jobs)
	for _, e := range unrecorded {
		j := e.Job
		j.ID = 0 // its record, if it had one, is gone
		if j.Status == citebook.JobFailed {
			j.SupersededBy = nextBuild(jobs[:recorded], j)
		}
		jobs = append(jobs, j)
	}
	sort.SliceStable(jobs, func(a, b int) bool { return startedAt(jobs[a]).After(startedAt(jobs[b])) })
	return jobs
}

// nextBuild is the ID of the first recorded build of j's book that started
// after j, or 0.
func nextBuild(recorded []index.Job, j index.Job) int64 {
	var next index.Job
	for _, r := range recorded {
		if r.BookID == j.BookID && startedAt(r).After(startedAt(j)) &&
			(next.ID == 0 || startedAt(r).Before(startedAt(next))) {
			next = r
		}
	}
	return next.ID
}

// startedAt is when a job started, or was queued if it never started.
func startedAt(j index.Job) time.Time {
	if j.Started.IsZero() {
		return j.Queued
	}
	return j.Started
}

// jobName is how the job table names a job: its record's number, or its
// queue handle when it left no record.
func jobName(j index.Job) string {
	if j.ID == 0 {
		return j.Handle
	}
	return strconv.FormatInt(j.ID, 10)
}

// queueView is a job of the shared queue, as `citebook jobs --queue
// --json` prints it: the job (its owner is the process holding it) and the
// worker, lease, cancel request and claims so far.
type queueView struct {
	citebook.Job
	Worker   string    `json:"worker,omitempty"`
	Lease    time.Time `json:"lease,omitzero"`
	Cancel   bool      `json:"cancel_requested,omitempty"`
	Attempts int       `json:"attempts"`
}

// printQueue shows the shared queue's jobs that are waiting or running,
// with the worker holding each and until when its lease runs.
func printQueue(w io.Writer, es []index.QueueEntry) {
	var open []index.QueueEntry
	for _, e := range es {
		if !e.Job.Status.Ended() {
			open = append(open, e)
		}
	}
	if len(open) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUED JOB\tBOOK\tTENANT\tSTATUS\tWORKER\tPROCESS\tLEASE\tATTEMPTS\tQUEUED")
	for _, e := range open {
		worker, proc, lease := "-", "-", "-"
		if e.Job.Status == citebook.JobRunning {
			worker, proc = e.Worker, e.Job.Owner.String()
			if left := time.Until(e.Lease); left > 0 {
				lease = "ends in " + left.Round(100*time.Millisecond).String()
			} else {
				lease = "expired"
			}
			if e.Cancel {
				lease += ", cancel requested"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.Job.Handle, e.Job.BookID, e.Job.Tenant, e.Job.Status,
			worker, proc, lease, e.Attempts, e.Job.Queued.Local().Format("2006-01-02 15:04:05"))
	}
	tw.Flush()
	fmt.Fprintln(w)
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
		took, started := "-", "-"
		if !v.Started.IsZero() {
			started = v.Started.Local().Format("2006-01-02 15:04:05")
			if !v.Finished.IsZero() {
				took = v.Finished.Sub(v.Started).Round(time.Millisecond).String()
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", jobName(v.Job), v.BookID, v.Version, v.Status,
			started, took, v.Chunks, v.Embedded, v.Upserted, v.Deleted,
			batchSummary(v.Batches))
	}
	tw.Flush()
	for _, v := range views {
		if v.Error != "" {
			fmt.Fprintf(w, "job %s %s: %s\n", jobName(v.Job), v.Status, v.Error)
		}
		if v.SupersededBy != 0 {
			fmt.Fprintf(w, "job %s was superseded by job %d\n", jobName(v.Job), v.SupersededBy)
		}
		if o := v.OCR; o != nil {
			fmt.Fprintf(w, "job %s: OCR read %d of %d image-only pages\n", jobName(v.Job), o.Read, o.Pages)
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

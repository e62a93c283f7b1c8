package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/library"
)

// newWorkerCmd is `citebook worker`: a process that only runs index jobs
// from the library's shared queue, beside servers that queue them (serve
// --index-workers 0 leaves all the work to workers).
func newWorkerCmd() *cobra.Command {
	c := newConfig()
	workers := index.DefaultWorkers
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run index jobs from the library's shared queue until stopped",
		Long: `Worker claims index jobs that servers (uploads, re-indexes) queued in the
library's metadata database and builds them; any number of workers and
servers may share one library. A claim is a lease renewed every second: a
worker killed mid-job loses it (at once to workers on the same host, otherwise
after 20 s) and another worker resumes the build from its last completed
batch. A cancel requested through any server reaches the worker within a
second. SIGINT/SIGTERM hands running jobs back to the queue.`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	addLibraryFlags(fs, c)
	fs.IntVar(&workers, "workers", workers, "index jobs run at once")
	fs.DurationVar(&c.JobDeadline, "job-deadline", c.JobDeadline, "longest an index job may run before it is cancelled and fails")
	fs.IntVar(&c.BatchSize, "batch-size", c.BatchSize, "chunks per recorded batch, the unit of progress and of resuming a taken-over job")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		a, err := library.Open(ctx, *c, nil)
		if err != nil {
			return err
		}
		defer a.Close()
		runner := a.Runner(index.RunnerOptions{Workers: workers})
		// A worker's own stores serve no searches, but its builder reads
		// them when resuming: keep them in step with what others build.
		go a.Follow.Run(ctx, followEvery)
		a.Listen(ctx, runner)
		a.Log.Info("worker running index jobs", "worker", runner.WorkerID(), "workers", workers, "data", c.Data)
		<-ctx.Done()
		a.Log.Info("worker stopping: handing running jobs back to the queue")
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runner.Close(cctx)
	}
	return cmd
}

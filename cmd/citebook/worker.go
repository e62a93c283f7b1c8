package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook/index"
)

// newWorkerCmd is `citebook worker`: a process that only runs index jobs
// from the library's shared queue, beside servers that queue them (serve
// --index-workers 0 leaves all the work to workers).
func newWorkerCmd() *cobra.Command {
	var (
		workers  int
		deadline time.Duration
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run index jobs from the library's shared queue until stopped",
		Long: `Worker claims index jobs that servers (uploads, re-indexes) queued in the
library's metadata database and builds them; any number of workers and
servers may share one library. A claim is a lease renewed every second: a
worker killed mid-job loses it (at once when the others run on the same
host, otherwise after 15 s) and another worker resumes the build from its
last completed batch. A cancel requested through any server reaches the
worker within a second. SIGINT/SIGTERM hands running jobs back to the queue.`,
		Args: cobra.NoArgs,
	}
	app := addAppFlags(cmd.Flags())
	cmd.Flags().IntVar(&workers, "workers", 2, "index jobs run at once")
	cmd.Flags().IntVar(&app.BatchSize, "batch-size", 0, "chunks per recorded batch, the unit of progress and of resuming a taken-over job (default 200)")
	cmd.Flags().DurationVar(&deadline, "job-deadline", index.DefaultJobDeadline, "longest an index job may run before it is cancelled and fails")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		a, err := openApp(ctx, *app)
		if err != nil {
			return err
		}
		defer a.Close()
		runner := index.NewRunner(a.Builder, a.Meta, a.Queue, index.RunnerOptions{
			Workers: workers, Deadline: deadline, Logger: a.Log})
		// A worker's own stores serve no searches, but its builder reads
		// them when resuming: keep them in step with what others build.
		go a.Follow.Run(ctx, followEvery)
		a.listen(ctx, runner)
		a.Log.Info("worker running index jobs", "worker", runner.WorkerID(), "workers", workers, "data", a.Opts.Data)
		<-ctx.Done()
		a.Log.Info("worker stopping: handing running jobs back to the queue")
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runner.Close(cctx)
	}
	return cmd
}

// Command citebook indexes books and answers questions about them with
// citations a reader can check. Run "citebook help" for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/library"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "citebook: %s\n", citebook.ErrorMessage(err))
		if citebook.ErrorCode(err) == citebook.EINTERNAL {
			fmt.Fprintf(os.Stderr, "cause: %v\n", err)
		}
		os.Exit(exitCode(err))
	}
}

// newRoot builds the command tree; every subcommand is added here so the
// wiring of packages stays in one place.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "citebook",
		Short:         "Answer questions about books with citations a reader can check",
		Long:          "Answer questions about books with citations a reader can check.\n\n" + envHelp(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(commands()...)
	return root
}

// envHelp lists the environment variables citebook reads, from the one
// list library.FromEnv applies; flags win over them.
func envHelp() string {
	var b strings.Builder
	b.WriteString("Environment (flags win over it):\n")
	for _, e := range library.Env() {
		fmt.Fprintf(&b, "  %-22s %s\n", e.Name, e.What)
	}
	return b.String()
}

// commands lists the subcommands; each lives in a file of its own.
func commands() []*cobra.Command {
	return []*cobra.Command{
		newIndexCmd(), newJobsCmd(), newWorkerCmd(),
		newParseCmd(), newAskCmd(),
		newServeCmd(), newTokensCmd(), newGrantsCmd(),
		newEvalCmd(),
	}
}

// exitCode maps error codes to process exit codes: 2 for bad input, 1 otherwise.
func exitCode(err error) int {
	switch citebook.ErrorCode(err) {
	case citebook.EINVALID, citebook.ENOTFOUND:
		return 2
	default:
		return 1
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
)

// TestFlagDefaultsFromConfig: every command's flags show, as their
// default, the value library.Config holds (defaults plus environment), and
// the answering thresholds are qa's own defaults — written once, so the
// help cannot drift from what the code uses.
func TestFlagDefaultsFromConfig(t *testing.T) {
	c := library.FromEnv(os.Getenv)
	q := qa.DefaultOptions()
	require.Equal(t, q, c.Answer)
	answer := map[string]string{
		"min-score":       fmt.Sprint(q.MinScore),
		"k":               fmt.Sprint(q.K),
		"answer-coverage": fmt.Sprint(q.AnswerCoverage),
		"llm":             c.LLM.Provider,
	}
	lib := map[string]string{
		"data":              c.Data,
		"store":             c.Store,
		"milvus-collection": c.Milvus.Collection,
		"embedder":          c.Embed.Provider,
		"embed-batch":       fmt.Sprint(c.Embed.BatchSize),
		"ocr-langs":         c.OCRLanguages,
	}
	for _, tt := range []struct {
		cmd  *cobra.Command
		want []map[string]string
	}{
		{newAskCmd(), []map[string]string{lib, answer}},
		{newEvalCmd(), []map[string]string{lib, answer}},
		{newIndexCmd(), []map[string]string{lib, {
			"batch-size": fmt.Sprint(c.BatchSize), "deadline": c.JobDeadline.String()}}},
		{newServeCmd(), []map[string]string{lib, answer, {
			"addr": c.Serve.Addr, "rate": fmt.Sprint(c.Serve.Rate), "burst": fmt.Sprint(c.Serve.Burst),
			"max-upload": fmt.Sprint(c.Serve.MaxUpload), "index-workers": fmt.Sprint(c.Serve.Workers), "procs": fmt.Sprint(c.Serve.Procs),
			"job-deadline": c.JobDeadline.String()}}},
		{newJobsCmd(), []map[string]string{{"data": c.Data}}},
	} {
		for _, want := range tt.want {
			for name, def := range want {
				f := tt.cmd.Flags().Lookup(name)
				require.NotNil(t, f, "%s --%s", tt.cmd.Name(), name)
				require.Equal(t, def, f.DefValue, "%s --%s", tt.cmd.Name(), name)
			}
		}
	}
	for _, tt := range []*cobra.Command{newTokensCmd(), newGrantsCmd()} {
		require.Equal(t, c.Data, tt.PersistentFlags().Lookup("data").DefValue, tt.Name())
	}
}

// TestTokenNotInHelp: a token from CITEBOOK_TOKEN is used by serve
// --mcp-stdio but never printed as the flag's default by --help.
func TestTokenNotInHelp(t *testing.T) {
	t.Setenv("CITEBOOK_TOKEN", "cb_secret")
	cmd := newServeCmd()
	require.Empty(t, cmd.Flags().Lookup("token").DefValue)
	var help bytes.Buffer
	cmd.SetOut(&help)
	require.NoError(t, cmd.Help())
	require.NotContains(t, help.String(), "cb_secret")
}

// TestMetaNotInHelp: a metadata URL from CITEBOOK_META (it may hold a
// password) is used but never printed as --meta's default by --help.
func TestMetaNotInHelp(t *testing.T) {
	t.Setenv("CITEBOOK_META", "postgres://citebook:s3cret@db/citebook")
	for _, cmd := range []*cobra.Command{newServeCmd(), newJobsCmd(), newTokensCmd()} {
		f := cmd.Flags().Lookup("meta")
		if f == nil {
			f = cmd.PersistentFlags().Lookup("meta")
		}
		require.NotNil(t, f, cmd.Name())
		require.Empty(t, f.DefValue, cmd.Name())
		var help bytes.Buffer
		cmd.SetOut(&help)
		require.NoError(t, cmd.Help())
		require.NotContains(t, help.String(), "s3cret", cmd.Name())
	}
}

// TestFlagUsageNamesItsType: pflag reads a back-quoted word in a flag's
// usage as the name of its value, so "`citebook worker`" made --help show
// "--index-workers citebook worker" instead of "--index-workers int".
func TestFlagUsageNamesItsType(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				name, _ := pflag.UnquoteUsage(f)
				if f.Value.Type() != "bool" {
					require.Contains(t, []string{f.Value.Type(), "strings", "duration", "float", "int"}, name,
						"%s --%s shows its value as %q", c.CommandPath(), f.Name, name)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}

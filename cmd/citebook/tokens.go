package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/web/auth"
)

// newTokensCmd manages the API tokens of the web API and MCP server. Only
// the metadata database is opened: tokens need no stores or models.
func newTokensCmd() *cobra.Command {
	cfg := newConfig()
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Create, list and revoke API tokens for serve",
		Long: `Tokens authenticate requests to citebook serve (HTTP API and MCP). A token
maps to a principal: tenant, user, groups and whether it is a tenant admin
(admins upload, index and delete books). The token is printed once at
creation; only its sha256 is stored.

Creating the first token ends serve's zero-config mode for good — at once,
also in a server that is already running — and revoking every token does
not bring it back: from then on every request needs a token.`,
	}
	addDataFlag(cmd.PersistentFlags(), cfg)

	var p citebook.Principal
	var asJSON bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withTokens(cmd.Context(), *cfg, func(s *auth.Store) error {
				secret, t, err := s.Create(cmd.Context(), p)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return json.NewEncoder(out).Encode(map[string]any{"token": secret, "id": t.ID, "principal": t.Principal})
				}
				fmt.Fprintln(out, secret)
				fmt.Fprintf(cmd.ErrOrStderr(), "token %s for %s/%s created; it is shown only this once\n", t.ID, p.Tenant, p.User)
				return nil
			})
		},
	}
	fs := create.Flags()
	fs.StringVar(&p.Tenant, "tenant", defaultTenant, "tenant the token reads")
	fs.StringVar(&p.User, "user", "", "user name (required)")
	fs.StringSliceVar(&p.Groups, "groups", nil, "ACL groups of the user (comma-separated)")
	fs.BoolVar(&p.Admin, "admin", false, "tenant admin: may upload, index and delete books")
	fs.BoolVar(&asJSON, "json", false, "print {token, id, principal} as JSON")

	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withTokens(cmd.Context(), *cfg, func(s *auth.Store) error {
				ts, err := s.List(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					if ts == nil {
						ts = []auth.Token{}
					}
					return json.NewEncoder(cmd.OutOrStdout()).Encode(ts)
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tTENANT\tUSER\tGROUPS\tADMIN\tCREATED\tREVOKED")
				for _, t := range ts {
					revoked := ""
					if !t.Revoked.IsZero() {
						revoked = t.Revoked.Format("2006-01-02 15:04")
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%v\t%s\t%s\n", t.ID, t.Principal.Tenant, t.Principal.User,
						strings.Join(t.Principal.Groups, ","), t.Principal.Admin, t.Created.Format("2006-01-02 15:04"), revoked)
				}
				return w.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token by the ID shown by list",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withTokens(cmd.Context(), *cfg, func(s *auth.Store) error {
				if err := s.Revoke(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "token %s revoked\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// withTokens opens the metadata database of a library (creating it and
// applying migrations if needed) for one token operation.
func withTokens(ctx context.Context, cfg library.Config, fn func(*auth.Store) error) error {
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "cannot create library directory %s", cfg.Data)
	}
	db, err := library.OpenMeta(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(auth.NewStore(db.SQL()))
}

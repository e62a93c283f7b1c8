package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/internal/library"
)

// newGrantsCmd manages ACL grants: the CLI face of acl.Manager, the same
// validation the /v1/grants API applies. Only the metadata database is
// opened; a running server reads grants per request, so changes made here
// apply to its next request.
func newGrantsCmd() *cobra.Command {
	cfg := newConfig()
	var tenant string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "Add, list and remove ACL grants on books and chapters",
		Long: `A grant opens (allow) or closes (deny) a whole book, or one chapter and
everything under it, to one user, one group or every user of a tenant; a deny
always wins. Books listing ACL groups are closed to users outside them unless
a grant opens them. Admins see every book of their tenant.

Grants take effect on the next question, also in a running server.`,
	}
	addDataFlag(cmd.PersistentFlags(), cfg)
	cmd.PersistentFlags().StringVar(&tenant, "tenant", defaultTenant, "tenant of the grants")

	var (
		g           acl.Grant
		user, group string
		everyone    bool
		allow, deny bool
	)
	add := &cobra.Command{
		Use:   "add --book ID (--user U | --group G | --everyone) (--allow | --deny) [--chapter HEADING]...",
		Short: "Add a grant (printed with its ID)",
		Example: `  citebook grants add --book r-intro --group interns --deny --chapter "3 Objects, their modes and attributes"
  citebook grants add --book handbook --user alice --allow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.Tenant = tenant
			switch {
			case user != "":
				g.SubjectKind, g.Subject = acl.SubjectUser, user
			case group != "":
				g.SubjectKind, g.Subject = acl.SubjectGroup, group
			case everyone:
				g.SubjectKind = acl.SubjectTenant
			}
			g.Effect = acl.Allow
			if deny {
				g.Effect = acl.Deny
			}
			return withGrants(cmd.Context(), *cfg, func(m *acl.Manager) error {
				saved, err := m.Add(cmd.Context(), g)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(saved)
				}
				fmt.Fprintln(cmd.OutOrStdout(), saved.ID)
				fmt.Fprintf(cmd.ErrOrStderr(), "grant %d: %s\n", saved.ID, describeGrant(saved))
				return nil
			})
		},
	}
	fs := add.Flags()
	fs.StringVar(&g.BookID, "book", "", "book ID (required)")
	fs.StringArrayVar(&g.Path, "chapter", nil, "heading of the chapter, one flag per level from the top (default: the whole book)")
	fs.StringVar(&user, "user", "", "the grant is for this user")
	fs.StringVar(&group, "group", "", "the grant is for this ACL group")
	fs.BoolVar(&everyone, "everyone", false, "the grant is for every user of the tenant")
	fs.BoolVar(&allow, "allow", false, "open the book or chapter")
	fs.BoolVar(&deny, "deny", false, "close the book or chapter (wins over any allow)")
	fs.BoolVar(&asJSON, "json", false, "print the grant as JSON")
	_ = add.MarkFlagRequired("book")
	add.MarkFlagsMutuallyExclusive("user", "group", "everyone")
	add.MarkFlagsOneRequired("user", "group", "everyone")
	add.MarkFlagsMutuallyExclusive("allow", "deny")
	add.MarkFlagsOneRequired("allow", "deny")

	var book string
	list := &cobra.Command{
		Use:   "list [--book ID]",
		Short: "List the tenant's grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withGrants(cmd.Context(), *cfg, func(m *acl.Manager) error {
				gs, err := m.List(cmd.Context(), tenant, book)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(gs)
				}
				return printGrants(cmd.OutOrStdout(), gs)
			})
		},
	}
	list.Flags().StringVar(&book, "book", "", "only grants on this book")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	remove := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a grant by the ID shown by list",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return citebook.Errorf(citebook.EINVALID, "grant IDs are positive integers, not %q", args[0])
			}
			return withGrants(cmd.Context(), *cfg, func(m *acl.Manager) error {
				if err := m.Remove(cmd.Context(), tenant, id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "grant %d removed\n", id)
				return nil
			})
		},
	}
	cmd.AddCommand(add, list, remove)
	return cmd
}

// describeGrant is a grant in words for the CLI.
func describeGrant(g acl.Grant) string {
	who := "every user of " + g.Tenant
	switch g.SubjectKind {
	case acl.SubjectUser:
		who = "user " + g.Subject
	case acl.SubjectGroup:
		who = "group " + g.Subject
	}
	what := "book " + g.BookID
	if len(g.Path) > 0 {
		what = fmt.Sprintf("%q of book %s", citebook.HeadingString(g.Path), g.BookID)
	}
	return fmt.Sprintf("%s %s to %s", g.Effect, what, who)
}

func printGrants(out io.Writer, gs []acl.Grant) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEFFECT\tBOOK\tCHAPTER\tSUBJECT")
	for _, g := range gs {
		subject := string(g.SubjectKind)
		if g.Subject != "" {
			subject += ":" + g.Subject
		}
		chapter := citebook.HeadingString(g.Path)
		if chapter == "" {
			chapter = "(whole book)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", g.ID, g.Effect, g.BookID, chapter, subject)
	}
	return w.Flush()
}

// withGrants opens the metadata database of an existing library for one
// grants operation; grants name books, so a missing library is an error.
func withGrants(ctx context.Context, cfg library.Config, fn func(*acl.Manager) error) error {
	db, err := openExistingMeta(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(acl.NewManager(acl.NewStore(db.SQL()), db, db))
}

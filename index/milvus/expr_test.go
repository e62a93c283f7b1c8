package milvus

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

func TestExpr(t *testing.T) {
	tests := []struct {
		name string
		f    citebook.Filter
		want string
	}{
		{"zero filter matches nothing", citebook.Filter{}, matchNothing},
		{"tenant without books matches nothing", citebook.Filter{Tenant: "acme"}, matchNothing},
		{
			"one book",
			citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 3}}},
			`tenant_id == "acme" && ((book_id == "b1" && version <= 3 && retired > 3))`,
		},
		{
			"books and denied parents",
			citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 2}, {BookID: "b2", Version: 10}}, DenyParents: []string{"p1", "p2"}},
			`tenant_id == "acme" && ((book_id == "b1" && version <= 2 && retired > 2) || (book_id == "b2" && version <= 10 && retired > 10)) && parent_id not in ["p1", "p2"]`,
		},
		{
			"books sharing a version form one clause",
			citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "b1", Version: 1}, {BookID: "b2", Version: 2}, {BookID: "b3", Version: 1}}},
			`tenant_id == "acme" && ((book_id in ["b1", "b3"] && version <= 1 && retired > 1) || (book_id == "b2" && version <= 2 && retired > 2))`,
		},
		{
			"hostile values stay inside their literals",
			citebook.Filter{Tenant: `a" || tenant_id != "a`, Books: []citebook.BookScope{{BookID: `x\" or 1==1`, Version: 1}}, DenyParents: []string{"p\n\"]"}},
			`tenant_id == "a\" || tenant_id != \"a" && ((book_id == "x\\\" or 1==1" && version <= 1 && retired > 1)) && parent_id not in ["p\n\"]"]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Expr(tc.f))
		})
	}
}

// hostileValues are strings crafted to end a string literal early.
var hostileValues = []string{
	`x" or tenant_id != "a`,
	`x' or tenant_id != 'a`,
	`x\" or tenant_id != \"a`,
	`x\\" or tenant_id != "a`,
	`x") || (tenant_id != "a`,
	`\`, `"`, `'`, `\\"`,
	"line\nbreak\r\t",
	"nul\x00byte",
	"\xff\xfe invalid utf-8",
	"中文\"引号'\u2028",
}

// scan splits a Milvus expression the way its lexer does: double-quoted
// literals (backslash escapes the next character) and the code between them.
func scan(t *testing.T, expr string) (code string, literals []string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		if expr[i] != '"' {
			b.WriteByte(expr[i])
			continue
		}
		j := i + 1
		for ; j < len(expr) && expr[j] != '"'; j++ {
			if expr[j] == '\\' {
				j++
			}
			require.NotContains(t, "\r\n", string(expr[j]), "Milvus rejects raw line breaks inside literals: %q", expr)
		}
		require.Less(t, j, len(expr), "unterminated literal in %q", expr)
		lit, err := strconv.Unquote(expr[i : j+1])
		require.NoError(t, err)
		literals = append(literals, lit)
		b.WriteString(`""`)
		i = j
	}
	return b.String(), literals
}

// TestExprInjection checks that hostile IDs change only literal contents:
// the expression outside literals is the same as for harmless IDs, and every
// literal decodes back to the exact value given.
func TestExprInjection(t *testing.T) {
	shape := func(tenant, book, parent string) citebook.Filter {
		return citebook.Filter{Tenant: tenant, Books: []citebook.BookScope{{BookID: book, Version: 4}, {BookID: "ok", Version: 1}}, DenyParents: []string{parent}}
	}
	wantCode, _ := scan(t, Expr(shape("t", "b", "p")))
	for _, h := range hostileValues {
		t.Run(strconv.Quote(h), func(t *testing.T) {
			code, literals := scan(t, Expr(shape(h, h, h)))
			require.Equal(t, wantCode, code)
			require.Equal(t, []string{h, "ok", h, h}, literals) // clauses ordered by version: "ok" (1) before h (4)

			code, literals = scan(t, idsExpr([]string{h, "x"}))
			require.Equal(t, `chunk_id in ["", ""]`, code)
			require.Equal(t, []string{h, "x"}, literals)

			code, literals = scan(t, bookExpr(h))
			require.Equal(t, `book_id == ""`, code)
			require.Equal(t, []string{h}, literals)
		})
	}
}

func FuzzExpr(f *testing.F) {
	for _, h := range hostileValues {
		f.Add(h, h)
	}
	f.Fuzz(func(t *testing.T, tenant, book string) {
		_, literals := scan(t, Expr(citebook.Filter{Tenant: tenant, Books: []citebook.BookScope{{BookID: book, Version: 1}}}))
		require.Equal(t, []string{tenant, book}, literals)
	})
}

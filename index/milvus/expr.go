package milvus

import (
	"sort"
	"strconv"
	"strings"

	"github.com/citebook/citebook"
)

// notRetired is what the retired column holds for a chunk still in the newest
// build, so visibility is one comparison (retired > v) with no special case.
const notRetired = int64(1<<63 - 1)

// matchNothing is a well-formed expression no row satisfies. Milvus treats an
// empty expression as "every row", so a filter that admits nothing must never
// become one.
const matchNothing = "version < 0 && version > 0"

// Expr renders the access filter as a Milvus boolean expression. Every value
// is typed: integers are formatted as integers and every string goes through
// quote, so no ID can change the expression's structure. The zero Filter (no
// books) yields an expression that matches nothing.
func Expr(f citebook.Filter) string {
	if len(f.Books) == 0 {
		return matchNothing
	}
	// One clause per served version, not per book: a library of hundreds of
	// books then stays one flat clause (Milvus 2.3 rejects deeply nested
	// expressions with "unsupported expr proto node").
	byVersion := map[int][]string{}
	var versions []int
	for _, bs := range f.Books {
		if _, ok := byVersion[bs.Version]; !ok {
			versions = append(versions, bs.Version)
		}
		byVersion[bs.Version] = append(byVersion[bs.Version], bs.BookID)
	}
	sort.Ints(versions)
	var b strings.Builder
	b.WriteString("tenant_id == ")
	b.WriteString(quote(f.Tenant))
	b.WriteString(" && (")
	for i, v := range versions {
		if i > 0 {
			b.WriteString(" || ")
		}
		books := byVersion[v]
		if len(books) == 1 {
			b.WriteString("(book_id == ")
			b.WriteString(quote(books[0]))
		} else {
			b.WriteString("(book_id in ")
			b.WriteString(list(books))
		}
		n := strconv.FormatInt(int64(v), 10)
		b.WriteString(" && version <= ")
		b.WriteString(n)
		b.WriteString(" && retired > ")
		b.WriteString(n)
		b.WriteString(")")
	}
	b.WriteString(")")
	if len(f.DenyParents) > 0 {
		b.WriteString(" && parent_id not in ")
		b.WriteString(list(f.DenyParents))
	}
	return b.String()
}

// idsExpr selects chunks by primary key.
func idsExpr(ids []string) string { return "chunk_id in " + list(ids) }

// bookExpr selects every chunk of a book.
func bookExpr(bookID string) string { return "book_id == " + quote(bookID) }

// list renders strings as a Milvus array literal.
func list(values []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(v))
	}
	b.WriteByte(']')
	return b.String()
}

// quote renders s as a double-quoted Milvus string literal. Milvus parses
// string literals with C escape rules and decodes them with Go's
// strconv.Unquote, so Go quoting (which escapes quotes, backslashes, control
// characters and invalid bytes) round-trips exactly.
func quote(s string) string { return strconv.Quote(s) }

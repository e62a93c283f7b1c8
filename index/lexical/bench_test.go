package lexical

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/citebook/citebook"
)

// BenchmarkSearch100k searches ~100k paragraph chunks (Moby Dick copied into
// 10 tenants × 4 books) with one tenant's filter; the goal is a few ms.
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 10, 4) }

// BenchmarkSearch100kOneTenant is the shape of bench/load.sh: the same ~100k
// chunks as 40 books of one tenant, all in scope, so every posting of a
// common term is admitted and only top-k pruning avoids scoring it.
func BenchmarkSearch100kOneTenant(b *testing.B) { benchSearch(b, 1, 40) }

func benchSearch(b *testing.B, tenants, books int) {
	ctx := context.Background()
	paras := mobyChunks(b, "")
	dir := b.TempDir()
	x, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for tn := range tenants {
		for bk := range books {
			cs := make([]citebook.Chunk, len(paras))
			for i, p := range paras {
				p.ID = fmt.Sprintf("t%d-b%d-%s", tn, bk, p.ID)
				p.Tenant = fmt.Sprintf("t%d", tn)
				p.BookID = fmt.Sprintf("t%d-b%d", tn, bk)
				cs[i] = p
			}
			if err := x.Upsert(ctx, cs); err != nil {
				b.Fatal(err)
			}
			n += len(cs)
		}
	}
	// Reopening rebuilds the in-memory index from SQLite; log what a
	// restart costs at this size.
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if x, err = Open(ctx, dir); err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	b.Logf("%d chunks indexed; reopen took %s", n, time.Since(t0).Round(time.Millisecond))
	tenant := tenants / 2
	f := citebook.Filter{Tenant: fmt.Sprintf("t%d", tenant)}
	for bk := range books {
		f.Books = append(f.Books, citebook.BookScope{BookID: fmt.Sprintf("t%d-b%d", tenant, bk), Version: 1})
	}
	queries := []string{
		"Why does Ahab hunt the white whale?",
		"Queequeg's tomahawk pipe",
		"the Spouter-Inn",
		"harpooneer",
	}
	// Each query runs pruned (Search) and then through the exhaustive
	// scorer the tests hold it to, at the pipeline's depth (80), so the
	// ratio of the two is from one run.
	for _, q := range queries {
		for _, k := range []int{10, 80} {
			b.Run(fmt.Sprintf("%s/k=%d", q, k), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					hits, err := x.Search(ctx, q, f, f, k)
					if err != nil || len(hits) == 0 {
						b.Fatalf("%d hits, %v", len(hits), err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/k=%d/exhaustive", q, k), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if hits := exhaustive(x, q, f, f, k); len(hits) == 0 {
						b.Fatal("no hits")
					}
				}
			})
		}
	}
	// The question's word forms (qa.wordForms) merged into its terms, beside
	// the same query without them above: the cost of merging the postings
	// ("whale", in some 30k rows, is searched as itself: mergeMax).
	forms := map[string][]string{"hunt": {"hunted", "hunting"}, "whale": {"whaling", "whaled", "whaleman"}}
	b.Run("Why does Ahab hunt the white whale?/k=80/forms", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			hits, err := x.SearchForms(ctx, "Why does Ahab hunt the white whale?", forms, f, f, 80)
			if err != nil || len(hits) == 0 {
				b.Fatalf("%d hits, %v", len(hits), err)
			}
		}
	})
}

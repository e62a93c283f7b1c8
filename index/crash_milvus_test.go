package index_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/storetest"
)

// TestKillAtEveryPointMilvus is the kill-at-every-point test with the
// vectors in a real Milvus server: one collection for every kill point
// (each uses a book of its own), connected to afresh after each crash. It
// runs the first build of a book (the reported case) and a build that
// abandons a killed one (retire, discard and clean-up steps): all four
// histories take about ten minutes on Milvus, these two about half.
func TestKillAtEveryPointMilvus(t *testing.T) {
	addr := storetest.MilvusAddr(t)
	name := fmt.Sprintf("citebook_crash_%d_%d", os.Getpid(), time.Now().UnixNano())
	open := func(t *testing.T, _ string, dim int) index.VectorStore {
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: dim})
		require.NoError(t, err)
		return s
	}
	t.Cleanup(func() {
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: newEmbedder(t).Version().Dimension})
		if err == nil {
			if err := s.Drop(context.Background()); err != nil {
				t.Logf("dropping %s: %v", name, err)
			}
			s.Close()
		}
	})
	runKillMatrix(t, open, []string{"new", "abandon"})
}

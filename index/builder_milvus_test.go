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

// TestBuilderMilvus runs the builder suite on a Milvus server: required in
// CI (MILVUS_ADDR, started by scripts/milvus.sh), skipped on a developer
// machine without one.
func TestBuilderMilvus(t *testing.T) {
	addr := storetest.MilvusAddr(t)
	n := 0
	runBuilderSuite(t, func(t *testing.T, dim int) index.VectorStore {
		n++
		name := fmt.Sprintf("citebook_builder_%d_%d_%d", os.Getpid(), time.Now().UnixNano(), n)
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: dim})
		require.NoError(t, err)
		t.Cleanup(func() {
			if err := s.Drop(context.Background()); err != nil {
				t.Logf("dropping %s: %v", name, err)
			}
			s.Close()
		})
		return s
	})
}

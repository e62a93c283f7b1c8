package memstore

import (
	"context"
	"testing"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) index.VectorStore {
		s, err := Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

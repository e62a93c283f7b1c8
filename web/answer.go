package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/qa"
)

// decodeRequest reads a qa.Request from a JSON body.
func decodeRequest(c echo.Context) (qa.Request, error) {
	var req qa.Request
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if tl := bodyTooLarge(err); tl != nil {
			return req, tl
		}
		if errors.Is(err, io.EOF) {
			return req, citebook.Errorf(citebook.EINVALID, "send a JSON body with a \"question\"")
		}
		return req, citebook.Wrap(err, citebook.EINVALID, "malformed JSON body: %v", err)
	}
	// Checked before answering so a streamed request that breaks a rule
	// gets its status (400 or 413), not a 200 with an error event.
	return req, qa.Validate(&req)
}

func (s *Server) search(c echo.Context) error {
	req, err := decodeRequest(c)
	if err != nil {
		return err
	}
	res, err := s.cfg.Searcher.Search(c.Request().Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	if res == nil {
		res = []qa.SearchResult{}
	}
	return c.JSON(http.StatusOK, map[string]any{"results": res})
}

// wantsStream reports whether the client asked for server-sent events.
func wantsStream(r *http.Request) bool {
	if v := r.URL.Query().Get("stream"); v == "1" || v == "true" {
		return true
	}
	return strings.Contains(r.Header.Get(echo.HeaderAccept), "text/event-stream")
}

func (s *Server) ask(c echo.Context) error {
	req, err := decodeRequest(c)
	if err != nil {
		return err
	}
	if wantsStream(c.Request()) {
		return s.askStream(c, req)
	}
	start := time.Now()
	ans, err := s.cfg.Asker.Ask(c.Request().Context(), principalOf(c), req, nil)
	s.metrics.observeAsk(time.Since(start), ans != nil && ans.Refused, err)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ans)
}

// askStream sends the answer as server-sent events: "delta" events carry text
// as it is generated ({"text": ...}), one final "answer" event carries the
// whole answer with its verified citations, or an "error" event the error.
// Deltas are provisional: only the final answer's text is verified.
func (s *Server) askStream(c echo.Context, req qa.Request) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex // onDelta may be called from the answerer's goroutine
	send := func(event string, v any) {
		data, err := gojson.Marshal(v) // as jsonSerializer writes every other response
		if err != nil {
			s.log.Error("encoding event", "event", event, "err", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		w.Flush()
	}
	start := time.Now()
	ans, err := s.cfg.Asker.Ask(c.Request().Context(), principalOf(c), req, func(text string) {
		send("delta", map[string]string{"text": text})
	})
	s.metrics.observeAsk(time.Since(start), ans != nil && ans.Refused, err)
	if err != nil {
		code := citebook.ErrorCode(err)
		s.log.Info("streamed ask failed", "code", code, "err", err)
		send("error", errorBody{Error: errorDetail{Code: code, Message: citebook.ErrorMessage(err)}})
		return nil
	}
	send("answer", ans)
	return nil
}

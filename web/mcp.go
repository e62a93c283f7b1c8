package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/qa"
)

// SearchArgs are the inputs of the MCP "search" tool.
type SearchArgs struct {
	Query   string   `json:"query" jsonschema:"what to look for in the books"`
	BookIDs []string `json:"book_ids,omitempty" jsonschema:"restrict to these book IDs; empty searches every readable book"`
	K       int      `json:"k,omitempty" jsonschema:"passages per sub-query (0 for the default)"`
}

// SearchOutput is the structured result of the "search" tool.
type SearchOutput struct {
	Results []qa.SearchResult `json:"results"`
}

// AskArgs are the inputs of the MCP "ask" tool.
type AskArgs struct {
	Question string   `json:"question" jsonschema:"the question to answer from the books"`
	BookIDs  []string `json:"book_ids,omitempty" jsonschema:"restrict to these book IDs; empty uses every readable book"`
}

// AskOutput is the structured result of the "ask" tool: the answer and its
// verified citations (the trace stays with the HTTP API, for operators).
type AskOutput struct {
	Answer    string              `json:"answer"`
	Refused   bool                `json:"refused"`
	Citations []citebook.Citation `json:"citations"`
}

// mcpPrincipalKey is where the HTTP transport leaves the principal in the
// SDK's TokenInfo.
const mcpPrincipalKey = "citebook.principal"

// NewMCPServer builds the MCP server with the search and ask tools. With
// fixed set (stdio, one local client) every call runs as that principal;
// with nil (HTTP) each call runs as the principal of its bearer token.
func (s *Server) NewMCPServer(fixed *citebook.Principal) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "citebook", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Search and question the books of this citebook library. Answers cite book, page and the quoted passage.",
		Logger:       s.log,
	})
	principal := func(req *mcp.CallToolRequest) (citebook.Principal, error) {
		if fixed != nil {
			return *fixed, nil
		}
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			if p, ok := req.Extra.TokenInfo.Extra[mcpPrincipalKey].(citebook.Principal); ok {
				return p, nil
			}
		}
		return citebook.Principal{}, citebook.Errorf(citebook.EUNAUTHORIZED, "no principal for this MCP session")
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "search",
		Description: "Retrieve the passages of the books most relevant to a query, grouped by sub-query, with scores, book, heading path and page. Retrieval only: no answer is written.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in SearchArgs) (*mcp.CallToolResult, SearchOutput, error) {
		p, err := principal(req)
		if err != nil {
			return nil, SearchOutput{}, err
		}
		r := qa.Request{Question: in.Query, BookIDs: in.BookIDs, K: in.K}
		if err := qa.Validate(&r); err != nil {
			return nil, SearchOutput{}, toolError(err)
		}
		res, err := s.cfg.Searcher.Search(ctx, p, r)
		if err != nil {
			return nil, SearchOutput{}, toolError(err)
		}
		if res == nil {
			res = []qa.SearchResult{}
		}
		return nil, SearchOutput{Results: res}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "ask",
		Description: "Answer a question from the books. The answer's [n] markers refer to verified citations (book, page, quoted passage); refused is true when nothing in the books supports an answer.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in AskArgs) (*mcp.CallToolResult, AskOutput, error) {
		p, err := principal(req)
		if err != nil {
			return nil, AskOutput{}, err
		}
		r := qa.Request{Question: in.Question, BookIDs: in.BookIDs}
		if err := qa.Validate(&r); err != nil {
			return nil, AskOutput{}, toolError(err)
		}
		start := time.Now()
		ans, err := s.cfg.Asker.Ask(ctx, p, r, nil)
		s.metrics.observeAsk(time.Since(start), ans != nil && ans.Refused, err)
		if err != nil {
			return nil, AskOutput{}, toolError(err)
		}
		out := AskOutput{Answer: ans.Answer, Refused: ans.Refused, Citations: ans.Citations}
		if out.Citations == nil {
			out.Citations = []citebook.Citation{}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: renderAnswer(ans)}}}, out, nil
	})
	return srv
}

// toolError keeps internals out of tool results, as the HTTP API does.
func toolError(err error) error {
	return fmt.Errorf("%s: %s", citebook.ErrorCode(err), citebook.ErrorMessage(err))
}

// renderAnswer is the answer as text for models that ignore structured
// output: the answer, then one line per citation.
func renderAnswer(a *qa.Answer) string {
	var b strings.Builder
	b.WriteString(a.Answer)
	for _, c := range a.Citations {
		fmt.Fprintf(&b, "\n[%d] %s", c.N, c.BookTitle)
		if h := citebook.HeadingString(c.HeadingPath); h != "" {
			fmt.Fprintf(&b, ", %s", h)
		}
		if c.PrintedPages != "" {
			fmt.Fprintf(&b, ", pp. %s", c.PrintedPages)
		} else if c.PrintedPage != "" {
			fmt.Fprintf(&b, ", p. %s", c.PrintedPage)
		} else if c.Page > 0 {
			fmt.Fprintf(&b, ", page %d", c.Page)
		}
		fmt.Fprintf(&b, ": %q", c.Quote)
	}
	return b.String()
}

// mcpRoute is /mcp on echo. The body (already capped by limitBody) is read
// here, before the SDK sees it, so a body over the limit — declared or
// chunked — gets the JSON error shape like every other route instead of the
// SDK's plain-text 413.
func (s *Server) mcpRoute() echo.HandlerFunc {
	h := s.mcpHTTP()
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body != nil && req.Body != http.NoBody {
			data, err := io.ReadAll(req.Body)
			if err != nil {
				if tl := bodyTooLarge(err); tl != nil {
					return tl
				}
				return citebook.Wrap(err, citebook.EINVALID, "reading the request body")
			}
			req.Body = io.NopCloser(bytes.NewReader(data))
		}
		h.ServeHTTP(c.Response(), req)
		return nil
	}
}

// mcpHTTP serves MCP over streamable HTTP. It sits behind authenticate, which
// has already resolved the principal; the SDK's bearer middleware then hands
// it to the tools as TokenInfo and binds each session to its token, so one
// token cannot drive another's session.
func (s *Server) mcpHTTP() http.Handler {
	srv := s.NewMCPServer(nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: s.log})
	verify := func(_ context.Context, _ string, r *http.Request) (*mcpauth.TokenInfo, error) {
		cp, ok := principalFromContext(r.Context())
		if !ok {
			return nil, mcpauth.ErrInvalidToken
		}
		return &mcpauth.TokenInfo{
			UserID: cp.key + "/" + cp.p.Tenant + "/" + cp.p.User,
			Extra:  map[string]any{mcpPrincipalKey: cp.p},
		}, nil
	}
	guarded := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			// Zero-config loopback mode: authenticate accepted the request
			// without a token; give the SDK the bearer shape it requires.
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer local")
		}
		guarded.ServeHTTP(w, r)
	})
}

package qa

import (
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// MaxQuestion bounds a question's length in characters (not bytes, so a
// Chinese question gets as many characters as an English one); longer input
// is a document, not a question, and would only dilute retrieval.
const MaxQuestion = 4000

// MaxK bounds the passages a request may ask for.
const MaxK = 100

// Validate is the one check of a request, shared by every entry point (the
// pipeline itself, HTTP, SSE, MCP and the CLI), so a question is accepted or
// refused the same way — with the same code — however it arrives. It trims
// the question in place.
func Validate(req *Request) error {
	req.Question = strings.TrimSpace(req.Question)
	switch {
	case req.Question == "":
		return citebook.Errorf(citebook.EINVALID, "the question is empty")
	case utf8.RuneCountInString(req.Question) > MaxQuestion:
		return citebook.Errorf(citebook.ETOOLARGE, "the question is longer than %d characters", MaxQuestion)
	case req.K < 0 || req.K > MaxK:
		return citebook.Errorf(citebook.EINVALID, "k must be between 0 and %d", MaxK)
	case req.MinScore < 0:
		return citebook.Errorf(citebook.EINVALID, "min_score must not be negative")
	}
	return nil
}

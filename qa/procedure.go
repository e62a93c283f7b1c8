package qa

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/citebook/citebook"
)

// procedural matches questions asking how to do something, in English and
// Chinese.
var procedural = regexp.MustCompile(`(?i)^\s*(how (do|can|should|would|could|to)\b|what (are the )?steps\b|what is the (recommended|best) way\b|怎么|怎样|如何|步骤)`)

// procedureLead names the part of the book that answers a how-to question
// ("The book covers this in “Invoking R” (p. 95):") when the extractive
// answerer quoted it: a quoted passage shows one step, and the reader needs
// to know where the whole procedure is. Model answers say it themselves.
func procedureLead(question, model string, cits []citebook.Citation) string {
	if model != ExtractiveModel || len(cits) == 0 || !procedural.MatchString(question) {
		return ""
	}
	c := cits[0]
	if len(c.HeadingPath) == 0 {
		return ""
	}
	section := c.HeadingPath[len(c.HeadingPath)-1]
	page := c.PrintedPage
	if page == "" && c.Page > 0 {
		page = fmt.Sprint(c.Page)
	}
	if c.PrintedPages != "" {
		page = c.PrintedPages // the passage runs over a page break
	}
	if hasCJK(question) {
		if page != "" {
			return fmt.Sprintf("书中“%s”一节（第 %s 页）讲到：", section, page)
		}
		return fmt.Sprintf("书中“%s”一节讲到：", section)
	}
	if page != "" {
		p := "p."
		if c.PrintedPages != "" {
			p = "pp."
		}
		return fmt.Sprintf("The book covers this in “%s” (%s %s):", strings.TrimSpace(section), p, page)
	}
	return fmt.Sprintf("The book covers this in “%s”:", strings.TrimSpace(section))
}

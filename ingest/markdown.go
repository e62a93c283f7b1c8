package ingest

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

var (
	atxHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextLine  = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	fenceOpen   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	listItem    = regexp.MustCompile(`^ {0,3}(?:[-*+]|[0-9]{1,9}[.)])[ \t]+`)
	frontTitle  = regexp.MustCompile(`^title:[ \t]*(.*)$`)
	quotedValue = regexp.MustCompile(`^(["'])(.*)(["'])$`)
)

// ParseMarkdown reads a Markdown book: ATX and Setext headings build the
// heading paths, blank lines separate paragraphs, list items are blocks of
// their own and fenced code blocks are kept whole with their indentation.
// The title is the front matter's title, else the first level-1 heading.
func ParseMarkdown(ctx context.Context, data []byte) (doc *Document, err error) {
	defer parsing.Guard(citebook.FormatMarkdown, &err)
	if len(data) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "empty file")
	}
	if !utf8.Valid(data) {
		return nil, citebook.Errorf(citebook.EINVALID, "Markdown file is not UTF-8 text")
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")

	b := newBuilder(citebook.FormatMarkdown)
	lines = frontMatter(lines, b.doc)
	titleFromFront := b.doc.Title != ""

	type level struct {
		depth int
		title string
	}
	var stack []level
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.add(strings.Join(para, " "))
			para = para[:0]
		}
	}
	heading := func(depth int, title string) {
		flush()
		title = cleanTitle(title)
		if title == "" {
			return
		}
		for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{depth, title})
		path := make([]string, len(stack))
		for i, l := range stack {
			path[i] = l.title
		}
		b.doc.Outline = append(b.doc.Outline, OutlineEntry{Title: title, Level: len(stack) - 1})
		if depth == 1 && !titleFromFront && b.doc.Title == "" {
			b.doc.Title = title
		}
		b.heading(path)
		b.add(title)
	}

	for i := 0; i < len(lines); i++ {
		if i%4096 == 0 {
			if err := parsing.CheckCtx(ctx); err != nil {
				return nil, err
			}
		}
		line := lines[i]
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			flush()
			fence := m[1]
			start := i
			for i++; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
					break
				}
			}
			end := min(i+1, len(lines))
			b.addPre(strings.Join(lines[start:end], "\n"))
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case atxHeading.MatchString(line):
			m := atxHeading.FindStringSubmatch(line)
			heading(len(m[1]), m[2])
		case len(para) > 0 && setextLine.MatchString(line):
			title := strings.Join(para, " ")
			para = para[:0]
			depth := 1
			if strings.HasPrefix(trimmed, "-") {
				depth = 2
			}
			heading(depth, title)
		case listItem.MatchString(line):
			flush()
			para = append(para, trimmed)
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return b.finish("")
}

// frontMatter strips a YAML front-matter block and takes its title.
func frontMatter(lines []string, doc *Document) []string {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return lines
	}
	for i := 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "---" || l == "..." {
			return lines[i+1:]
		}
		if m := frontTitle.FindStringSubmatch(l); m != nil && doc.Title == "" {
			v := strings.TrimSpace(m[1])
			if q := quotedValue.FindStringSubmatch(v); q != nil && q[1] == q[3] {
				v = q[2]
			}
			doc.Title = cleanTitle(v)
		}
	}
	doc.Title = ""
	return lines // no closing line: it was not front matter
}

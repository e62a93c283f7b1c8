package qa

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// A manual often ends the sentence that answers on what it announces: "you
// should configure APT with its configuration parameter as the
// following." followed by the line to write, "You can send message to
// everyone who is logged on to the system with wall(1) by the following."
// followed by the command. The command is what the reader asked for, but
// a line typed at a prompt is no sentence (isCode), so a passage ended on
// the announcement and the answer stopped before it. Such a passage now
// quotes the block that follows it as well, when the block is short enough
// to read in an answer.

// announcing matches a sentence that ends by pointing at what follows it.
var announcing = regexp.MustCompile(`(?i)(\b(the following|as follows)\s*[.:]?|[:：]|如下[。：:]?)\s*$`)

// pointsAhead matches a sentence that names what follows it anywhere in
// it ("The following reconfigure the timezone used by the Debian system.",
// "… by one of the following commands."): it announces a block of
// commands typed at a prompt, nothing else (a list of terms may follow
// "The following priority levels are recognized …").
var pointsAhead = regexp.MustCompile(`(?i)\bfollowings?\b`)

// Limits of an announced block quoted with its announcement: a command,
// a configuration line or a few of them, not a table or a page of listing.
const (
	maxAnnouncedBytes = 400
	maxAnnouncedLines = 4
)

// announced returns the end of the block that text's passage ending at
// end announces, and the block as answer text; ok is false when the
// passage's last sentence announces nothing, or nothing short follows it
// in text (the block is the next paragraph: up to a blank line or the end
// of the chunk).
func announced(text string, end int, last string) (blockEnd int, block string, ok bool) {
	ends := announcing.MatchString(last)
	if !ends && !pointsAhead.MatchString(last) {
		return 0, "", false
	}
	rest := text[end:]
	start := len(rest) - len(strings.TrimLeft(rest, " \t\r\n"))
	if start == 0 && rest != "" {
		return 0, "", false // the sentence goes on: no block begins here
	}
	body := rest[start:]
	if i := strings.Index(body, "\n\n"); i >= 0 {
		body = body[:i]
	}
	body = strings.TrimRight(body, " \t\r\n")
	lines := strings.Split(body, "\n")
	if body == "" || len(body) > maxAnnouncedBytes || len(lines) > maxAnnouncedLines {
		return 0, "", false
	}
	if !ends && !prompted(lines) {
		return 0, "", false
	}
	if announcing.MatchString(lines[len(lines)-1]) {
		// A caption announcing what comes next ("Input file form with
		// names and row labels:" above a table): still no answer.
		return 0, "", false
	}
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			parts = append(parts, blockLine(l))
		}
	}
	return end + start + len(body), strings.Join(parts, " "), true
}

// blockLine is one line of an announced block as answer text: a sentence
// stays prose, anything else (a command, a configuration line, a value) is
// set as code, with the prompt it was typed at dropped as readable does.
func blockLine(l string) string {
	if !isCode(l) && prose(l) {
		return l
	}
	cmd, _ := dropPrompt(l)
	return "`" + cmd + "`"
}

// prose reports whether a line reads as a sentence: four words or more
// (six CJK characters: they are written without spaces), ending as a
// sentence ends.
func prose(l string) bool {
	r, _ := utf8.DecodeLastRuneInString(l)
	if !strings.ContainsRune(".!?。！？", r) {
		return false
	}
	cjk := 0
	for _, c := range l {
		if analysis.IsCJK(c) {
			cjk++
		}
	}
	return len(strings.Fields(l)) >= 4 || cjk >= 6
}

// prompted reports whether every line is typed at a prompt (isCode).
func prompted(lines []string) bool {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !isCode(l) {
			return false
		}
	}
	return true
}

package analysis

import (
	"strings"
	"sync"
	"unicode"

	"github.com/longbridgeapp/opencc"
)

// Scripts converts Chinese text between its simplified and traditional
// scripts with OpenCC's dictionaries (phrase-aware: 頭髮 → 头发, 乾隆
// stays), so a question asked in one script can be searched in the one the
// books print: a traditional bigram such as 編譯 is no term of a book that
// prints 编译, and a question in the other script matches little but the
// characters both scripts share. The conversion is for matching only; a
// quote is always the book's own text.
//
// The dictionaries (≈ 9 MB in memory) load on the first text with Han
// characters, so a library of English books never holds them.
type Scripts struct {
	once                        sync.Once
	toSimplified, toTraditional *opencc.OpenCC
	err                         error
}

// NewScripts returns a converter; it loads nothing yet.
func NewScripts() *Scripts { return &Scripts{} }

func (s *Scripts) load() {
	if s.toSimplified, s.err = opencc.New("t2s"); s.err == nil {
		s.toTraditional, s.err = opencc.New("s2t")
	}
}

// Variants returns text in simplified and in traditional script, each only
// when it differs from text: nil for text without Han characters or when
// neither conversion changes it. The error is the dictionaries' failure to
// load (they are compiled into the binary). Safe for concurrent use: the
// converters only read their dictionaries.
func (s *Scripts) Variants(text string) ([]string, error) {
	if !hasHan(text) {
		return nil, nil
	}
	s.once.Do(s.load)
	if s.err != nil {
		return nil, s.err
	}
	var out []string
	for _, cc := range []*opencc.OpenCC{s.toSimplified, s.toTraditional} {
		v, err := convertHan(cc, text)
		if err != nil {
			return nil, err
		}
		if v != text {
			out = append(out, v)
		}
	}
	return out, nil
}

// convertHan converts the runs of Han characters of text and keeps the rest
// as it is: the words, numbers and symbols around them are searched as
// typed, and OpenCC's tries take some control characters for dictionary
// keys ("\x01編" came back "编编").
func convertHan(cc *opencc.OpenCC, text string) (string, error) {
	var b strings.Builder
	start := -1 // byte offset of the current Han run
	flush := func(end int) error {
		if start < 0 {
			return nil
		}
		v, err := cc.Convert(text[start:end])
		if err != nil {
			return err
		}
		b.WriteString(v)
		start = -1
		return nil
	}
	for i, r := range text {
		if isHan(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if err := flush(i); err != nil {
			return "", err
		}
		b.WriteRune(r)
	}
	if err := flush(len(text)); err != nil {
		return "", err
	}
	return b.String(), nil
}

func isHan(r rune) bool { return r >= 0x2E80 && unicode.Is(unicode.Han, r) }

func hasHan(s string) bool {
	for _, r := range s {
		if isHan(r) {
			return true
		}
	}
	return false
}

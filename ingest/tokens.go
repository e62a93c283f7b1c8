package ingest

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/citebook/citebook"
)

// encodingName is the BPE vocabulary chunk budgets are measured in: the one
// shared by the common embedding and chat models, so a budget means about the
// same to every provider.
const encodingName = tokenizer.Cl100kBase

// loadEncoding builds the codec once per process. tiktoken-go/tokenizer
// compiles the vocabulary into the binary and its split pattern into Go code,
// so counting never reaches the network and runs two to three times faster
// than a pattern interpreted at run time; counting is the expensive step of
// chunking.
var loadEncoding = sync.OnceValues(func() (*codec.Codec, error) {
	enc, err := tokenizer.Get(encodingName)
	if err != nil {
		return nil, err
	}
	c, ok := enc.(*codec.Codec)
	if !ok {
		return nil, citebook.Errorf(citebook.EINTERNAL, "tokenizer %s has unexpected type %T", encodingName, enc)
	}
	return c, nil
})

// Tokenizer counts tokens the way the embedding and chat models see text, so
// chunk budgets hold for the model rather than for a word-count guess. It is
// safe for concurrent use.
type Tokenizer struct {
	enc tokenizer.Codec
}

// NewTokenizer loads the cl100k_base vocabulary compiled into the binary.
func NewTokenizer() (*Tokenizer, error) {
	enc, err := loadEncoding()
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "load tokenizer %s", encodingName)
	}
	return &Tokenizer{enc: enc}, nil
}

// Count returns the number of tokens in s. Special tokens such as
// <|endoftext|> in book text count as the ordinary text they are.
func (t *Tokenizer) Count(s string) int {
	if s == "" {
		return 0
	}
	n, err := t.enc.Count(s)
	if err != nil {
		// The split pattern gave up (a backtracking limit on pathological
		// input). Every token holds at least one byte, so the length keeps a
		// budget a hard limit without failing the book.
		return len(s)
	}
	return n
}

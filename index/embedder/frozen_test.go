package embedder

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// hash-ngram-v1 vectors are stored in every library built with the builtin
// embedder, so its features must never change under that name: the digest
// below was taken from the vectors of these texts when the version was
// frozen (with the lexical index's stemming of 2026-12-03, before sibilant
// plurals: "taxes" is hashed as "taxe"). A change that fails this test
// needs a new model version and a re-embed, not a new digest.
func TestBuiltinV1Frozen(t *testing.T) {
	texts := []string{
		"Income taxes, boxes and indexes: the matches, searches and hashes of branches.",
		"An Introduction to R — vectors, lists, data frames; x <<- 3; %in%",
		"一份（不太）简短的 LaTeX2ε 介绍 ＰＤＦ ２０２４年 naïve café studies classes",
	}
	vs, err := NewBuiltin(0).EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	h := fnv.New64a()
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	require.Equal(t, uint64(0x26b6e56598620b34), h.Sum64())
}

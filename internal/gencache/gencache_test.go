package gencache

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCache(t *testing.T) {
	ctx := context.Background()
	gen, reads := int64(1), 0
	var genErr, readErr error
	c := New[string, int](func(context.Context) (int64, error) { return gen, genErr }, 2)
	read := func(context.Context) (int, error) { reads++; return reads, readErr }

	v, err := c.Get(ctx, "a", read)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	v, _ = c.Get(ctx, "a", read)
	require.Equal(t, 1, v, "same generation: cached")
	v, _ = c.Get(ctx, "b", read)
	require.Equal(t, 2, v, "keys are cached apart")

	gen = 2
	v, _ = c.Get(ctx, "a", read)
	require.Equal(t, 3, v, "the generation moved: read again")

	readErr = errors.New("database down")
	gen = 3
	_, err = c.Get(ctx, "a", read)
	require.ErrorIs(t, err, readErr)
	readErr = nil
	v, _ = c.Get(ctx, "a", read)
	require.Equal(t, 5, v, "a failed read is not cached")

	genErr = errors.New("change log down")
	_, err = c.Get(ctx, "a", read)
	require.ErrorIs(t, err, genErr)
	require.Equal(t, 5, reads, "no read without a generation")
	genErr = nil

	v, _ = c.Get(ctx, "c", read)
	require.Equal(t, 6, v)
	require.Len(t, c.m, 1, "a full cache starts over")
}

// TestOlderReadKeepsNewer: a read stamped with an older generation that
// finishes after a newer one does not replace it.
func TestOlderReadKeepsNewer(t *testing.T) {
	ctx := context.Background()
	gen := int64(5)
	c := New[string, string](func(context.Context) (int64, error) { return gen, nil }, 4)
	_, err := c.Get(ctx, "k", func(context.Context) (string, error) {
		// While this read (at generation 5) runs, another reader at
		// generation 6 stores its value.
		gen = 6
		_, err := c.Get(ctx, "k", func(context.Context) (string, error) { return "new", nil })
		require.NoError(t, err)
		gen = 5
		return "old", nil
	})
	require.NoError(t, err)
	gen = 6
	v, _ := c.Get(ctx, "k", func(context.Context) (string, error) { return "read again", nil })
	require.Equal(t, "new", v)
}

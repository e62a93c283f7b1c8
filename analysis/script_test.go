package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScriptsVariants: a question typed in Taiwan's or Hong Kong's
// traditional forms has the simplified form lshort-zh-cn prints among its
// variants, a simplified one its traditional form; phrases convert as
// phrases (乾隆 is a name, not 干隆), and text without Han characters has no
// variants, nor has text both scripts write alike.
func TestScriptsVariants(t *testing.T) {
	s := NewScripts()
	for _, tt := range []struct {
		in, want string
	}{
		{"為什麼我在 \\TeX 後面敲的空格，在輸出裡不見了？", "为什么我在 \\TeX 后面敲的空格，在输出里不见了？"},
		{"寫頁碼範圍時，應該用哪一種橫線？", "写页码范围时，应该用哪一种横线？"},
		{"头发和乾隆", "頭髮和乾隆"},
		{"編譯兩遍", "编译两遍"},
	} {
		vs, err := s.Variants(tt.in)
		require.NoError(t, err)
		require.Contains(t, vs, tt.want, tt.in)
		require.NotContains(t, vs, tt.in, "a variant differs from the text")
	}
	// No Han characters, or none either conversion changes (中文 is both).
	for _, in := range []string{"", "How do I merge two data frames?", "LaTeX 2ε", "中文"} {
		vs, err := s.Variants(in)
		require.NoError(t, err)
		require.Empty(t, vs, in)
	}
}

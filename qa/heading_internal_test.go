package qa

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// TestLeadHeading: a chunk's first line is its heading line when it is one
// of its headings, numbered or not; a sentence that merely folds to the
// title ("威拍哇丽兰室路（；" of an article so titled) is not, nor is a title
// anywhere but the first line.
func TestLeadHeading(t *testing.T) {
	for _, c := range []struct {
		text string
		path []string
		head string
	}{
		{"6.3. Controlling terminal for maintainer scripts\n\nMaintainer scripts are not guaranteed …", []string{"Package maintainer scripts", "Controlling terminal for maintainer scripts"}, "6.3. Controlling terminal for maintainer scripts"},
		{"CHAPTER 12. Biographical.\n\nQueequeg was a native of Rokovoko.", []string{"CHAPTER 12. Biographical."}, "CHAPTER 12. Biographical."},
		{"A.2 Sample session\n\nLogin.", []string{"Appendix", "Sample session"}, "A.2 Sample session"},
		{"Chapter 4 Factors\n\nA factor is …", []string{"Factors"}, "Chapter 4 Factors"},
		{"i386 或 amd64 的蓝光光盘 iso 映像\n\n这个 ISO 映像大约 5 GB 大", []string{"安装和下载选项", "i386 或 amd64 的蓝光光盘 iso 映像"}, "i386 或 amd64 的蓝光光盘 iso 映像"},
		{"威拍哇丽兰室路（；）又名「第三十一公路」\n\n它起始于", []string{"威拍哇丽兰室路"}, ""},
		{"Virtual packages are names.\n\nMore.", []string{"Virtual packages"}, ""},
		{"An array can be …\n\n5.1 Arrays", []string{"Arrays"}, ""},
		{"附件 C——旧发布版本中的特点", []string{"附件 C——旧发布版本中的特点"}, "附件 C——旧发布版本中的特点"}, // the title alone
		{"Key: the 2018 results\n\nText.", []string{"the 2018 results"}, ""},
	} {
		ch := citebook.Chunk{Text: c.text, HeadingPath: c.path}
		head, end := leadHeading(&ch)
		require.Equal(t, c.head, head, c.text)
		if c.head == "" {
			require.Zero(t, end, c.text)
			require.False(t, leadsSection(&ch, 0), c.text)
			continue
		}
		body := strings.Index(c.text, "\n\n") + 2
		if body == 1 {
			require.Equal(t, len(c.text), end, "%s: nothing after the title", c.text)
			continue
		}
		require.True(t, leadsSection(&ch, body), "%s: the first sentence after it", c.text)
		require.False(t, leadsSection(&ch, body+3), "%s: a later quote", c.text)
	}
}

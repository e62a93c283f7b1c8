package qa

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnnounced: a passage ending on "the following" or a colon quotes the
// short block after it, a command set as code (a shell prompt dropped, the
// root prompt kept) and a sentence as prose; anything else adds nothing.
func TestAnnounced(t *testing.T) {
	for _, tc := range []struct {
		name, lead, rest string
		want             string // the block as answer text; "" for none
	}{
		{"configuration line", "you should configure APT with its configuration parameter as the following.",
			"\n\nAPT::Acquire::http::Dl-Limit ”800”;\n\nMore prose.", "`APT::Acquire::http::Dl-Limit ”800”;`"},
		{"prompt dropped", "You can send message to everyone with wall(1) by the following.",
			"\n\n$ echo ”We are shutting down in 1 hour” | wall", "`echo ”We are shutting down in 1 hour” | wall`"},
		{"root prompt kept", "Run it at once by the following:", "\n\n# echo ”shutdown -h now” | at now",
			"`# echo ”shutdown -h now” | at now`"},
		{"two lines", "To calculate the mean we use tapply():", "\n> m <- tapply(x, f, mean)\n> m\n\nNext.",
			"`m <- tapply(x, f, mean)` `m`"},
		{"prose stays prose", "Proceed as follows:", "\n\nOpen the file and change the first line.",
			"Open the file and change the first line."},
		{"Chinese", "可令LATEX编译后不生成DVI或者PDF文档，只排查错误，编译速度会快不少：",
			"\n\n\\usepackage{syntonly}\n\\syntaxonly\n\n", "`\\usepackage{syntonly}` `\\syntaxonly`"},
		{"Chinese prose stays prose", "\\pagenumbering命令令我们能够改变页眉页脚中的页码样式：",
			"\n\n\\pagenumbering{⟨style⟩}\n⟨style⟩为页码样式，默认为arabic（阿拉伯数字）。",
			"`\\pagenumbering{⟨style⟩}` ⟨style⟩为页码样式，默认为arabic（阿拉伯数字）。"},
		{"announces nothing", "The following priority levels are recognized by the tools.", "\n\nrequired\n\nPackages …", ""},
		{"names what follows, commands follow", "The following reconfigure the timezone used by the Debian system.",
			"\n\n# dpkg-reconfigure tzdata\n\nMore.", "`# dpkg-reconfigure tzdata`"},
		{"by one of the following commands", "You can print a manual page nicely by one of the following commands.",
			"\n\n$ man -Tps some_manpage | lpr\n$ man -Tps some_manpage | lp", "`man -Tps some_manpage | lpr` `man -Tps some_manpage | lp`"},
		{"names what follows, prose follows", "The following sets the time.", "\n\nThis is done by the clock daemon.", ""},
		{"a caption announcing more", "the first few lines of a file might look as follows.",
			"\n\nInput file form with names and row labels:\n\n Price Floor", ""},
		{"sentence goes on", "It ends with a colon:", "the rest of it", ""},
		{"nothing follows", "Do the following:", "\n\n", ""},
		{"too many lines", "The output is as follows:", "\n" + strings.Repeat("line\n", maxAnnouncedLines+1), ""},
		{"too long", "Type the following:", "\n\n" + strings.Repeat("x", maxAnnouncedBytes+1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "Before. " + tc.lead + tc.rest
			end := strings.Index(text, tc.lead) + len(tc.lead)
			blockEnd, block, ok := announced(text, end, tc.lead)
			require.Equal(t, tc.want != "", ok)
			require.Equal(t, tc.want, block)
			if ok {
				// The quote grows to the end of the block, verbatim.
				require.Equal(t, strings.TrimSpace(text[end:blockEnd]), strings.TrimSpace(strings.Split(strings.TrimLeft(tc.rest, "\n "), "\n\n")[0]))
			}
		})
	}
}

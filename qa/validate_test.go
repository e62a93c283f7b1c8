package qa

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

func TestValidate(t *testing.T) {
	zh := func(n int) string { return string([]rune(strings.Repeat("设备树", n/3+1))[:n]) }
	for _, tc := range []struct {
		name string
		req  Request
		code string // "" when the request is valid
		want string // the question after trimming
	}{
		{"plain", Request{Question: "What is a device tree?"}, "", "What is a device tree?"},
		{"trimmed", Request{Question: "  why?\n"}, "", "why?"},
		{"empty", Request{}, citebook.EINVALID, ""},
		{"only spaces", Request{Question: " \t\n "}, citebook.EINVALID, ""},
		{"2,000 Chinese characters are 6,000 bytes but within the limit", Request{Question: zh(2000)}, "", zh(2000)},
		{"4,000 characters is the limit", Request{Question: zh(MaxQuestion)}, "", zh(MaxQuestion)},
		{"4,001 Chinese characters", Request{Question: zh(MaxQuestion + 1)}, citebook.ETOOLARGE, ""},
		{"4,001 ASCII characters", Request{Question: strings.Repeat("a", MaxQuestion+1)}, citebook.ETOOLARGE, ""},
		{"spaces do not count", Request{Question: " " + zh(MaxQuestion) + " "}, "", zh(MaxQuestion)},
		{"k at its bounds", Request{Question: "q", K: MaxK}, "", "q"},
		{"k negative", Request{Question: "q", K: -1}, citebook.EINVALID, ""},
		{"k too large", Request{Question: "q", K: MaxK + 1}, citebook.EINVALID, ""},
		{"min score negative", Request{Question: "q", MinScore: -0.1}, citebook.EINVALID, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			err := Validate(&req)
			if tc.code == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, req.Question)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.code, citebook.ErrorCode(err))
		})
	}
}

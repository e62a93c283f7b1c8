package qa

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Contents pages, whose dot leaders cleaning folds into "…", must look like
// lists; prose with an ordinary ellipsis must not.
func TestLeaderShare(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		list bool
	}{
		{"folded leaders (R-intro contents)", "3.1 Intrinsic attributes: mode and length … 14 3.2 Changing the length of an object … 15 3.3 Getting and setting attributes … 15", true},
		{"spaced dot leaders", "2 Simple manipulations; numbers and vectors . . . . . . . . 8", true},
		{"roman page numbers", "Preface … v Acknowledgements … vii Contents … ix", true},
		{"prose with an ellipsis", "He paused… and then, after a long while, went on with the story of the whale.", false},
		{"prose with numbers", "Because of this, mode and length are also called intrinsic attributes of an object, see page 14.", false},
		{"ellipsis before a word", "The values … increase steadily across the three years reported in the table.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.list, leaderShare(tc.text) > 0.2, "leaderShare = %.3f", leaderShare(tc.text))
		})
	}
}

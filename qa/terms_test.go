package qa

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citebook/citebook/analysis"
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

// The asker's words for themself and indefinite pronouns name no topic: a
// question's key terms are what the book must be about ("What steps"
// frames a procedure: asksSteps). Nor do a hedge on the number asked for
// ("roughly", "approximately") or an attribution ("according to Thoreau"):
// rare in books, they weighed most and no passage held them. Nor do "OK"
// or a unit of size.
func TestQuestionTermsLeaveOutTheAsker(t *testing.T) {
	for q, want := range map[string][]string{
		"What steps set up automatic monitoring that warns me before one of my hard disks fails?": {"set", "automatic", "monitoring", "warn", "hard", "disk", "fail"},
		"Anyone with physical access to my machine can reset the root password.":                  {"physical", "access", "machine", "reset", "root", "password"},
		"Can someone tell me whether my fix or yours is better, in the book's words?":             {"whether", "fix", "better", "book", "word"},
		"Roughly how many example datasets come bundled with R itself?":                           {"example", "dataset", "come", "bundled", "r"},
		"Approximately how much did the food cost each week?":                                     {"food", "cost", "week"},
		"According to Thoreau, which cities drank Walden water?":                                  {"thoreau", "city", "drank", "walden", "water"},
		// "Is it OK to …" asks leave, and a size's unit is how its number
		// is written ("1 GB", "1GiB", "1024 MB").
		"Do I have to type the password in every ssh command?":  {"type", "password", "ssh", "command"},
		"Is it OK to keep a swap file on an SSD?":               {"keep", "swap", "file", "ssd"},
		"Why does top show 20 MB free when I have 1 GB of RAM?": {"top", "show", "20", "free", "1", "ram"},
		// The "m" of "I'm" is "am"; a lone "m" elsewhere is a variable.
		"I'm writing the Description field of an m by n table.": {"writing", "description", "field", "m", "n", "table"},
		"I’m logged in over SSH.":                               {"logged", "ssh"},
	} {
		assert.Equal(t, want, questionTerms(q, analysis.Terms), q)
	}
}

package qa

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAskedType(t *testing.T) {
	for _, c := range []struct {
		question string
		want     answerType
	}{
		{"What time is dinner served today?", typeClock},
		{"At what hour does the cron job run?", typeClock},
		{"明天几点开会？", typeClock},
		{"On what date did he move into the house?", typeDate},
		{"In what year was the package first released?", typeDate},
		{"明圣王后何时受册为王妃？", typeDate},
		{"How many bits does an overflow page address have?", typeQuantity},
		{"炮身的容量有多大？几升？", typeQuantity},
		{"When R fills an array from a plain vector, does it fill it row by row?", typeAny},
		{"Why did the authors choose linear hashing?", typeAny},
	} {
		require.Equal(t, c.want, askedType(c.question), c.question)
	}
}

func TestStatedIn(t *testing.T) {
	for _, c := range []struct {
		kind answerType
		text string
		want bool
	}{
		{typeClock, "today at 8:30 a.m., Eastern Time", true},
		{typeClock, "I used to hoe from five o’clock in the morning till noon", true},
		{typeClock, "He served as Executive Vice President until that time.", false},
		{typeDate, "which, by accident, was on Independence Day, or the Fourth of July, 1845", true},
		{typeDate, "on the night of the 22d of December", true},
		{typeDate, "该银行创立于1957年4月26日", true},
		{typeDate, "You may also call it from a function.", false},
		{typeQuantity, "the length of whose rows, added together, was seven miles", true},
		{typeQuantity, "a public-domain clone of the latter", false},
		{typeAny, "1845", false},
	} {
		require.Equal(t, c.want, c.kind.statedIn(c.text), "%d %q", c.kind, c.text)
	}
}

// TestSubject: a time or date question's coverage is judged without the
// words that ask for its type.
func TestSubject(t *testing.T) {
	keys := func(ws ...string) []keyTerm {
		var out []keyTerm
		for _, w := range ws {
			out = append(out, keyTerm{text: w, weight: 1})
		}
		return out
	}
	texts := func(ks []keyTerm) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.text)
		}
		return out
	}
	require.Equal(t, []string{"dinner", "served"}, texts(typeClock.subject(keys("time", "dinner", "served", "today"))))
	require.Equal(t, []string{"pond", "freeze"}, texts(typeDate.subject(keys("night", "pond", "freeze"))))
	require.Equal(t, []string{"time", "today"}, texts(typeClock.subject(keys("time", "today"))), "nothing else left")
	require.Equal(t, []string{"time", "long"}, texts(typeQuantity.subject(keys("time", "long"))), "other types keep them")
}

package qa

import (
	"regexp"
	"slices"
)

// answerType is the kind of statement a question asks for, read from its
// wording: "how many" wants a quantity, "on what date" a date, "what time" a
// time of day. A passage that states one is the likelier answer than one
// that only shares the question's words (the extractive answer weighs it up),
// and for a time of day the answerability check requires one: its words
// ("time", "served") are everyday words a book uses in other senses.
type answerType int

const (
	typeAny answerType = iota
	typeQuantity
	typeDate
	typeClock
)

// typeBoost is the weight given to a passage stating what the question's
// answer type asks for.
const typeBoost = 1.5

// The questions of each type, tried in this order (clock before date: "at
// what time of day" is a time; date before quantity: "how long ago" is
// rare, "what year" common).
var (
	asksClockTime = regexp.MustCompile(`(?i)\b(what|which) time\b|\bat what hour\b|几点`)
	asksDate      = regexp.MustCompile(`(?i)\b(what|which) (date|day|year|month|night)\b|\bin what year\b|哪一?年|哪一?天|什么时候|几月|几号|何时`)
	asksQuantity  = regexp.MustCompile(`(?i)\bhow (many|much|long|large|big|often|far)\b|\bwhat (percentage|number|proportion)\b|几|多少|百分之`)
)

// What each type's statement looks like.
var (
	// clockTime: 7:30, 7 p.m., 10am, noon, midnight, o'clock, 七点, 19点.
	clockTime = regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(a\.?m\b|p\.?m\b)|\b(noon|midnight|o['’]clock)\b|[0-9一二三四五六七八九十两]+\s*点`)
	// dateWord: a month or weekday (capitalised: "may" is a verb), a
	// year (1000–2099), a day of the month ("the 22d", "4th"), a numeric
	// date, 1845年, 十二月, 3日.
	dateWord = regexp.MustCompile(`\b(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b|\b(1\d|20)\d{2}\b|\b\d{1,2}(st|nd|rd|th|d)\b|\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b|\d+\s*[年月日号]|[一二三四五六七八九十]+\s*[月日号]`)
	// quantityWord: a number in digits or words.
	quantityWord = regexp.MustCompile(`(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|million|billion|half|twice|double)\b|[一二三四五六七八九十百千万两]`)
)

// askedType reads the answer type of a question (typeAny when it asks for
// no particular kind of statement).
func askedType(question string) answerType {
	switch {
	case asksClockTime.MatchString(question):
		return typeClock
	case asksDate.MatchString(question):
		return typeDate
	case asksQuantity.MatchString(question):
		return typeQuantity
	}
	return typeAny
}

// statedIn reports whether text states a statement of the type (always
// false for typeAny).
func (t answerType) statedIn(text string) bool {
	switch t {
	case typeClock:
		return clockTime.MatchString(text)
	case typeDate:
		return dateWord.MatchString(text)
	case typeQuantity:
		return quantityWord.MatchString(text)
	}
	return false
}

// typeWords are the words by which a question asks for a time or a date
// ("what time", "on what date", "today"): they name the answer's type, not
// its subject, and a passage stating "today at 8:30 a.m." holds them
// without being about what the question asks ("What time is dinner served
// today?" of an earnings release's conference call).
var typeWords = []string{"time", "date", "day", "year", "month", "night", "hour", "today", "tonight", "tomorrow"}

// subject returns the key terms of a question of this type without its
// type words (all of them for other types, and when nothing else would be
// left).
func (t answerType) subject(keys []keyTerm) []keyTerm {
	if t != typeClock && t != typeDate {
		return keys
	}
	out := slices.DeleteFunc(slices.Clone(keys), func(k keyTerm) bool { return slices.Contains(typeWords, k.text) })
	if len(out) == 0 {
		return keys
	}
	return out
}

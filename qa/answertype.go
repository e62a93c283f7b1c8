package qa

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook/analysis"
)

// answerType is the kind of statement a question asks for, read from its
// wording: "how many" wants a quantity, "how long" a measure (a number with
// its unit), "on what date" a date, "what time" a
// time of day, "why" a reason, "who wrote" an agent, "if I don't set it"
// the default. A passage that states one is the likelier answer than one
// that only shares the question's words (the extractive answer weighs it up),
// and for a time of day the answerability check requires one: its words
// ("time", "served") are everyday words a book uses in other senses.
type answerType int

const (
	typeAny answerType = iota
	typeQuantity
	typeDate
	typeClock
	typeReason
	typeMeasure
	typeAgent
	typeDefault
)

// typeBoost is the weight given to a passage stating what the question's
// answer type asks for.
const typeBoost = 1.5

// The questions of each type, tried in this order (clock before date: "at
// what time of day" is a time; date before quantity: "how long ago" is
// rare, "what year" common; a measure before a quantity: "how long" wants
// a unit; a reason after them: "why" with "how many" asks the number;
// an agent last: "why was it written, and by whom?" asks the reason too).
var (
	asksClockTime = regexp.MustCompile(`(?i)\b(what|which) time\b|\bat what hour\b|几点`)
	// "When did / was / were …" asks when a past event happened, a date;
	// "When does R print a warning?" asks on what condition, and "When R
	// fills an array …, does it …" is no question of time.
	asksDate     = regexp.MustCompile(`(?i)\b(what|which) (date|day|year|month|night)\b|\bin what year\b|(^|[,;]\s*|\band\s+)when\s+(did|was|were)\b|哪一?年|哪一?天|什么时候|几月|几号|何时`)
	asksReason   = regexp.MustCompile(`(?i)\bwhy\b|为什么|为何|为啥|什么原因|原因是什么`)
	asksQuantity = regexp.MustCompile(`(?i)\bhow (many|much|often)\b|\bwhat (percentage|number|proportion)\b|几|多少|百分之`)
	// The adjective of a "how" question names what its answer states: a
	// measure ("how long", "how large": a number with its unit), or a
	// frequency, a time or a speed ("how often", "how soon", "how fast": a
	// number will do). It frames the question as "how many" does, and is
	// no key term (howWords). Chinese asks a measure by 多 and the
	// adjective (有多大, 多长, 多久: "这个 ISO 映像大约 5 GB 大").
	asksMeasure   = regexp.MustCompile(`(?i)\bhow\s+(long|large|big|far|old|tall|wide|deep|high|heavy)\b|多(大|长|远|久|高|宽|深|重|厚)`)
	asksFrequency = regexp.MustCompile(`(?i)\bhow\s+(often|frequently|soon|early|late|fast)\b`)
	// "What steps …", "What are the steps to …" asks for a procedure, as
	// "how do I" does: "steps" names the answer's form, not its topic
	// ("resetting the password is relatively easy with following steps"
	// answered how to set up disk monitoring).
	asksSteps = regexp.MustCompile(`(?i)\b(?:what|which)\s+(?:are\s+the\s+)?(steps)\b`)
	// "… if I don't set it", "without specifying them", "by default": the
	// question asks what holds when nothing is chosen, which a book states
	// as the default ("defaults to 256 bytes", "by default, the package
	// allocates up to 64K"); a passage that only shares the question's
	// words gives the range tried or the parameter's name. It goes before
	// a measure or a quantity: "how much memory … if I don't set it" asks
	// the default amount, and the sentence giving it holds a number too.
	asksDefault = regexp.MustCompile(`(?i)\bdefault\b|` + unsetFrame + `|\bout\s+of\s+the\s+box\b|默认|缺省`)
	// defaultFrame is the words by which a question says nothing was
	// chosen ("without specifying", "if I don't set it"): they frame the
	// default asked for, and as key terms they were the words matched
	// ("setting", no word of the page that says "defaults to 256 bytes",
	// weighed most). "Default" itself stays a key term: books print it.
	defaultFrame = regexp.MustCompile(`(?i)` + unsetFrame)
	// "Who wrote …", "… and by whom?", "who is the author of …": the
	// answer names who did it ("written by Ken Thompson"), and the verb
	// asks for that agent in the book's own words ("wrote" is "written by"
	// or "developed by" there): it is no key term (agentWords). "Who was
	// Cato Ingraham?" asks what someone is, not who did a thing. English
	// only (see agentWord).
	asksAgent = regexp.MustCompile(`(?i)\bby whom\b|\bwho\s+(?:first\s+|originally\s+)?(wrote|written|developed|designed|created|invented|founded|built|discovered|introduced|proposed|authored|coined|devised|implemented|translated|edited|maintains|maintained|started)\b|\bwho\s+(?:is|was|are|were)\s+the\s+(author|creator|inventor|founder|designer|developer|maintainer|translator|editor)s?\s+of\b`)
)

// asksDoer matches a question asking who did a deed: "who" and a verb in
// the past opening it, one of its sentences or a clause ("Who paid
// Thoreau's overdue tax …?", "… after he moved out — who bought it, and
// …"); group 1 is the verb. A relative clause ("warn everyone who is
// logged in", "tell me who really uploaded it") opens no clause of the
// question's own.
var asksDoer = regexp.MustCompile(`(?i)(?:^|[,;:—–]\s*|[.?!]\s+|\band\s+)who\s+(?:first\s+|originally\s+|actually\s+|really\s+|later\s+|then\s+)?(\p{L}+ed|paid|bought|sold|built|made|wrote|gave|took|found|brought|sent|told|left|kept|held|ran|led|began|won|lost|stole|killed|shot|taught|chose|drew|drove|grew|knew|saw|put|cut|hit|let|read|said|spent|thought|caught|fought|lent|met|broke|spoke|threw|hid|rode|bore)\b`)

// notDoer is the capitalised words that name no one: pronouns and the
// words opening a sentence ("He had long ago bought a potter's wheel").
// "I" stays a doer: in a book told in the first person it is the author a
// question names ("Who built Thoreau's house?" — "I built it myself").
var notDoer = map[string]bool{"He": true, "She": true, "It": true, "We": true, "You": true, "They": true,
	"This": true, "That": true, "These": true, "Those": true, "There": true, "Then": true, "The": true, "A": true,
	"An": true, "One": true, "Some": true, "Who": true, "Which": true, "What": true, "When": true, "If": true}

// doer recognises a text naming someone doing a deed, the verb as the
// question words it (lower-cased): agentWord's forms, "<verb> by <Name>" or
// "<Name> <verb>". Built once a question: most windows are read against it.
type doer struct {
	verb       string
	by, before *regexp.Regexp
}

// doerAsked returns the doer a question asks for (asksDoer; English only:
// Chinese marks no name), nil when it asks for none.
func doerAsked(question string) *doer {
	if hasCJK(question) {
		return nil
	}
	if m := asksDoer.FindStringSubmatch(question); m != nil {
		return newDoer(m[1])
	}
	return nil
}

func newDoer(verb string) *doer {
	verb = strings.ToLower(verb)
	v := regexp.QuoteMeta(verb)
	return &doer{
		verb:   verb,
		by:     regexp.MustCompile(`(?i:\b` + v + `)\s+by\s+(?:(?:Dr|Prof|Mr|Mrs|Ms)\.?\s+)?\p{Lu}\p{L}+`),
		before: regexp.MustCompile(`\b(\p{Lu}\p{Ll}+|I)(?:\s+\p{Lu}\.)?(?:\s+\p{Lu}\p{Ll}+)*\s+(?:\p{Ll}+ly\s+)?(?i:` + v + `)\b`),
	}
}

// namedIn reports whether text names someone doing the deed.
func (d *doer) namedIn(text string) bool {
	if agentWord.MatchString(text) || d.by.MatchString(text) {
		return true
	}
	for _, m := range d.before.FindAllStringSubmatch(text, -1) {
		if !notDoer[m[1]] {
			return true
		}
	}
	return false
}

// unsetFrame is the phrases saying nothing was chosen, with the framing
// words captured (howWords): both asksDefault and defaultFrame are made of
// it, so a question is asked for the default exactly when its framing
// words are no key terms.
const unsetFrame = `\b(without)\s+(specifying|setting|giving|passing|changing|configuring|choosing)\b|\b(?:don['’]t|do\s+not|never)\s+(set|specify|give|pass|change|configure|choose)\b|\b(?:is|are|was|were)\s+(?:not|never)\s+(set|specified|given|configured)\b|\b(?:isn['’]t|aren['’]t|if\s+not|left)\s+(set|specified|given|configured|unset)\b`

// What each type's statement looks like.
var (
	// clockTime: 7:30, 7 p.m., 10am, noon, midnight, o'clock, 七点, 19点.
	clockTime = regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(a\.?m\b|p\.?m\b)|\b(noon|midnight|o['’]clock)\b|[0-9一二三四五六七八九十两]+\s*点`)
	// dateWord: a month or weekday (capitalised: "may" is a verb), a
	// year (1000–2099), a day of the month ("the 22d", "4th"), a numeric
	// date, 1845年, 十二月, 3日.
	dateWord = regexp.MustCompile(`\b(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b|\b(1\d|20)\d{2}\b|\b\d{1,2}(st|nd|rd|th|d)\b|\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b|\d+\s*[年月日号]|[一二三四五六七八九十]+\s*[月日号]`)
	// reasonWord: a cause or a purpose stated: because, so that, in order
	// to, 因为, 为了, 以免.
	reasonWord = regexp.MustCompile(`(?i)\b(because|so\s+that|in\s+order\s+to|so\s+as\s+to|due\s+to|owing\s+to|reasons?|for\s+fear|lest|therefore|as\s+a\s+result)\b|因为|由于|所以|为了|因此|原因|以免|导致|以便|否则`)
	// measureWord: a number in digits, or in words before its unit
	// ("seven miles", "two or three days"): "two parts" counts, it
	// measures nothing, and as a stated quantity it answered how long a
	// package's synopsis may be over "certainly under 80 characters".
	// Chinese numerals in words do not count here: tried on CMRC, they
	// moved one answer off its gold span.
	measureWord = regexp.MustCompile(`(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|hundred|thousand|million|billion|half)\s+(\w+\s+){0,2}?(bytes?|kilobytes?|megabytes?|gigabytes?|characters?|lines?|words?|pages?|bits?|miles?|feet|foot|inches|inch|yards?|rods?|acres?|metres?|meters?|kilometres?|kilometers?|pounds?|ounces?|tons?|grams?|kilograms?|seconds?|minutes?|hours?|days?|weeks?|months?|years?|centur(y|ies)|times|dollars?|cents?)\b`)
	// agentWord: who did it, named after the deed and "by" ("written by
	// Ken Thompson", "developed by AT&T"; "an algorithm by Fagin" names
	// whose idea a thing is built on, not who made it) or before the deed
	// ("Larson proposed"). Chinese has no such mark of a name: tried on
	// CMRC, "提出" after any three characters (曾分别提出) outranked the
	// sentence naming 保罗·塞里诺 for 由谁提出, so 谁 questions keep no type.
	agentWord = regexp.MustCompile(`\b(?:\p{L}+(?:ed|en|wn|lt|ght)|made|done|run|led|held|kept)\s+by\s+(?:Dr\.?\s+|Prof\.?\s+)?\p{Lu}[\p{L}&’'.-]+|\b\p{Lu}\p{Ll}+(?:\s+\p{Lu}\.)?(?:\s+\p{Lu}\p{Ll}+)?\s+(?:wrote|developed|designed|created|invented|founded|built|discovered|introduced|proposed|devised|implemented)\b`)
	// defaultWord: a default stated ("defaults to", "the default is", "by
	// default", "unless otherwise specified", 默认).
	defaultWord = regexp.MustCompile(`(?i)\bdefault(s|ed)?\b|\bunless\s+(otherwise\s+)?(specified|set|given|changed)\b|默认|缺省`)
	// quantityWord: a number in digits or words.
	quantityWord = regexp.MustCompile(`(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|single|half|twice|double)\b|[一二三四五六七八九十百千万两]`)
)

// asksCount finds "how many" and the words after it, for countedNouns.
var asksCount = regexp.MustCompile(`(?i)\bhow\s+many\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?`)

// countedNouns returns what an English "how many" question counts, as
// typed (phrases, for the reason) and as terms: the word after "how many"
// and, unless a stop word or an auxiliary follows it, the next one too,
// since either may be the noun ("how many text consoles can I …", "how
// many people wrote …"); a passage holding either will do. An answer
// states a number of them, so a passage that holds the question's other
// words and some number, but not the thing counted, answers another
// question ("how many lines of C code is the package?" of a paper giving
// its buffer sizes). "How many times" asks how often, which a book states
// without the word ("twice"): it counts nothing here.
func countedNouns(question string, terms func(string) []string) (phrases, counted []string) {
	if !framed(question) {
		return nil, nil
	}
	for _, m := range asksCount.FindAllStringSubmatch(question, -1) {
		words := []string{m[1]}
		if m[2] != "" && !analysis.IsStopword(strings.ToLower(m[2])) && !isAuxiliary(m[2]) {
			words = append(words, m[2])
		}
		if analysis.IsStopword(strings.ToLower(m[1])) || strings.EqualFold(m[1], "times") {
			continue
		}
		n := len(counted)
		for _, w := range words {
			if ts := terms(w); len(ts) == 1 {
				counted = append(counted, ts[0])
			}
		}
		if len(counted) > n {
			phrases = append(phrases, strings.Join(words, " "))
		}
	}
	return phrases, counted
}

// countsIn reports whether text gives a number of one of the counted
// terms: a number (quantityWord: digits or a number word) within five terms
// of it (stop words count),
// before or after ("25 packages", "six switchable VT100-like character
// consoles", "n (default 512) points"). A number elsewhere in the passage
// counts something else ("the one melts" beside "a copy").
func countsIn(text string, counted []string) bool {
	const near = 5
	lastNum, lastNoun := -near-1, -near-1
	i, found := 0, false
	analysis.EachTerm(text, func(t []byte) {
		if found {
			return
		}
		switch {
		case quantityWord.Match(t):
			lastNum = i
			if i-lastNoun <= near {
				found = true
			}
		case slices.Contains(counted, string(t)):
			lastNoun = i
			if i-lastNum <= near {
				found = true
			}
		}
		i++
	})
	return found
}

// isAuxiliary reports the verbs, other than the stop words, that open a
// "how many" question's verb phrase ("how many copies may I make").
func isAuxiliary(w string) bool {
	switch strings.ToLower(w) {
	case "shall", "may", "might", "must", "come", "came", "get", "got":
		return true
	}
	return false
}

// askedType reads the answer type of a question (typeAny when it asks for
// no particular kind of statement).
func askedType(question string) answerType {
	switch {
	case asksClockTime.MatchString(question):
		return typeClock
	case asksDate.MatchString(question):
		return typeDate
	case asksDefault.MatchString(question):
		return typeDefault
	case asksMeasure.MatchString(question):
		return typeMeasure
	case asksQuantity.MatchString(question):
		return typeQuantity
	case asksReason.MatchString(question):
		return typeReason
	case asksAgent.MatchString(question):
		return typeAgent
	}
	return typeAny
}

// howWords is the terms of the question's "how" adjectives (asksMeasure,
// asksFrequency) and of the deed a "who" question asks the agent of
// (asksAgent), and the words saying nothing was chosen (defaultFrame). As key terms the adjectives were matched in their other
// senses — "the long description" answered how long a package's synopsis
// may be, "extremely large databases" how large the test database was —
// and the deed is in the book's words ("Who wrote gdbm?" is answered by
// "written by Philip A. Nelson"; "wrote", no chunk's word, weighed most
// and the passage was dropped).
func howWords(question string, terms func(string) []string) map[string]bool {
	var buf [5]*regexp.Regexp
	res := buf[:0]
	if framed(question) {
		res = append(res, asksMeasure, asksFrequency, asksAgent)
	}
	if hasStep(question) {
		res = append(res, asksSteps)
	}
	if saysUnset(question) {
		res = append(res, defaultFrame)
	}
	var out map[string]bool
	for _, re := range res {
		for _, m := range re.FindAllStringSubmatch(question, -1) {
			for _, g := range m[1:] {
				for _, t := range terms(g) {
					if out == nil {
						out = map[string]bool{}
					}
					out[t] = true
				}
			}
		}
	}
	return out
}

// hasStep reports whether the question holds "step" in any case, the
// cheap test before asksSteps.
func hasStep(question string) bool {
	for i := 0; i+3 < len(question); i++ {
		if question[i]|0x20 == 's' && question[i+1]|0x20 == 't' && question[i+2]|0x20 == 'e' && question[i+3]|0x20 == 'p' {
			return true
		}
	}
	return false
}

// saysUnset reports whether the question may say that nothing was chosen
// (defaultFrame needs "without", a negation or "unset"), the cheap test
// before the regular expression.
func saysUnset(question string) bool {
	for _, w := range []string{"ithout", "not", "n't", "n’t", "never", "unset"} {
		if strings.Contains(question, w) {
			return true
		}
	}
	return false
}

// framed reports whether the question may hold a "how" adjective or an
// agent's verb at all (asksMeasure, asksFrequency, asksAgent need "how",
// "who" or 多): most questions hold none, and the three case-folded
// regular expressions were 3 % of a search's CPU, run twice a query.
func framed(question string) bool {
	for i := 0; i+2 < len(question); i++ {
		if c := question[i] | 0x20; c == 'h' && question[i+1]|0x20 == 'o' && question[i+2]|0x20 == 'w' ||
			c == 'w' && question[i+1]|0x20 == 'h' && question[i+2]|0x20 == 'o' {
			return true
		}
	}
	return strings.Contains(question, "多")
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
	case typeMeasure:
		return measureWord.MatchString(text)
	case typeReason:
		return reasonWord.MatchString(text)
	case typeAgent:
		return agentWord.MatchString(text)
	case typeDefault:
		return defaultWord.MatchString(text)
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

// whatIs is what a question asking what something is ("What is a
// factor?", "Who was Queequeg?", "What does ARIMA mean?") asks to see: a
// sentence that opens with its subject and says what it is ("A factor is a
// vector object used to specify a discrete classification …"). Without it
// every sentence naming the subject covers the question alike, and the
// shortest won: "Get off, Queequeg!", "The ordered() function creates such
// ordered factors but is otherwise identical to factor."
type whatIs struct {
	subject string         // as asked, lower-cased
	key     string         // what a text stating it must contain, lower-cased
	opens   *regexp.Regexp // a sentence stating it
	named   *regexp.Regexp // a sentence naming what is known by it
}

// The questions asking for a definition, their subject in group 1; a
// trailing "in R" (one capitalised word) names the book's domain.
var asksDefinition = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:(?:a|an|the)\s+)?(.+?)(?:\s+in\s+\p{Lu}\S*)?\s*\?*\s*$`),
	regexp.MustCompile(`(?i)^\s*what\s+(?:does|do)\s+(?:(?:a|an|the)\s+)?(.+?)\s+(?:mean|stand for)\s*\?*\s*$`),
	regexp.MustCompile(`(?i)^\s*what\s+is\s+meant\s+by\s+(?:(?:a|an|the)\s+)?(.+?)\s*\?*\s*$`),
	regexp.MustCompile(`(?i)^\s*define\s+(?:(?:a|an|the)\s+)?(.+?)\s*[.?]*\s*$`),
}

// The same in Chinese: 什么是导言区？ 宏包是什么？ 浮动体指的是什么？
var asksDefinitionCJK = []*regexp.Regexp{
	regexp.MustCompile(`^\s*(?:什么是|什么叫|何为|何谓)\s*(.+?)\s*[？?]*\s*$`),
	regexp.MustCompile(`^\s*(.+?)\s*(?:是什么|指的是什么|是指什么|是啥)(?:东西|意思)?\s*[？?]*\s*$`),
}

// maxSubject bounds the bytes of a definition's subject: the question is
// the user's, and its subject becomes a regular expression.
const maxSubject = 80

// whatIsAsked returns what a question asks the definition of; nil when it
// asks something else. The subject is one to four words, none a digit or a
// word that makes the question ask more than what the thing is ("What is
// the capital of France?", "What is the FY2018 capital expenditure for
// 3M?", "Who was Cato Ingraham, and where did he live?").
func whatIsAsked(question string) *whatIs {
	if hasCJK(question) {
		return whatIsAskedCJK(question)
	}
	for _, re := range asksDefinition {
		m := re.FindStringSubmatch(question)
		if m == nil {
			continue
		}
		words := strings.Fields(strings.ToLower(m[1]))
		if len(words) == 0 || len(words) > 4 || len(m[1]) > maxSubject || slices.ContainsFunc(words, func(w string) bool {
			return notSubjectWord(w) || strings.ContainsAny(w, "0123456789,;:")
		}) {
			continue // "What is meant by …" is read by a later pattern
		}
		parts := make([]string, len(words))
		for i, w := range words {
			if i == len(words)-1 {
				// Singular and plural alike: "factors" asks about "A
				// factor is …", "class" about "Classes are …".
				parts[i] = regexp.QuoteMeta(singular(w)) + `(?:s|es)?`
			} else {
				parts[i] = regexp.QuoteMeta(w)
			}
		}
		subject := strings.Join(parts, `[\s-]+`)
		// The subject opens the sentence (after a short lead-in, an
		// article and at most two names: "As noted above, a matrix is
		// …", "An R list is …"), and a copula follows it, with
		// at most a parenthesis or a short aside between them, then the
		// word that starts what it is (group 2). In mid sentence "the data
		// frame is detached" is no definition.
		opens, err := regexp.Compile(`(?i)^\W*(?:[^,.;:]{1,30},\s+)?(?:(?:a|an|the)\s+)?((?:[\p{L}\p{N}]+\s+){0,2}?)` + subject +
			`\b\s*(?:\([^)]{0,60}\)\s*)?(?:,[^,.;]{1,60},\s*)?(?:is|are|was|were|means|denotes|refers\s+to|stands\s+for|consists\s+of|can\s+be\s+(?:considered|thought\s+of|regarded|viewed|seen)\s+as)\s+([\p{L}\p{N}"“]+)`)
		// Or it names the subject as what something is known as: "The
		// entities R operates on are technically known as objects."
		named, err2 := regexp.Compile(`(?i)\b(?:are|is)\s+(?:\w+\s+)?(?:known|referred\s+to)\s+as\s+(?:(?:a|an|the)\s+)?` + subject + `\b`)
		if err != nil || err2 != nil {
			return nil // a subject too long to compile is no term a book defines
		}
		return &whatIs{subject: strings.Join(words, " "), key: singular(words[len(words)-1]), opens: opens, named: named}
	}
	return nil
}

// whatIsAskedCJK reads a Chinese question asking what something is: the
// subject is at most twelve characters and holds no question word ("什么是
// 导言区？"; not "如何设置导言区？"). A Chinese book defines by "X是…"
// ("X（…）是…", "所谓X，就是…") or names the thing: "这些扩展称为宏包。"
func whatIsAskedCJK(question string) *whatIs {
	for _, re := range asksDefinitionCJK {
		m := re.FindStringSubmatch(question)
		if m == nil {
			continue
		}
		subj := strings.ToLower(strings.TrimSpace(m[1]))
		if n := utf8.RuneCountInString(subj); n == 0 || n > 12 || strings.ContainsAny(subj, "？?，,。怎如为哪吗呢几多") {
			continue
		}
		subject := strings.Join(strings.Fields(regexp.QuoteMeta(subj)), `\s*`)
		// A heading glued to the first sentence repeats the subject
		// ("放线菌酮 放线菌酮是一种……"). The empty group stands where the
		// English pattern captures the names before the subject, so level
		// reads both alike (group 2: the character after the copula).
		opens, err := regexp.Compile(`(?i)^\W*(?:` + subject + `\s+)?(?:所谓\s*)?()` + subject +
			`\s*(?:（[^）]{0,30}）|\([^)]{0,30}\))?\s*[，,]?\s*(?:就是|是指|指的是|是|指)\s*(\S)`)
		// What is named ends with the subject: "叫做棱柱的高" names the
		// height.
		named, err2 := regexp.Compile(`(?i)(?:称为|称作|叫做|叫作|简称|统称)\s*[“"「]?` + subject + `(?:$|[\s。，；、！？”"」）)])`)
		if err != nil || err2 != nil {
			return nil
		}
		return &whatIs{subject: subj, key: subj, opens: opens, named: named}
	}
	return nil
}

// states reports whether the sentence s states the definition (false for
// a nil whatIs).
func (d *whatIs) states(s string) bool { return d.level(s) > 0 }

// Definition levels: how plainly a sentence says what its subject is.
const (
	notStated = iota
	stated    // "Vectors are the most important type …", "… are known as objects"
	plain     // a copula and an article: "Queequeg was a native of Rokovoko"
)

// level is how plainly the sentence s states the definition (notStated for
// a nil whatIs).
func (d *whatIs) level(s string) int {
	if d == nil {
		return notStated
	}
	m := d.opens.FindStringSubmatch(s)
	if m == nil {
		if d.named.MatchString(s) {
			return stated
		}
		return notStated
	}
	for _, w := range strings.Fields(m[1]) {
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) || analysis.IsStopword(strings.ToLower(w)) || isConnective(strings.ToLower(w)) {
			// A modifier makes it another thing ("A dimension vector is
			// …", "The levels of factors are …"); a name does not ("An R
			// list is …", "Captain Ahab is …"), nor does a sentence's
			// opening word ("Although aptitude is …" is about something
			// else).
			return notStated
		}
	}
	switch next := strings.ToLower(m[2]); {
	case notDefining(next):
		return notStated
	case next == "a" || next == "an" || next == "the" || next == "one":
		return plain
	}
	return stated
}

// isConnective reports the words that open a sentence about something
// else than the noun after them.
func isConnective(w string) bool {
	switch w {
	case "although", "though", "since", "because", "unless", "whereas", "once", "thus", "hence", "however",
		"also", "here", "now", "each", "every", "some", "any", "many", "such", "no", "one", "another", "other":
		return true
	}
	return false
}

// notDefining reports the words after a copula that make the sentence say
// what is done to its subject or how it is, not what it is: a participle
// ("The device tree is described in a text form"), "not", "also".
func notDefining(w string) bool {
	switch {
	case len(w) > 3 && strings.HasSuffix(w, "ed"),
		len(w) > 4 && strings.HasSuffix(w, "ing") && w != "something",            // "Queequeg was hugging me."
		len(w) > 4 && strings.HasSuffix(w, "en"),                                 // taken, given, written
		len(w) > 3 && (strings.HasSuffix(w, "wn") || strings.HasSuffix(w, "rn")): // shown, torn
		return true
	}
	switch w {
	case "not", "also", "only", "then", "now", "still", "being", "made", "said", "sent", "spent", "left",
		"lost", "brought", "bought", "caught", "taught", "thought", "told", "sold", "struck", "stuck", "hung",
		"led", "fed", "fled", "met", "bound", "gone", "cut", "hit", "let", "shut", "spread", "read",
		"held", "set", "put", "built", "done", "seen", "found", "run", "kept", "always", "usually", "often",
		"never", "available", "possible", "likely", "important", "useful", "different", "similar", "visible",
		"less", "more", "much", "very", "so", "too", "quite", "rather", "there", "here",
		"否", "不", "没", "非": // 是否, 是不是
		return true
	}
	return false
}

// statedIn reports how plainly the sentences of text state the definition:
// the level of the plainest.
func (d *whatIs) statedIn(text string) int {
	if d == nil || !strings.Contains(strings.ToLower(text), d.key) {
		return notStated
	}
	best := notStated
	for _, s := range analysis.Sentences(text) {
		best = max(best, d.level(s))
		if best == plain {
			break
		}
	}
	return best
}

// notSubjectWord reports words that make a question ask more than what its
// subject is: prepositions, conjunctions, question words and verbs.
func notSubjectWord(w string) bool {
	switch w {
	case "of", "for", "to", "from", "with", "by", "on", "at", "between", "after", "before", "during", "about",
		"than", "if", "when", "where", "how", "why", "which", "that", "and", "or", "do", "does", "did",
		"can", "could", "should", "would", "will", "there", "it", "this", "these", "those", "my", "your",
		"best", "difference", "purpose", "point", "use", "meaning", "name", "reason":
		return true
	}
	return false
}

// singular strips an English plural ending from w ("classes" → "class",
// "factors" → "factor", "lines" → "line").
func singular(w string) string {
	switch {
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// first moves the best-ranked candidate that states the definition to the
// front (cands unchanged when none does, or for a nil whatIs): the context
// then holds the passage that says what the thing is, however many
// passages merely use the word rank above it.
func (d *whatIs) first(cands []*candidate) []*candidate {
	if d == nil {
		return cands
	}
	for i, c := range cands {
		if d.statedIn(c.chunk.Text) > notStated {
			return append([]*candidate{c}, slices.Delete(slices.Clone(cands), i, i+1)...)
		}
	}
	return cands
}

// whatIsDepth is how many keyword hits of a definition's subject are read
// for the sentence stating it when retrieval found none: a novel names its
// characters in hundreds of passages, and BM25 ranks the ones that repeat
// the name, not "Queequeg was a native of Rokovoko".
const whatIsDepth = 400

// rescueDefinition keeps, when no candidate the threshold kept states the
// definition, the one that states it most plainly among the candidates it
// dropped (the best fused of those) or else among the keyword hits of the
// subject alone, searched under the same filter (nothing for a nil whatIs):
// a sentence opening with the subject and saying what it is, is about the
// question however few of its words BM25 weighs ("Vectors are the most
// important type of object in R" against passages that print "vector" five
// times).
func (p *Pipeline) rescueDefinition(ctx context.Context, d *whatIs, fd *found) {
	if d == nil {
		return
	}
	var best *candidate
	bestLevel := notStated
	seen := make(map[string]bool, len(fd.all))
	for _, c := range fd.all {
		seen[c.chunk.ID] = true
		l := d.statedIn(c.chunk.Text)
		if c.kept && l > notStated {
			return
		}
		if !c.kept && (l > bestLevel || l == bestLevel && l > notStated && c.fused > best.fused) {
			best, bestLevel = c, l
		}
	}
	found := false // best came from the subject's own search
	if bestLevel < plain {
		// Through the same searcher and filter as retrieval (access and
		// version visibility apply).
		hits, err := p.deps.Lexical.Search(ctx, d.subject, fd.filter, fd.library, whatIsDepth)
		if err != nil {
			p.log.WarnContext(ctx, "searching for a definition failed", "err", err)
		}
		for i := range hits {
			h := &hits[i]
			if seen[h.Chunk.ID] {
				continue
			}
			if l := d.statedIn(h.Chunk.Text); l > bestLevel {
				best, bestLevel, found = &candidate{chunk: &h.Chunk, lexScore: h.Score}, l, true
				if l == plain {
					break
				}
			}
		}
	}
	if best == nil {
		return
	}
	if found {
		fd.all = append(fd.all, best) // the trace lists it among the retrieved
	}
	best.kept = true
	if len(fd.groups) == 0 {
		fd.groups = [][]*candidate{nil}
	}
	fd.groups[0] = append([]*candidate{best}, fd.groups[0]...)
}

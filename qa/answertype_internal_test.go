package qa

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/analysis"
)

func TestAskedType(t *testing.T) {
	for _, c := range []struct {
		question string
		want     answerType
	}{
		{"What time is dinner served today?", typeClock},
		{"At what hour does the cron job run?", typeClock},
		{"明天几点开会？", typeClock},
		{"蓝光光盘映像有多大？", typeMeasure},
		{"这条公路有多长？", typeMeasure},
		{"On what date did he move into the house?", typeDate},
		{"In what year was the package first released?", typeDate},
		{"明圣王后何时受册为王妃？", typeDate},
		{"When did he start building the chimney, and how?", typeDate},
		{"Who wrote the parser, and when was it merged?", typeDate},
		{"When does R print a warning instead of an error?", typeAny},
		{"What happens when I was logged out?", typeAny},
		{"How many bits does an overflow page address have?", typeQuantity},
		{"炮身的容量有多大？几升？", typeMeasure},
		{"When R fills an array from a plain vector, does it fill it row by row?", typeAny},
		{"Why did the authors choose linear hashing?", typeReason},
		{"为什么不推荐用两个美元符号 $$ 来写单独成行的公式？", typeReason},
		{"编译时报错，一般是什么原因？", typeReason},
		{"How did Thoreau pay for his house?", typeAny},
		{"How long may the synopsis line of a package description be?", typeMeasure},
		{"If all the rows of beans were laid end to end, how long would they be?", typeMeasure},
		{"How large was the password database?", typeMeasure},
		{"How often does cron run the daily jobs?", typeQuantity},
		{"Who wrote gdbm?", typeAgent},
		{"Who is the author of the dynahash library?", typeAgent},
		{"Why was the sdbm library written, and by whom?", typeReason},
		{"Who was Cato Ingraham, and where did he live?", typeAny},
		{"鸟兽脚类的概念是由谁提出来的？", typeAny},
		{"What page size does the package pick if I don't specify one?", typeDefault},
		{"How much memory does it use for buffers if you do not set it?", typeDefault},
		{"Which contrasts does R use by default for unordered factors?", typeDefault},
		{"What does lpr print when it is not given a file, out of the box?", typeDefault},
		{"If the size is not set, how large is the cache?", typeDefault},
		{"没有设置时默认的字体是什么？", typeDefault},
		{"How much memory does the package use for its buffers?", typeQuantity},
		{"What happens if I set the fill factor to one?", typeAny},
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
		{typeMeasure, "the length of whose rows, added together, was seven miles", true},
		{typeMeasure, "The single line synopsis should be kept brief—certainly under 80 characters.", true},
		{typeMeasure, "it took two or three days", true},
		{typeMeasure, "a description of the binary package, consisting of two parts, the synopsis and the long description", false},
		{typeMeasure, "the extended description runs over several lines", false},
		{typeReason, "I was seized and put into jail, because, as I have elsewhere related, I did not pay a tax", true},
		{typeReason, "so that the hash table may grow without rehashing", true},
		{typeReason, "under some versions of UNIX that exclude it for licensing reasons", true},
		{typeReason, "故不太推荐使用。为了对齐，可以使用 aligned 环境", true},
		{typeReason, "One afternoon, near the end of the first summer, I went to the village.", false},
		{typeAgent, "a UNIX database manager written by Philip A. Nelson", true},
		{typeAgent, "The Unix troff program originally developed by AT&T", true},
		{typeAgent, "Larson proposed a dynamic hashing scheme", true},
		{typeAgent, "a dynamic hashing algorithm by Fagin et al", false},
		{typeAgent, "By default the bucket size is 256 bytes", false},
		{typeDefault, "The bucket size (and page size for overflow pages) defaults to 256 bytes.", true},
		{typeDefault, "By default, the package allocates up to 64K bytes of buffered pages.", true},
		{typeDefault, "Unless otherwise specified, the output goes to the console.", true},
		{typeDefault, "中文文档默认使用宋体", true},
		{typeDefault, "The buffer pool size was varied from 0 to 1M.", false},
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

// TestWhatIsAsked reads the subject of a question asking what something
// is, and only of such a question.
func TestWhatIsAsked(t *testing.T) {
	for q, want := range map[string]string{
		"What is a factor?":                             "factor",
		"What are factors in R?":                        "factors",
		"Who was Queequeg?":                             "queequeg",
		"What is the recycling rule?":                   "recycling rule",
		"What does ARIMA stand for?":                    "arima",
		"What does the -f flag mean?":                   "-f flag",
		"What is meant by a sparse file?":               "sparse file",
		"Define endianness.":                            "endianness",
		"What is the capital of France?":                "",
		"What is the FY2018 capex for 3M?":              "",
		"Who was Cato Ingraham, and where did he live?": "",
		"What is the best way to read a file?":          "",
		"How do I make a data frame?":                   "",
		"What is it?":                                   "",
	} {
		d := whatIsAsked(q)
		if want == "" {
			require.Nil(t, d, q)
			continue
		}
		require.NotNil(t, d, q)
		require.Equal(t, want, d.subject, q)
	}
}

// TestWhatIsStates: a definition opens its sentence with the subject (after
// a short lead-in, an article or a name) and a copula, and says what the
// subject is, not what is done to it.
func TestWhatIsStates(t *testing.T) {
	for _, tc := range []struct {
		question, sentence string
		want               bool
	}{
		{"What is a factor?", "A factor is a vector object used to specify a discrete classification (grouping) of the components of other vectors of the same length.", true},
		{"What are factors?", "A factor is a vector object used to specify a discrete classification.", true},
		{"What is a vector?", "Vectors are the most important type of object in R, but there are several others.", true},
		{"What is a list?", "An R list is an object consisting of an ordered collection of objects known as its components.", true},
		{"What is a matrix?", "As noted above, a matrix is just an array with two subscripts.", true},
		{"What is an array?", "An array can be considered as a multiply subscripted collection of data entries, for example numeric.", true},
		{"Who was Ahab?", "Captain Ahab is the Captain of this ship.", true},
		{"What is an object?", "The entities R operates on are technically known as objects.", true},
		{"What is an object?", "An object known as x is printed.", false},
		{"Who was Queequeg?", "Queequeg was hugging me.", false},
		{"What is the Pequod?", "Towards evening of that day, the Pequod was torn of her canvas.", false},
		{"Who is Ahab?", "Ahab is bound.", false},
		{"宏包是什么？", "这些扩展称为宏包。", true},
		{"什么是导言区？", "在 \\documentclass 和 \\begin{document} 之间的位置称为导言区。", true},
		{"什么是浮动体？", "浮动体（float）是一种可以浮动的容器。", true},
		{"什么是浮动体？", "浮动体是否需要编号由标题命令决定。", false},
		{"什么是棱柱？", "棱柱的两个底面的距离叫做棱柱的高。", false},
		{"什么是乙酰胺？", "乙酰胺 乙酰胺是由乙酸衍生出的酰胺，分子式为CHCONH。", true},
		{"什么是浮动体？", "table和figure两种浮动体分别有各自的生成目录的命令：", false},
		{"What is a data frame?", "A data frame (a list of class data.frame) is a list of variables.", true},
		{"What is a factor?", "The levels of factors are stored in alphabetical order.", false},
		{"What is a vector?", "A dimension vector is a vector of non-negative integers.", false},
		{"What is a data frame?", "However the new value of component u is not visible until the data frame is detached.", false},
		{"What is a device tree?", "The device tree is described in a text form, described in 3.2.", false},
		{"What is aptitude?", "Although aptitude is a very nice interactive tool, you should know some facts.", false},
		{"What is apt-get?", "apt-get is less demanding on hardware resources.", false},
		{"What is a factor?", "The ordered() function creates such ordered factors but is otherwise identical to factor.", false},
	} {
		d := whatIsAsked(tc.question)
		require.NotNil(t, d, tc.question)
		require.Equal(t, tc.want, d.states(tc.sentence), "%s / %s", tc.question, tc.sentence)
	}
	require.False(t, (*whatIs)(nil).states("A factor is a vector."))
	d := whatIsAsked("Who was Queequeg?")
	require.Equal(t, plain, d.level("Queequeg was a native of Rokovoko, an island far away to the West and South."))
	require.Equal(t, stated, d.level("Queequeg was no common sailor."))
	require.Equal(t, plain, d.statedIn("Queequeg was hugging me. Queequeg was a native of Rokovoko."))
}

// TestFramed: framed is howWords' shortcut, so every question any of its
// patterns matches must pass it.
func TestFramed(t *testing.T) {
	for _, q := range []string{"How long may the synopsis be?", "HOW OFTEN does cron run?", "Who wrote gdbm?",
		"The sdbm library was written by whom?", "蓝光光盘映像有多大？", "这条公路有多长？", "and how fast"} {
		require.True(t, asksMeasure.MatchString(q) || asksFrequency.MatchString(q) || asksAgent.MatchString(q), q)
		require.True(t, framed(q), q)
	}
	for _, q := range []string{"What is a factor?", "Which characters may a package name contain?", "什么是导言区？"} {
		require.False(t, framed(q), q)
		require.Empty(t, howWords(q, analysis.Terms), q)
	}
}

// countedNouns reads what a "how many" question counts (either of two
// words, since either may be the noun), and countsIn finds a number of it
// within five terms.
func TestCountedNouns(t *testing.T) {
	for q, want := range map[string][]string{
		"How many copies of Walden sold when it first came out?":                                   {"copy"},
		"How many text consoles can I switch between?":                                             {"text", "console"},
		"How many bits does an overflow page address have?":                                        {"bit"},
		"If I call locator() without saying how many points I want, how many clicks will it take?": {"point", "click"},
		"How many people wrote the first version of R?":                                            {"people", "wrote"},
		"Roughly how many times has JnJ sold its inventory?":                                       nil, // how often
		"How much memory does it use?":                                                             nil,
		"What is a factor?":                                                                        nil,
	} {
		_, got := countedNouns(q, analysis.Terms)
		require.Equal(t, want, got, q)
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"There are about 25 packages supplied with R.", true},
		{"This continues until n (default 512) points have been selected.", true},
		{"six switchable VT100-like character consoles", true},
		{"The packages were all supplied by the core team long before version 2 came out.", false},
		{"The one melts, the other but breaks in pieces; a copy of the book", false},
	} {
		counted := []string{"package", "point", "console", "copy"}
		require.Equal(t, c.want, countsIn(c.text, counted), c.text)
	}
}

// TestStepsFrame: "what steps" and "what are the steps to" frame a
// procedure question, so "step" is no key term there (hasStep is the
// shortcut before asksSteps); a question about steps themselves keeps it.
func TestStepsFrame(t *testing.T) {
	for _, q := range []string{"What steps set up automatic monitoring of my disks?", "What are the steps to bootstrap a cluster?",
		"WHICH STEPS does the installer skip?"} {
		require.True(t, hasStep(q), q)
		require.Equal(t, map[string]bool{"step": true}, howWords(q, analysis.Terms), q)
		require.NotContains(t, questionTerms(q, analysis.Terms), "step", q)
	}
	for _, q := range []string{"How large is a step of the line search?", "Does the installer skip the last step?"} {
		require.NotContains(t, howWords(q, analysis.Terms), "step", q)
		require.Contains(t, questionTerms(q, analysis.Terms), "step", q)
	}
}

// TestDoer: which questions ask who did a deed (doerAsked, the verb as
// asked), and which texts name someone doing it (doer.namedIn).
func TestDoer(t *testing.T) {
	for _, c := range []struct {
		q, verb string
	}{
		{"Who paid Thoreau's overdue tax so that he could be let out of jail?", "paid"},
		{"What became of the cabin after he moved out — who bought it, and was it moved?", "bought"},
		{"When was the approach introduced, and who implemented it?", "implemented"},
		{"Who first proposed linear hashing?", "proposed"},
		{"The maintainer field names someone else. Who uploaded this package?", "uploaded"},
		{"How do I warn everyone who is logged in?", ""},
		{"The maintainer field doesn't tell me who really uploaded a package. Is there a tool?", ""},
		{"Who was Cato Ingraham?", ""},
		{"Who are the primary customers of Boeing?", ""},
	} {
		got := ""
		if d := doerAsked(c.q); d != nil {
			got = d.verb
		}
		require.Equal(t, c.verb, got, c.q)
	}
	for _, c := range []struct {
		text, verb string
		want       bool
	}{
		{"In May 2005 Ben Herrenschmidt implemented a new approach.", "implemented", true},
		{"The tax was paid by Sam Staples the next morning.", "paid", true},
		{"The dynahash library, written by Esmond Pitt, implements linear hashing.", "wrote", true},
		{"He had long ago bought a potter's wheel of him.", "bought", false},
		{"The frame I built myself; I bought the boards of James Collins.", "bought", true},
		{"I did not pay a tax to, or recognize the authority of, the State which buys and sells men.", "paid", false},
		{"With the merge of ppc32 and ppc64 code it has become the only supported way.", "merged", false},
	} {
		require.Equal(t, c.want, newDoer(c.verb).namedIn(c.text), c.text)
	}
}

// TestClassifyNumbers: the numbers a question asks the book to state — a
// quarter's year typed glued to it ("Q22023": 2023, not 22023), a fiscal
// year — and the constants of the formula it defines, which are none.
func TestClassifyNumbers(t *testing.T) {
	k := classify("For Pfizer, which region had the biggest drop in Q22023 revenues?", analysis.Terms)
	require.Equal(t, kindNumber, k["2023"])
	require.NotContains(t, k, "22023")
	k = classify("What is Amazon's FY2017 DPO? DPO is defined as: 365 * (average accounts payable between FY2016 and FY2017) / (FY2017 COGS).", analysis.Terms)
	require.NotContains(t, k, "365", "a constant of the question's own formula")
	require.Equal(t, kindNumber, k["2016"])
	require.Equal(t, kindNumber, k["2017"])
	require.Equal(t, kindNumber, classify("How many days were there, 365 or 366?", analysis.Terms)["365"])
}

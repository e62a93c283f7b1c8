package qa

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// asksHowTo finds the action a question asks how to do: "How do I merge
// …", "how can we reshape …", "How should one enroll …" (an adverb before
// the verb is skipped: "how can I still call"), and the thing that does it:
// "Is there a command that finds …", "What is the best way to merge …",
// "Which R function merges …", "the function for merging …". English only.
var asksHowTo = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bhow\s+(?:do|can|could|should|would|shall|must|might)\s+(?:i|you|we|one)\s+(?:(?:still|also|even|just|then|now|best|ever|actually|first|\w+ly)\s+)?([a-z]+)\b`),
	regexp.MustCompile(`(?i)\b(?:is\s+there|what\s+is|what's|which\s+is)\s+(?:a|an|the|any)?\s*(?:\w+\s+)?(?:way|command|function|option|tool|package|program|setting|method)s?\s+(?:to|for|that|which)\s+(?:(?:still|also|even|just|\w+ly)\s+)?([a-z]+)\b`),
	regexp.MustCompile(`(?i)\bwhich\s+(?:\w+\s+){0,2}?(?:function|command|option|tool|package|program|setting|method)s?\s+(?:(?:can|will|would|should|do\s+i\s+use\s+to|to|that|which)\s+)?([a-z]+)\b`),
}

// absentAction returns the action a "how do I …" question asks how to do
// when no chunk in f holds the verb in any of its regular forms ("merge",
// "merges", "merged", "merging"), and "" otherwise. A book that never names
// the action does not describe doing it in the asker's words: the passages
// that share the question's other words ("data frame", "column") are about
// something else, and quoting them answered "How do I merge two data
// frames on a shared ID column, like a database join?" from R-intro's
// attach() — every reader question books-dev asks of this kind the books
// do not cover. A paraphrased action whose forms the book prints
// ("warns" of "warned", "send" of "sent") is left to the coverage check.
//
// Like absentFromClaim it is called only with the scope's statistics.
func (p *Pipeline) absentAction(ctx context.Context, question string, keys []keyTerm, lib, f citebook.Filter) string {
	// Each pattern needs one of its question words; most questions hold
	// none, and the case-folded patterns cost 30 µs an answer together.
	lower := strings.ToLower(question)
	var m []string
	for i, words := range [][]string{{"how"}, {"there", "what", "which"}, {"which"}} {
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(lower, w) }) {
			if m = asksHowTo[i].FindStringSubmatch(question); m != nil {
				break
			}
		}
	}
	if m == nil {
		return ""
	}
	verb := strings.ToLower(m[1])
	own := p.deps.Terms(verb)
	if len(own) != 1 {
		return ""
	}
	absent := slices.ContainsFunc(keys, func(k keyTerm) bool { return k.text == own[0] && k.kind == kindWord && k.df == 0 })
	if !absent || p.heldInSomeForm(ctx, question, []string{own[0]}, lib, f)[own[0]] {
		return ""
	}
	return verb
}

// asksWhether finds a yes/no question, or a yes/no clause after another
// ("When R fills an array …, does it fill it row by row?"): an auxiliary
// opens it.
//
// "Should I …?" is left out: it asks for advice, in the asker's words for
// a plan ("should I invert A first and then multiply the inverse by b?"
// of a book that writes "inverse" and "solve"), not whether the book
// states something.
var asksWhether = regexp.MustCompile(`(?i)(?:^|[,;:]\s*|\.\s+)(?:does|did|do|is|are|was|were|can|could|has|have|had|will|would|may|might|must)\s+\S`)

// asksHowItWas finds a question that asks the manner of a stated event:
// "How did the death of his brother influence his decision …", "How is the
// blob handed to the kernel …". Its subject group says who or what (not
// "I", "you", "we": that is asksHowTo's question).
var asksHowItWas = regexp.MustCompile(`(?i)\bhow\s+(?:does|did|do|is|are|was|were|has|have|had)\s+([a-z]+)`)

// claimFrames are the verbs by which a question asks for the kind of
// answer, not what happened: "How did US sales growth compare to
// international growth?" asks for the comparison a filing states with
// "versus".
var claimFrames = map[string]bool{"compare": true, "compared": true, "differ": true, "change": true, "changed": true,
	"relate": true, "work": true, "happened": true, "look": true}

// asksClaim reports whether the question states a claim and asks whether,
// or how, it holds (asksWhether, asksHowItWas).
func asksClaim(question string) bool {
	if asksWhether.MatchString(question) {
		return true
	}
	for _, m := range asksHowItWas.FindAllStringSubmatch(question, -1) {
		switch strings.ToLower(m[1]) {
		case "i", "you", "we", "one":
		default:
			return true
		}
	}
	return false
}

// absentFromClaim returns the key words of a claim the question asks about
// (asksClaim) that no chunk in f holds in any form. Such a question asks
// whether one statement holds, or how it came about, and every word of it
// is part of that statement: a book that never writes "endian" cannot
// confirm that "a hash file created on a big-endian machine" opens on a
// little-endian one, and the passages that share its other words ("hash",
// "byte") answer another question. A question that asks for a thing or a
// way ("what", "how do I") may name it in the reader's words where the
// book has its own, and is left to the coverage check.
func (p *Pipeline) absentFromClaim(ctx context.Context, question string, keys []keyTerm, lib, f citebook.Filter) []string {
	if !statesClaim(question) {
		return nil
	}
	var absent []string
	for _, k := range keys {
		if k.df == 0 && claimWord(k) {
			absent = append(absent, k.text)
		}
	}
	if len(absent) == 0 {
		return nil
	}
	held := p.heldInSomeForm(ctx, question, absent, lib, f)
	return slices.DeleteFunc(absent, func(t string) bool { return held[t] })
}

// statesClaim reports whether the question asks about a statement
// (asksClaim) rather than for a thing: "Is there a command that …" asks for
// a thing, in the reader's words for what it does (absentAction checks the
// deed).
func statesClaim(question string) bool {
	return asksClaim(question) && !asksHowTo[1].MatchString(question)
}

// claimWord reports whether a key term is a word of the statement a
// question asks about: a plain word, not a CJK pair, a hedge or a verb that
// frames a comparison.
func claimWord(k keyTerm) bool {
	return k.kind == kindWord && !isCJKTerm(k.text) && !hedge(k.text) && !claimFrames[k.text]
}

// hedge reports the adverbs by which a claim says how often, how surely
// or how much ("never", "always", "automatically"): a book states the same
// claim in other words ("unused levels" for levels that never occur), so
// their absence says nothing of whether it is covered. (Stop words and
// fillers — "also", "very", "still", "actually" — are no key terms at all.)
func hedge(t string) bool {
	switch t {
	case "never", "always", "ever", "often", "sometimes", "usually", "already", "rather", "quite", "even",
		"anymore", "yet":
		return true
	}
	return len(t) > 4 && strings.HasSuffix(t, "ly")
}

// heldInSomeForm reports which of the terms of the question some chunk in
// f holds in another form: one of a verb (verbForms: "warned" for "warn",
// "machines" for "machine"; irregularForms: "sent" for "send"), the
// singular or plural of the question's noun, irregular ones too ("mouse" for "mice", which the
// segmenter's light stemming leaves apart), or
// the compound written open (heldOpen). The terms themselves are known to
// be held by none. On an error every term counts as held, so nothing is
// refused for it.
func (p *Pipeline) heldInSomeForm(ctx context.Context, question string, terms []string, lib, f citebook.Filter) map[string]bool {
	forms, of := p.otherForms(question, terms, true)
	held, err := p.printedAs(ctx, forms, of, f)
	if err != nil {
		for _, t := range terms {
			held[t] = true
		}
		return held
	}
	var rest []string
	for _, t := range terms {
		if !held[t] {
			rest = append(rest, t)
		}
	}
	for t := range p.heldOpen(ctx, rest, lib, f) {
		held[t] = true
	}
	for t := range p.heldClosed(ctx, question, rest, f) {
		held[t] = true
	}
	for t := range p.heldRedone(ctx, rest, f) {
		held[t] = true
	}
	return held
}

// printedAs returns the words (of[i] for forms[i]) that some chunk in f
// holds in one of their forms.
func (p *Pipeline) printedAs(ctx context.Context, forms, of []string, f citebook.Filter) (map[string]bool, error) {
	held := map[string]bool{}
	if len(forms) == 0 {
		return held, nil
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, forms, f)
	if err == nil && len(df) != len(forms) {
		err = fmt.Errorf("term statistics: %d counts for %d terms", len(df), len(forms))
	}
	if err != nil {
		return held, err
	}
	for i, d := range df {
		if d > 0 {
			held[of[i]] = true
		}
	}
	return held, nil
}

// heldRedone reports which of the terms, verbs of doing again ("refit",
// "rerun", "reinstall"), some chunk in f holds without their "re-" as a
// verb done ("fitted", "fitting"): R-intro never prints "refit" and
// explains how update() fits a model again with a term added. Only words
// the books never print are read so ("remove" and "return" are words of
// their own), and a base held only as a noun is none: R-intro's "shape"
// of a distribution does not show how to "reshape" a data frame.
func (p *Pipeline) heldRedone(ctx context.Context, terms []string, f citebook.Filter) map[string]bool {
	var bases []string
	redone := map[string]string{} // base → the term asked
	for _, t := range terms {
		if b, ok := strings.CutPrefix(t, "re"); ok && isLatinTerm(t) && len(b) >= 3 {
			bases, redone[b] = append(bases, b), t
		}
	}
	if len(bases) == 0 {
		return map[string]bool{}
	}
	var forms, of []string
	all, allOf := p.otherForms(strings.Join(bases, " "), bases, false)
	for i, form := range all {
		// Done, not merely named: R-intro's "shape" of a distribution is
		// no "reshape", and it prints no "shaped" or "shaping".
		if strings.HasSuffix(form, "ed") || strings.HasSuffix(form, "ing") {
			forms, of = append(forms, form), append(of, redone[allOf[i]])
		}
	}
	held, _ := p.printedAs(ctx, forms, of, f) // on an error, none: the absence stands
	return held
}

// heldClosed reports which of the terms some chunk in f prints closed up
// with the question's word beside it: "scatter plot" as R-intro's
// "scatterplot", "file name" as "filename", "time stamp" as "timestamp" —
// heldOpen the other way round. (Asked "Can I rotate a 3-D scatter plot
// …?", R-intro was said never to mention "scatter".)
func (p *Pipeline) heldClosed(ctx context.Context, question string, terms []string, f citebook.Filter) map[string]bool {
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = isLatinTerm(t)
	}
	words := p.deps.Terms(question)
	var closed, of []string
	for i, w := range words {
		if !want[w] {
			continue
		}
		for _, n := range []struct{ a, b string }{{prev(words, i), w}, {w, next(words, i)}} {
			if !isLatinTerm(n.a) || !isLatinTerm(n.b) || analysis.IsStopword(n.a) || analysis.IsStopword(n.b) {
				continue
			}
			if ts := p.deps.Terms(n.a + n.b); len(ts) == 1 {
				closed, of = append(closed, ts[0]), append(of, w)
			}
		}
	}
	held, _ := p.printedAs(ctx, closed, of, f) // on an error, none: the absence stands
	return held
}

// prev and next are the words beside words[i] ("" at the ends).
func prev(words []string, i int) string {
	if i == 0 {
		return ""
	}
	return words[i-1]
}

func next(words []string, i int) string {
	if i+1 == len(words) {
		return ""
	}
	return words[i+1]
}

// otherForms are the other forms of the question's terms, as terms: a
// verb's regular and irregular inflections and, with nouns, a noun's
// irregular singular and plural (see heldInSomeForm; the segmenter makes
// one term of a regular plural and its singular already); of[i] is the
// term forms[i] is a form of. Forms no book holds are among them: the
// caller asks the index.
func (p *Pipeline) otherForms(question string, terms []string, nouns bool) (forms, of []string) {
	seen := map[[2]string]bool{}
	add := func(t, form string) {
		if ts := p.deps.Terms(form); len(ts) == 1 && ts[0] != t && !seen[[2]string{t, ts[0]}] {
			seen[[2]string{t, ts[0]}] = true
			forms, of = append(forms, ts[0]), append(of, t)
		}
	}
	surfaces := map[string][]string{}
	for _, w := range latinWord.FindAllString(question, -1) {
		w = strings.ToLower(w)
		if ts := p.deps.Terms(w); len(ts) == 1 {
			surfaces[ts[0]] = append(surfaces[ts[0]], w)
		}
	}
	for _, t := range terms {
		for _, base := range append(verbBases(t), t) {
			if irr := irregularForms(base); irr != nil {
				// Its forms are listed: "see" + "d" is "seed", no form of it.
				for _, form := range irr {
					add(t, form)
				}
				continue
			}
			for _, form := range append(verbForms(base), base) {
				add(t, form)
			}
		}
		for _, w := range surfaces[t] {
			if nouns { // go-pluralize's rules are regular expressions: a sixteenth of a search's CPU
				add(t, p.nouns.Singular(w))
				add(t, p.nouns.Plural(w))
			}
			for _, form := range irregularForms(w) {
				add(t, form)
			}
		}
	}
	return forms, of
}

// wordForms are the other forms of the question's key terms that some
// chunk in f holds, by term ("live" → "lived", "living"; "delete" →
// "deleted"; "begin" → "began"): the segmenter stems plurals only, so "How
// long did he live there" shares no term with "I lived there two years".
// The question's BM25 search counts a term's forms as the term
// (LexicalSearcher.SearchForms). Nil without statistics or on an error.
func (p *Pipeline) wordForms(ctx context.Context, question string, f citebook.Filter) map[string][]string {
	if p.deps.Stats == nil || p.deps.Terms == nil || len(f.Books) == 0 {
		return nil
	}
	var terms []string
	for _, t := range analysis.ContentTerms(p.deps.Terms(question)) {
		// Three letters are too few to inflect by rule ("his" is no verb
		// "hiss"), unless the word is an irregular verb's ("cut", "ran").
		if isLatinTerm(t) && (len(t) > 3 || irregularForms(t) != nil) && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	forms, of := p.otherForms(question, terms, false)
	if len(forms) == 0 {
		return nil
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, forms, f)
	if err != nil || len(df) != len(forms) {
		return nil
	}
	var held map[string][]string
	for i, d := range df {
		// A stop word is never searched, in any form: "done" is not
		// widened to every chunk that says "do" or "did".
		if d > 0 && !analysis.IsStopword(forms[i]) {
			if held == nil {
				held = map[string][]string{}
			}
			held[of[i]] = append(held[of[i]], forms[i])
		}
	}
	return held
}

func isLatinTerm(t string) bool {
	return len(t) >= 3 && !strings.ContainsFunc(t, func(r rune) bool { return r < 'a' || r > 'z' })
}

// heldOpen reports which of the terms some chunk in f prints as two words
// side by side or hyphenated: "dataframe" as R-intro's "data frame",
// "email" as "e-mail", "website" as "web site". The segmenter makes two
// terms of those, so the closed form matches no chunk; a reader who asks
// whether "a dataframe can hold columns of different types" asks what the
// book answers. Two words held apart ("wire", "guard") are no spelling of
// "wireguard": the parts' best BM25 matches are read for the phrase.
func (p *Pipeline) heldOpen(ctx context.Context, terms []string, lib, f citebook.Filter) map[string]bool {
	type split struct {
		term string
		a, b string
	}
	var splits []split
	var parts []string
	for _, t := range terms {
		if strings.ContainsFunc(t, func(r rune) bool { return r < 'a' || r > 'z' }) {
			continue // a word of ASCII letters only
		}
		for i := 1; i+minPart <= len(t); i++ {
			a, b := t[:i], t[i:]
			ta, tb := p.deps.Terms(a), p.deps.Terms(b)
			if len(ta) != 1 || len(tb) != 1 || ta[0] != a || tb[0] != b || analysis.IsStopword(a) || analysis.IsStopword(b) {
				continue
			}
			splits = append(splits, split{t, a, b})
			parts = append(parts, a, b)
		}
	}
	held := map[string]bool{}
	if len(splits) == 0 {
		return held
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, parts, f)
	if err != nil || len(df) != len(parts) {
		return held
	}
	for i, s := range splits {
		if held[s.term] || df[2*i] == 0 || df[2*i+1] == 0 {
			continue
		}
		if p.sideBySide(ctx, s.a, s.b, lib, f) {
			held[s.term] = true
		}
	}
	return held
}

// minPart is the shortest second part of a closed compound looked for
// open ("e-mail" has a one-letter first part).
const minPart = 3

// phraseHits is how many of two words' best BM25 matches are read for
// them side by side.
const phraseHits = 50

// sideBySide reports whether a chunk among the best BM25 matches of a and
// b in f prints them as one phrase, apart by spaces, a line break or a
// hyphen. lib is the reader's library, whose statistics BM25 ranks by.
func (p *Pipeline) sideBySide(ctx context.Context, a, b string, lib, f citebook.Filter) bool {
	hits, err := p.deps.Lexical.Search(ctx, a+" "+b, f, lib, phraseHits)
	if err != nil {
		return false
	}
	phrase := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(a) + `[\s\-‐]+` + regexp.QuoteMeta(b) + `\b`)
	for _, h := range hits {
		if phrase.MatchString(h.Chunk.Text) {
			return true
		}
	}
	return false
}

// verbForms are a verb's regular inflections: -s/-es, -ed/-d, -ing, with
// a final e dropped, a final y turned to i and a final consonant doubled
// where English spelling may do so ("merging", "copied", "stopped").
func verbForms(v string) []string {
	out := []string{v + "s", v + "ed", v + "d", v + "ing"}
	n := len(v)
	if n > 0 && strings.IndexByte("sxzho", v[n-1]) >= 0 {
		out = append(out, v+"es") // "passes", "fixes", "pushes", "goes"; "quites" would stem to "quite"
	}
	if n < 3 {
		return out
	}
	last := v[n-1]
	switch {
	case last == 'e':
		out = append(out, v[:n-1]+"ing")
	case last == 'y' && !isVowel(v[n-2]):
		out = append(out, v[:n-1]+"ies", v[:n-1]+"ied")
	case !isVowel(last) && isVowel(v[n-2]) && !isVowel(v[n-3]) && !strings.ContainsRune("wxy", rune(last)):
		out = append(out, v+string(last)+"ed", v+string(last)+"ing")
	}
	return out
}

// verbBases are the verbs an -ing or -ed form may be of, as the
// segmenter keeps those forms whole: "spinning" → spinn, spinne, spin;
// "improved" → improv, improve. A candidate that is no word matches no
// chunk.
func verbBases(w string) []string {
	var stem string
	switch n := len(w); {
	case n > 5 && strings.HasSuffix(w, "ing"):
		stem = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		stem = w[:n-2]
	default:
		return nil
	}
	out := []string{stem, stem + "e"}
	if n := len(stem); n > 2 && stem[n-1] == stem[n-2] && !isVowel(stem[n-1]) {
		out = append(out, stem[:n-1])
	}
	if n := len(stem); n > 2 && stem[n-1] == 'i' {
		out = append(out, stem[:n-1]+"y")
	}
	return out
}

// irregularVerbs are the common English verbs whose past forms no rule
// makes: base, past, past participle (one entry where they agree).
var irregularVerbs = [][]string{
	{"be", "was", "were", "been"}, {"become", "became"}, {"begin", "began", "begun"}, {"bind", "bound"},
	{"break", "broke", "broken"}, {"bring", "brought"}, {"build", "built"}, {"buy", "bought"},
	{"catch", "caught"}, {"choose", "chose", "chosen"}, {"come", "came"}, {"cut"}, {"deal", "dealt"},
	{"do", "did", "done"}, {"draw", "drew", "drawn"}, {"drink", "drank", "drunk"}, {"drive", "drove", "driven"},
	{"eat", "ate", "eaten"}, {"fall", "fell", "fallen"}, {"feed", "fed"}, {"feel", "felt"}, {"fight", "fought"},
	{"find", "found"}, {"fly", "flew", "flown"}, {"forget", "forgot", "forgotten"}, {"freeze", "froze", "frozen"},
	{"get", "got", "gotten"}, {"give", "gave", "given"}, {"go", "went", "gone"}, {"grow", "grew", "grown"},
	{"hang", "hung"}, {"have", "had"}, {"hear", "heard"}, {"hide", "hid", "hidden"}, {"hit"}, {"hold", "held"},
	{"keep", "kept"}, {"know", "knew", "known"}, {"lay", "laid"}, {"lead", "led"}, {"leave", "left"},
	{"lend", "lent"}, {"let"}, {"lie", "lay", "lain"}, {"lose", "lost"}, {"make", "made"}, {"mean", "meant"},
	{"meet", "met"}, {"pay", "paid"}, {"put"}, {"read"}, {"ride", "rode", "ridden"}, {"ring", "rang", "rung"},
	{"rise", "rose", "risen"}, {"run", "ran"}, {"say", "said"}, {"see", "saw", "seen"}, {"seek", "sought"},
	{"sell", "sold"}, {"send", "sent"}, {"set"}, {"shake", "shook", "shaken"}, {"shoot", "shot"},
	{"show", "showed", "shown"}, {"shut"}, {"sing", "sang", "sung"}, {"sink", "sank", "sunk"}, {"sit", "sat"},
	{"sleep", "slept"}, {"speak", "spoke", "spoken"}, {"spend", "spent"}, {"spin", "spun"}, {"split"},
	{"spread"}, {"stand", "stood"}, {"steal", "stole", "stolen"}, {"stick", "stuck"}, {"strike", "struck"},
	{"swim", "swam", "swum"}, {"take", "took", "taken"}, {"teach", "taught"}, {"tear", "tore", "torn"},
	{"tell", "told"}, {"think", "thought"}, {"throw", "threw", "thrown"}, {"understand", "understood"},
	{"wake", "woke", "woken"}, {"wear", "wore", "worn"}, {"win", "won"}, {"wind", "wound"},
	{"write", "wrote", "written"},
}

// irregularForms are the other forms of w when it is one of an
// irregular verb's ("sent" for "send", "write" for "wrote"), their regular
// present forms included ("sends", "writing"), but no regular past: "god"
// and "goed" are no forms of "go".
func irregularForms(w string) []string {
	for _, forms := range irregularVerbs {
		if slices.Contains(forms, w) {
			return append(slices.Clone(forms), presentForms(forms[0])...)
		}
	}
	return nil
}

// presentForms are a verb's third person and present participle, as
// verbForms spells them ("goes", "going"; "makes", "making"; "cuts",
// "cutting"), without its past ones.
func presentForms(v string) []string {
	return slices.DeleteFunc(verbForms(v), func(f string) bool { return strings.HasSuffix(f, "d") })
}

func isVowel(b byte) bool { return strings.IndexByte("aeiou", b) >= 0 }

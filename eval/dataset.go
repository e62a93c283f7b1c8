package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/jsonl"
)

// Question is one evaluation item. Its JSON line is the dataset format
// `citebook eval --format jsonl` reads, so a team can bring its own questions.
type Question struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Books      []string `json:"books"` // book IDs the question is about (its scope under --scope book)
	Answerable bool     `json:"answerable"`
	Gold       Gold     `json:"gold"`
	// BookScopeOnly marks a question that is unanswerable only inside its
	// own books (a question borrowed from another document); it is skipped
	// when every book is searched, where it would be answerable.
	BookScopeOnly bool `json:"book_scope_only,omitempty"`
}

// Gold is what a right answer rests on. Relevance for the ranking metrics is
// taken from the first kind present: ChunkIDs, then Pages (chunks whose page
// range covers a gold page), then WholeBook (every chunk of the question's
// books), then Evidence (chunks containing most of an evidence text).
type Gold struct {
	ChunkIDs  []string `json:"chunk_ids,omitempty"`
	Pages     []Page   `json:"pages,omitempty"`
	Evidence  []string `json:"evidence,omitempty"`
	Answer    string   `json:"answer,omitempty"`
	WholeBook bool     `json:"whole_book,omitempty"`
}

// BookFile is a document a dataset needs in the library.
type BookFile struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Path  string `json:"path"`
}

// Dataset is a set of questions and the books they are asked of.
type Dataset struct {
	Name      string
	Books     []BookFile
	Questions []Question
}

// Load reads questions in the JSONL format, one per line; blank lines are
// skipped and a bad line is reported with its number.
func Load(path string) ([]Question, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read dataset %s", path)
	}
	return jsonl.Decode(data, "dataset "+path, func(q *Question) error {
		if q.ID == "" || strings.TrimSpace(q.Question) == "" {
			return errors.New("needs an id and a question")
		}
		return nil
	})
}

// LoadJSONL reads a JSONL dataset whose books are files in corpus named
// after their IDs (<id>.pdf, .epub, .md, .markdown or .txt).
func LoadJSONL(path, corpus string) (*Dataset, error) {
	qs, err := Load(path)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Questions: qs}
	for _, id := range bookIDs(qs) {
		p, err := findBookFile(corpus, id)
		if err != nil {
			return nil, err
		}
		ds.Books = append(ds.Books, BookFile{ID: id, Title: id, Path: p})
	}
	return ds, nil
}

func findBookFile(dir, id string) (string, error) {
	for _, ext := range []string{".pdf", ".epub", ".md", ".markdown", ".txt"} {
		p := filepath.Join(dir, id+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", citebook.Errorf(citebook.ENOTFOUND, "no file for book %s in %s (want %s.pdf, .epub, .md or .txt)", id, dir, id)
}

// bookIDs lists the books questions refer to, in first-use order.
func bookIDs(qs []Question) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		for _, b := range q.Books {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return out
}

// Limit keeps the first n answerable questions and the unanswerable ones
// whose books all belong to them, so a deterministic slice of a dataset
// still measures refusals while indexing only the books it needs. n <= 0
// keeps everything.
func (d *Dataset) Limit(n int) {
	if n <= 0 {
		return
	}
	keep := map[string]bool{}
	var qs []Question
	answerable := 0
	for _, q := range d.Questions {
		if q.Answerable && answerable < n {
			answerable++
			qs = append(qs, q)
			for _, b := range q.Books {
				keep[b] = true
			}
		}
	}
	for _, q := range d.Questions {
		if !q.Answerable && askedOnlyOf(q, keep) {
			qs = append(qs, q)
		}
	}
	d.Questions = qs
	d.keepBooks(keep)
}

// OnlyBooks keeps the books named and the questions asked only of them,
// for a run on a few documents (a slow embedder, a quick check). No names
// keeps everything.
func (d *Dataset) OnlyBooks(ids []string) {
	if len(ids) == 0 {
		return
	}
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	var qs []Question
	for _, q := range d.Questions {
		if askedOnlyOf(q, keep) {
			qs = append(qs, q)
		}
	}
	d.Questions = qs
	d.keepBooks(keep)
}

// askedOnlyOf reports whether q names books and every one of them is kept.
func askedOnlyOf(q Question, keep map[string]bool) bool {
	for _, b := range q.Books {
		if !keep[b] {
			return false
		}
	}
	return len(q.Books) > 0
}

// keepBooks drops the book files keep does not name.
func (d *Dataset) keepBooks(keep map[string]bool) {
	var books []BookFile
	for _, b := range d.Books {
		if keep[b.ID] {
			books = append(books, b)
		}
	}
	d.Books = books
}

// offTopic are FinanceBench's unanswerable-by-construction questions: no
// SEC filing says anything about them, so the right behaviour is a refusal.
var offTopic = []string{
	"What time is dinner served today?",
	"Who won the 2018 FIFA World Cup final?",
	"What is the recommended baking temperature for sourdough bread?",
	"Which actor played the lead role in the 1997 film Titanic?",
}

type fbEvidence struct {
	Text    string `json:"evidence_text"`
	DocName string `json:"doc_name"`
	Page    int    `json:"evidence_page_num"`
}

type fbRecord struct {
	ID       string       `json:"financebench_id"`
	Company  string       `json:"company"`
	DocName  string       `json:"doc_name"`
	Question string       `json:"question"`
	Answer   string       `json:"answer"`
	Evidence []fbEvidence `json:"evidence"`
}

// LoadFinanceBench converts FinanceBench (its JSONL file, filings in
// corpus/pdfs/<doc_name>.pdf). Its evidence_page_num is zero-based, so the
// gold physical page is evidence_page_num+1. Each filing also gets two
// off-topic questions (rotating through offTopic) that must be refused.
func LoadFinanceBench(path, corpus string) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read FinanceBench file %s", path)
	}
	ds := &Dataset{Name: "financebench"}
	seen := map[string]bool{}
	var docs []string
	records, err := jsonl.Decode[fbRecord](data, "FinanceBench file "+path, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		q := Question{ID: r.ID, Question: r.Question, Books: []string{r.DocName}, Answerable: true,
			Gold: Gold{Answer: r.Answer}}
		pages := map[Page]bool{}
		for _, e := range r.Evidence {
			doc := e.DocName
			if doc == "" {
				doc = r.DocName
			}
			p := Page{BookID: doc, Page: e.Page + 1}
			if !pages[p] {
				pages[p] = true
				q.Gold.Pages = append(q.Gold.Pages, p)
			}
			if t := strings.TrimSpace(e.Text); t != "" {
				q.Gold.Evidence = append(q.Gold.Evidence, t)
			}
			if !seen[doc] {
				seen[doc] = true
				docs = append(docs, doc)
			}
		}
		if !seen[r.DocName] {
			seen[r.DocName] = true
			docs = append(docs, r.DocName)
		}
		ds.Questions = append(ds.Questions, q)
	}
	sort.Strings(docs)
	for i, doc := range docs {
		p := filepath.Join(corpus, "pdfs", doc+".pdf")
		if _, err := os.Stat(p); err != nil {
			return nil, citebook.Wrap(err, citebook.ENOTFOUND, "FinanceBench filing %s is missing", p)
		}
		ds.Books = append(ds.Books, BookFile{ID: doc, Title: doc, Path: p})
		for j := 0; j < 2; j++ {
			ds.Questions = append(ds.Questions, Question{
				ID:       fmt.Sprintf("offtopic_%s_%d", doc, j),
				Question: offTopic[(i+j)%len(offTopic)],
				Books:    []string{doc},
			})
		}
	}
	return ds, nil
}

type squad struct {
	Data []struct {
		ID         string `json:"id"`
		Title      string `json:"title"`
		Paragraphs []struct {
			ID      string `json:"id"`
			Context string `json:"context"`
			QAs     []struct {
				ID       string `json:"id"`
				Question string `json:"question"`
				Answers  []struct {
					Text  string `json:"text"`
					Start int    `json:"answer_start"`
				} `json:"answers"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

// LoadCMRC converts a SQuAD-style CMRC 2018 file. Each article becomes one
// book: its context is written as UTF-8 text to workDir/<id>.txt (the
// dataset stays out of the repository). The gold of a question is the whole
// article (every chunk of its book) with the answer text, and the sentence
// holding it, as evidence. Empty questions (two in the trial set) are
// skipped.
//
// Unanswerable questions are built deterministically: for every fourth
// article (0, 4, 8, … in file order) the first question of the next article
// whose answer text does not occur in this article is asked within this
// article's book only (BookScopeOnly).
func LoadCMRC(path, workDir string) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read CMRC file %s", path)
	}
	var sq squad
	if err := json.Unmarshal(data, &sq); err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "CMRC file %s is not SQuAD-style JSON", path)
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot create work directory %s", workDir)
	}
	type article struct {
		id, context string
		first       []Question
	}
	ds := &Dataset{Name: "cmrc2018"}
	var arts []article
	for _, a := range sq.Data {
		for pi, p := range a.Paragraphs {
			id := p.ID
			if id == "" {
				id = fmt.Sprintf("%s_%d", a.ID, pi)
			}
			file := filepath.Join(workDir, id+".txt")
			// The title becomes the first line so the parser finds it.
			text := a.Title + "\n\n" + p.Context + "\n"
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				return nil, citebook.Wrap(err, citebook.EINVALID, "cannot write %s", file)
			}
			ds.Books = append(ds.Books, BookFile{ID: id, Title: a.Title, Path: file})
			art := article{id: id, context: p.Context}
			for _, qa := range p.QAs {
				if strings.TrimSpace(qa.Question) == "" {
					continue // two trial questions are empty strings
				}
				q := Question{ID: qa.ID, Question: qa.Question, Books: []string{id}, Answerable: true,
					Gold: Gold{WholeBook: true}}
				for _, ans := range qa.Answers {
					if q.Gold.Answer == "" {
						q.Gold.Answer = ans.Text
					}
					q.Gold.Evidence = append(q.Gold.Evidence, ans.Text)
					if s := answerSentence(p.Context, ans.Start, ans.Text); s != "" && s != ans.Text {
						q.Gold.Evidence = append(q.Gold.Evidence, s)
					}
				}
				ds.Questions = append(ds.Questions, q)
				art.first = append(art.first, q)
			}
			arts = append(arts, art)
		}
	}
	for i := 0; i+1 < len(arts); i += 4 {
		for _, borrowed := range arts[i+1].first {
			if borrowed.Gold.Answer == "" || strings.Contains(arts[i].context, borrowed.Gold.Answer) {
				continue
			}
			ds.Questions = append(ds.Questions, Question{
				ID:            "unanswerable_" + arts[i].id + "_" + borrowed.ID,
				Question:      borrowed.Question,
				Books:         []string{arts[i].id},
				BookScopeOnly: true,
			})
			break
		}
	}
	return ds, nil
}

// answerSpan returns the text at a SQuAD answer_start, which counts Unicode
// code points, not bytes.
func answerSpan(context []rune, start, length int) string {
	if start < 0 || start > len(context) {
		return ""
	}
	return string(context[start:min(len(context), start+length)])
}

// answerSentence is the sentence of context holding the answer at rune
// offset start: evidence a citation can overlap even when the answer itself
// is a few characters. An offset that misses the answer (a known CMRC data
// error is off by one) falls back to a search of the nearest occurrence.
func answerSentence(context string, start int, answer string) string {
	r := []rune(context)
	n := len([]rune(answer))
	if answer == "" {
		return ""
	}
	if answerSpan(r, start, n) != answer {
		best := -1
		for d := 1; d <= 3 && best < 0; d++ {
			for _, s := range []int{start - d, start + d} {
				if best < 0 && answerSpan(r, s, n) == answer {
					best = s
				}
			}
		}
		if best < 0 {
			i := strings.Index(context, answer)
			if i < 0 {
				return ""
			}
			best = len([]rune(context[:i]))
		}
		start = best
	}
	isEnd := func(c rune) bool { return strings.ContainsRune("。！？!?\n", c) }
	from := start
	for from > 0 && !isEnd(r[from-1]) {
		from--
	}
	to := start + n
	for to < len(r) && !isEnd(r[to-1]) {
		to++
	}
	return strings.TrimSpace(string(r[from:to]))
}

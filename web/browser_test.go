package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/web/auth"
)

// realServer indexes corpus books with the real builder (builtin embedder,
// embedded and lexical stores, SQLite metadata), wires the real QA pipeline
// with the extractive answerer, and serves it on a loopback port. It
// returns the base URL and an admin token of tenant "default".
func realServer(t *testing.T, books ...string) (string, string) {
	t.Helper()
	return realServerWith(t, nil, books...)
}

// realServerWith is realServer letting the test adjust the server's Config
// (such as the zero-config local principal) before it starts.
func realServerWith(t *testing.T, tweak func(*Config), books ...string) (string, string) {
	t.Helper()
	ctx := context.Background()
	lib := testlib.Open(t, testlib.Config(t.TempDir()))
	for _, b := range books {
		id := strings.ToLower(strings.TrimSuffix(filepath.Base(b), filepath.Ext(b)))
		testlib.Index(t, lib, index.BookInput{BookID: id, Tenant: "default", Path: corpus.Path(t, b)})
	}
	pipeline := testlib.Pipeline(t, lib)
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	tokens := auth.NewStore(lib.Meta.SQL())
	runner := lib.Runner(index.RunnerOptions{})
	t.Cleanup(func() { runner.Close(context.Background()) })
	cfg := Config{
		Library: lib.Meta, Indexer: runner, Asker: pipeline, Searcher: pipeline,
		Previewer: ingestPreviewer{tok: tok},
		ACL:       lib.ACL, Tokens: tokens, DataDir: lib.Config.Data, Registry: prometheus.NewRegistry(), Logger: lib.Log,
		Grants: lib.Grants,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	// A token would end zero-config mode, so a server with a local
	// principal gets none.
	var secret string
	if cfg.LocalPrincipal == nil {
		secret, _, err = tokens.Create(ctx, citebook.Principal{Tenant: "default", User: "reader", Admin: true})
		require.NoError(t, err)
	}
	srv, err := New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String(), secret
}

// chromium returns the browser binary; a missing one fails in CI and skips
// on a developer machine.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found; CI must install it (.ci/run)")
	}
	t.Skip("chromium not found; skipped outside CI")
	return ""
}

// browser is one headless Chromium tab driven by a test.
type browser struct {
	t       *testing.T
	ctx     context.Context
	dialogs chan string // messages of the confirm dialogs, each accepted
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 150*time.Second)
	t.Cleanup(cancel)
	// Start the browser on ctx itself: cancelling the context of the first
	// run would close it.
	require.NoError(t, chromedp.Do(ctx))
	b := &browser{t: t, ctx: ctx, dialogs: make(chan string, 4)}
	go func() {
		for ev, err := range chromedp.Events(ctx, cdpage.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			b.dialogs <- ev.Message
			chromedp.Call(ctx, cdpage.HandleJavaScriptDialog, cdpage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return b
}

// doWithin runs steps one by one, each within limit; a failing step ends
// the test with the page's HTML.
func (b *browser) doWithin(limit time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	for i, step := range steps {
		sctx, cancel := context.WithTimeout(b.ctx, limit)
		err := chromedp.Do(sctx, step)
		cancel()
		if err != nil {
			html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
			b.t.Fatalf("browser step %d: %v\npage: %s", i, err, html)
		}
	}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.doWithin(20*time.Second, steps...)
}

func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	r, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	require.NoError(b.t, err)
	return r.Value
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(b.t, err)
	return v
}

func (b *browser) check(js string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	require.NoError(b.t, err)
	return v
}

// shoot saves a screenshot under artifacts/ for people to look at.
func (b *browser) shoot(name string) {
	b.t.Helper()
	data, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err)
	dir, err := filepath.Abs(filepath.Join("..", "artifacts"))
	require.NoError(b.t, err)
	require.NoError(b.t, os.MkdirAll(dir, 0o755))
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	b.t.Logf("screenshot: %s", filepath.Join(dir, name))
}

// statusHas waits for the page's status line to contain text.
func statusHas(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent.includes(` + strconv.Quote(text) + `)`)
}

const readyBook = `#books li[data-state="ready"] button.open`

// blankPDF is a well-formed one-page PDF without any text: it passes the
// upload sniff and fails in the index job.
func blankPDF() []byte {
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	var offs []int
	for _, o := range []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
		"<< /Length 0 >>\nstream\n\nendstream",
	} {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), o)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, x)
	return []byte(b.String())
}

// TestBrowserUploadAskCite drives the reader page in headless Chromium the
// way a new user meets it: an empty library, a file refused at upload, a
// file whose index job fails, a corpus book uploaded through the form and indexed, a duplicate upload
// refused, a question answered, citation [1] opened at the cited page with
// the quoted passage marked (desktop and phone width), and the book deleted.
func TestBrowserUploadAskCite(t *testing.T) {
	base, token := realServer(t)
	book := corpus.Path(t, "books/R-intro.pdf")
	notPDF := filepath.Join(t.TempDir(), "notes.pdf")
	require.NoError(t, os.WriteFile(notPDF, []byte("this is plain text, not a PDF\n"), 0o644))
	broken := filepath.Join(t.TempDir(), "broken.pdf")
	require.NoError(t, os.WriteFile(broken, blankPDF(), 0o644))
	b := newBrowser(t)
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

	// Without a token the server answers 401 and the page asks for one.
	b.do(chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		statusHas("missing bearer token"),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS("#token-form button")),
		chromedp.WaitVisible(chromedp.ID("upload-form")),
		chromedp.WaitVisible(chromedp.ID("empty")),
	)
	require.Equal(t, "reader@default · admin", b.text("#who"))
	require.Contains(t, b.text("#empty"), "Add a book")
	b.shoot("library-empty.png")

	// A file that is plainly not a PDF is refused at upload (400), before any
	// job exists: the UI says why and the library stays empty.
	b.do(chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{notPDF}),
		chromedp.Click(chromedp.ID("upload-button")),
		statusHas("is named .pdf but is not a PDF file"),
	)
	t.Logf("refused upload: %s", b.text("#status"))
	require.Contains(t, b.text("#status"), "notes.pdf", "the reason names the uploaded file")
	require.False(t, b.check(`document.getElementById("empty").hidden`), "nothing was added to the library")
	b.shoot("library-refused.png")

	// A well-formed PDF with nothing to index passes the sniff: its job
	// fails and the UI says why.
	failed := `#books li[data-state="failed"]`
	b.do(chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{broken}),
		chromedp.Click(chromedp.ID("upload-button")),
		chromedp.WaitVisible(chromedp.CSS(failed+" .note")),
		statusHas("failed"),
	)
	failure := b.text(failed + " .note")
	t.Logf("failed upload: %s", failure)
	require.Contains(t, failure, "indexing failed: ")
	require.Contains(t, failure, "no text")
	require.NotContains(t, failure, "bk_", "no server path in the reason")
	b.shoot("library-failed.png")
	b.do(chromedp.Click(chromedp.CSS(failed+" .delete")), chromedp.WaitVisible(chromedp.ID("empty")))

	// The real book, with a title typed in; indexing runs in the background.
	const title = "An Introduction to R"
	b.do(chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{book}),
		chromedp.SendKeys(chromedp.ID("upload-title"), title),
		chromedp.Click(chromedp.ID("upload-button")),
		statusHas("indexing it now"),
	)
	b.shoot("library-indexing.png")
	b.doWithin(90*time.Second, chromedp.WaitVisible(chromedp.CSS(readyBook)), statusHas("is ready"))
	require.Equal(t, title, b.text(readyBook))
	require.Equal(t, "PDF · 113 pages", b.text(`#books li[data-state="ready"] .meta`))
	require.True(t, b.check(`document.getElementById("empty").hidden`), "the empty-library message is gone")

	// The same file again is a conflict the UI explains.
	b.do(chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{book}),
		chromedp.Click(chromedp.ID("upload-button")),
		statusHas("already in the library"),
	)
	require.Contains(t, b.text("#status"), "“"+title+"”")
	b.shoot("library-duplicate.png")

	cite := `#answer button.cite[data-n="1"]`
	b.do(chromedp.SendKeys(chromedp.ID("question"), "What are the intrinsic attributes of an object?"),
		chromedp.Click(chromedp.ID("ask-button")),
		chromedp.WaitVisible(chromedp.CSS(cite)),
	)
	t.Logf("answer: %s", b.text("#answer"))
	citePage, citeQuote := b.attr(cite, "data-page"), b.attr(cite, "data-quote")
	require.NotEmpty(t, citePage, "citation [1] carries its page")
	// markVisible: the mark lies inside the reader's page box and the window.
	const markVisible = `(() => { const m = document.querySelector("#page mark"); const p = document.getElementById("page").getBoundingClientRect(); const r = m.getBoundingClientRect(); return r.bottom > p.top && r.top < p.bottom && r.bottom > 0 && r.top < window.innerHeight; })()`
	const noOverflow = `document.documentElement.scrollWidth <= document.documentElement.clientWidth`

	for _, width := range []int64{1280, 390} {
		if width == 390 {
			// Clear the page so the wait below sees the new rendering.
			b.do(chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`document.getElementById("page").replaceChildren()`))
		}
		b.do(chromedp.Click(chromedp.CSS(cite)), chromedp.WaitVisible(chromedp.CSS("#page mark")))
		shownPage := b.attr("#page", "data-page")
		markText := b.text("#page mark")
		require.Equal(t, citePage, shownPage, "the reader shows the cited page (width %d)", width)
		n, err := strconv.Atoi(shownPage)
		require.NoError(t, err)
		require.Positive(t, n)
		require.NotEmpty(t, strings.TrimSpace(markText))
		require.Contains(t, norm(citeQuote), norm(markText), "the marked text is the quoted passage")
		require.GreaterOrEqual(t, len(norm(markText)), min(len(norm(citeQuote)), 24))
		require.True(t, b.check(markVisible), "the mark is scrolled into view (width %d)", width)
		require.Contains(t, b.text("#reader-note"), "pdftoppm", "without a renderer the reader says why it shows text")
		require.True(t, b.check(noOverflow), "no horizontal scrolling (width %d)", width)
		if width == 390 {
			b.shoot("reader-citation-phone.png")
			b.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
			require.True(t, b.check(noOverflow), "no horizontal scrolling on the library (width %d)", width)
			b.shoot("library-phone.png")
		} else {
			require.True(t, b.check(`window.scrollY === 0`), "opening a citation leaves the window in place on a wide screen")
			b.shoot("reader-citation.png")
		}
	}

	// A refusal says why under the answer, and a word asked in the other
	// spelling says how it was searched; each question clears the notes
	// of the one before.
	ask := func(q, wait string) {
		b.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); document.getElementById("question").value = ""`),
			chromedp.SendKeys(chromedp.ID("question"), q),
			chromedp.Click(chromedp.ID("ask-button")),
			chromedp.WaitVisible(chromedp.CSS(wait)))
	}
	ask("How do I merge two data frames on a shared ID column, like a database join?", "#notes li.why")
	require.Contains(t, b.text("#answer"), "cannot confirm")
	require.Contains(t, b.text("#notes li.why"), "never mentions “merge”")
	ask("In the past, how was genuinely Poisson data often analysed?", "#notes li.respelled")
	require.Contains(t, b.text("#notes li.respelled"), "analysed → analyzed")
	require.False(t, b.check(`!!document.querySelector("#notes li.why")`), "an answer has no refusal note")
	b.shoot("answer-notes.png")

	// Delete asks first, then the library is empty again.
	b.do(chromedp.EmulateViewport(1280, 900),
		chromedp.Click(chromedp.CSS(`#books li[data-state="ready"] .delete`)),
		chromedp.WaitVisible(chromedp.ID("empty")),
		statusHas("Deleted"),
	)
	select {
	case msg := <-b.dialogs:
		require.Contains(t, msg, title)
	default:
		t.Fatal("delete did not ask for confirmation")
	}
	require.True(t, b.check(`document.getElementById("reader").hidden`), "the deleted book's page is closed")
}

// TestBrowserZeroConfig is `make run` on a fresh machine: no token exists,
// so the page works without one as the local admin, and a plain-text book
// uploaded through the form opens in the reader.
func TestBrowserZeroConfig(t *testing.T) {
	base, _ := realServerWith(t, func(c *Config) {
		c.LocalPrincipal = &citebook.Principal{Tenant: "default", User: "local", Admin: true}
	})
	b := newBrowser(t)
	b.do(chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.WaitVisible(chromedp.ID("upload-form")),
	)
	require.Equal(t, "local@default · admin", b.text("#who"))
	require.False(t, b.check(`document.getElementById("token-box").open`), "no token is asked for")
	require.False(t, b.check(`document.getElementById("status").textContent !== ""`), "no error on a fresh library")

	b.do(chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{corpus.Path(t, "books/mobydick.txt")}),
		chromedp.Click(chromedp.ID("upload-button")),
	)
	b.doWithin(90*time.Second, chromedp.WaitVisible(chromedp.CSS(readyBook)))
	require.Equal(t, "mobydick", b.text(readyBook))
	require.Equal(t, "Text", b.text(`#books li[data-state="ready"] .meta`))
	b.do(chromedp.Click(chromedp.CSS(readyBook)), chromedp.WaitVisible(chromedp.CSS("#page .block")))
	require.Equal(t, "1", b.attr("#page", "data-page"))
	require.Contains(t, b.text("#reader-pos"), "/ ")
}

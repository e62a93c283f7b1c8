package web

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/popplerbox"
)

// highlights reads the reader's highlight boxes as fractions of the page
// image they are drawn on, and the share of dark pixels of the image under
// each (text is dark ink: a box over blank paper has none).
const highlights = `(() => {
  const img = document.querySelector("#page .page-figure img");
  const r = img.getBoundingClientRect();
  const c = document.createElement("canvas");
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  return [...document.querySelectorAll("#page .page-figure .hl")].map((h) => {
    const b = h.getBoundingClientRect();
    const box = { x0: (b.left - r.left) / r.width, y0: (b.top - r.top) / r.height,
      x1: (b.right - r.left) / r.width, y1: (b.bottom - r.top) / r.height };
    const px = g.getImageData(Math.floor(box.x0 * c.width), Math.floor(box.y0 * c.height),
      Math.max(1, Math.ceil((box.x1 - box.x0) * c.width)), Math.max(1, Math.ceil((box.y1 - box.y0) * c.height))).data;
    let dark = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i] + px[i + 1] + px[i + 2] < 3 * 128) dark++;
    return Object.assign(box, { ink: dark / (px.length / 4) });
  });
})()`

type highlight struct {
	X0, Y0, X1, Y1, Ink float64
}

// TestBrowserCitationOnPageImage: from an empty library, a PDF uploaded
// through the form, a question answered, and citation [1] opened: the
// reader shows the cited page as an image with the quote highlighted where
// poppler prints those words, scrolled into view, at desktop and phone
// width; the text view is one click away and page navigation still works.
func TestBrowserCitationOnPageImage(t *testing.T) {
	rend := poppler(t)
	base, token := realServerWith(t, func(c *Config) { c.Renderer = rend })
	file := corpus.Path(t, "books/R-intro.pdf")
	b := newBrowser(t)
	b.do(chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS("#token-form button")),
		chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.SetUploadFiles(chromedp.ID("upload-file"), []string{file}),
		chromedp.Click(chromedp.ID("upload-button")),
	)
	b.doWithin(120*time.Second, chromedp.WaitVisible(chromedp.CSS(readyBook)))

	cite := `#answer button.cite[data-n="1"]`
	b.do(chromedp.SendKeys(chromedp.ID("question"), "What are the intrinsic attributes of an object?"),
		chromedp.Click(chromedp.ID("ask-button")),
		chromedp.WaitVisible(chromedp.CSS(cite)),
	)
	page, err := strconv.Atoi(b.attr(cite, "data-page"))
	require.NoError(t, err)
	quote := b.attr(cite, "data-quote")
	want := popplerbox.Lines(popplerbox.Pages(t, file, page, page), page, quote)
	require.NotEmpty(t, want, "poppler finds the quote %q on page %d", quote, page)

	const hlVisible = `(() => { const m = document.querySelector("#page .hl"); const p = document.getElementById("page").getBoundingClientRect(); const r = m.getBoundingClientRect(); return r.bottom > p.top && r.top < p.bottom && r.bottom > 0 && r.top < window.innerHeight; })()`
	const noOverflow = `document.documentElement.scrollWidth <= document.documentElement.clientWidth`
	for _, width := range []int64{1280, 390} {
		if width == 390 {
			b.do(chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`document.getElementById("page").replaceChildren()`))
		}
		b.do(chromedp.Click(chromedp.CSS(cite)), chromedp.WaitVisible(chromedp.CSS("#page .page-figure .hl")))
		require.Equal(t, strconv.Itoa(page), b.attr("#page", "data-page"))
		require.True(t, b.check(`document.querySelector("#page .page-figure img").naturalWidth > 0`), "the page image loaded")
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](highlights))
		require.NoError(t, err)
		var hls []highlight
		require.NoError(t, json.Unmarshal(v, &hls))
		require.NotEmpty(t, hls)
		for _, w := range want {
			best := 0.0
			for _, h := range hls {
				best = max(best, popplerbox.IoU(w, citebook.Box{Page: page, X0: h.X0, Y0: h.Y0, X1: h.X1, Y1: h.Y1}))
			}
			require.GreaterOrEqual(t, best, 0.5, "a highlight covers poppler's line %+v (width %d): %+v", w, width, hls)
		}
		for _, h := range hls {
			require.Greater(t, h.Ink, 0.03, "the highlight lies over printed text (width %d): %+v", width, h)
		}
		require.True(t, b.check(hlVisible), "the highlight is scrolled into view (width %d)", width)
		require.True(t, b.check(noOverflow), "no horizontal scrolling (width %d)", width)
		t.Logf("width %d: page %d, %d highlights over %d poppler lines", width, page, len(hls), len(want))
		if width == 390 {
			b.shoot("reader-page-image-phone.png")
		} else {
			b.shoot("reader-page-image.png")
		}
	}

	// The text view is one click away, with the passage marked; and back.
	b.do(chromedp.Click(chromedp.ID("view-toggle")), chromedp.WaitVisible(chromedp.CSS("#page mark")))
	require.Equal(t, strconv.Itoa(page), b.attr("#page", "data-page"))
	b.do(chromedp.Click(chromedp.ID("view-toggle")), chromedp.WaitVisible(chromedp.CSS("#page .page-figure .hl")))

	// Paging keeps the image view.
	b.do(chromedp.Click(chromedp.ID("next")), chromedp.Poll[chromedp.Void](
		`document.querySelector('#page .page-figure[data-page="`+strconv.Itoa(page+1)+`"] img') !== null`))
}

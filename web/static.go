package web

import (
	"embed"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// The reader page and the OpenAPI document ship inside the binary so a
// deployment is one file and the page needs no CDN.
//
//go:embed ui/index.html ui/app.js ui/app.css
var uiFiles embed.FS

//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) uiRoutes(e *echo.Echo) {
	serve := func(name, ctype string) echo.HandlerFunc {
		return func(c echo.Context) error {
			b, err := uiFiles.ReadFile(name)
			if err != nil {
				return citebook.Wrap(err, citebook.EINTERNAL, "reading the embedded %s", name)
			}
			c.Response().Header().Set("Cache-Control", "no-cache")
			c.Response().Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' blob:")
			return c.Blob(http.StatusOK, ctype, b)
		}
	}
	e.GET("/", serve("ui/index.html", "text/html; charset=utf-8"))
	e.GET("/app.js", serve("ui/app.js", "text/javascript; charset=utf-8"))
	e.GET("/app.css", serve("ui/app.css", "text/css; charset=utf-8"))
}

func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/json", openAPIDoc)
}

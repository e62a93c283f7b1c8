package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// errorBody is the one error shape every route answers with.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// HTTPStatus maps an error code to its HTTP status. It is the only place this
// mapping exists.
func HTTPStatus(code string) int {
	switch code {
	case citebook.EINVALID:
		return http.StatusBadRequest
	case citebook.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case citebook.EFORBIDDEN:
		return http.StatusForbidden
	case citebook.ENOTFOUND:
		return http.StatusNotFound
	case citebook.ECONFLICT:
		return http.StatusConflict
	case citebook.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case citebook.ERATELIMIT:
		return http.StatusTooManyRequests
	case citebook.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// codeOf reads HTTPStatus backwards, for the statuses echo answers by itself,
// so the mapping between codes and statuses stays written once.
func codeOf(status int) string {
	for _, code := range []string{citebook.EINVALID, citebook.EUNAUTHORIZED, citebook.EFORBIDDEN,
		citebook.ENOTFOUND, citebook.ECONFLICT, citebook.ETOOLARGE, citebook.ERATELIMIT, citebook.EUNAVAILABLE} {
		if HTTPStatus(code) == status {
			return code
		}
	}
	return citebook.EINTERNAL
}

// bodyTooLarge words a body read that hit the MaxBody limit, wherever the
// body is read; nil when err is something else.
func bodyTooLarge(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return citebook.Wrap(err, citebook.ETOOLARGE, "request body is larger than %d bytes", mb.Limit)
	}
	return nil
}

// fromEcho turns echo's own errors (unknown route, wrong method, body limit)
// into application errors so they take the same path as ours.
func fromEcho(err error) error {
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		if tl := bodyTooLarge(err); tl != nil {
			return tl
		}
		return err
	}
	code, msg := codeOf(he.Code), strings.ToLower(http.StatusText(he.Code))
	switch he.Code {
	case http.StatusNotFound:
		msg = "no such route"
	case http.StatusMethodNotAllowed:
		code, msg = citebook.EINVALID, "method not allowed on this route"
	case http.StatusRequestEntityTooLarge:
		msg = "request body is too large"
	case http.StatusUnauthorized:
		msg = "authentication required"
	case http.StatusBadRequest:
		msg = "malformed request"
	}
	if code == citebook.EINTERNAL {
		msg = "internal error"
	}
	return citebook.Wrap(err, code, "%s", msg)
}

// writeError answers with the JSON error shape and logs the cause for
// operators; users see only the message.
func writeError(log *slog.Logger, c echo.Context, err error) {
	err = fromEcho(err)
	code := citebook.ErrorCode(err)
	status := HTTPStatus(code)
	attrs := []any{"method", c.Request().Method, "route", c.Path(), "status", status, "code", code, "err", err}
	if status >= 500 {
		log.Error("request failed", attrs...)
	} else {
		log.Info("request rejected", attrs...)
	}
	if c.Response().Committed {
		return
	}
	if code == citebook.EUNAUTHORIZED {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="citebook"`)
	}
	_ = c.JSON(status, errorBody{Error: errorDetail{Code: code, Message: citebook.ErrorMessage(err)}})
}

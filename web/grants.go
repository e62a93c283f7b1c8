package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
)

// grantRequest is the body of POST /v1/grants; the tenant is always the
// admin's own.
type grantRequest struct {
	BookID      string          `json:"book_id"`
	Path        []string        `json:"path,omitempty"`
	SubjectKind acl.SubjectKind `json:"subject_kind"`
	Subject     string          `json:"subject,omitempty"`
	Effect      acl.Effect      `json:"effect"`
}

// listGrants answers the admin's tenant's grants, of one book with ?book_id=.
func (s *Server) listGrants(c echo.Context) error {
	p := principalOf(c)
	gs, err := s.cfg.Grants.List(c.Request().Context(), p.Tenant, c.QueryParam("book_id"))
	if err != nil {
		return err
	}
	if gs == nil {
		gs = []acl.Grant{}
	}
	return c.JSON(http.StatusOK, map[string]any{"grants": gs})
}

// addGrant validates and stores a grant in the admin's tenant; the next
// request of any principal is resolved with it.
func (s *Server) addGrant(c echo.Context) error {
	var req grantRequest
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if tl := bodyTooLarge(err); tl != nil {
			return tl
		}
		if errors.Is(err, io.EOF) {
			return citebook.Errorf(citebook.EINVALID, "send a JSON grant: book_id, subject_kind, subject, effect and optionally path")
		}
		return citebook.Wrap(err, citebook.EINVALID, "malformed JSON body: %v", err)
	}
	if dec.More() {
		return citebook.Errorf(citebook.EINVALID, "send one JSON grant")
	}
	g, err := s.cfg.Grants.Add(c.Request().Context(), acl.Grant{
		Tenant: principalOf(c).Tenant, BookID: req.BookID, Path: req.Path,
		SubjectKind: req.SubjectKind, Subject: req.Subject, Effect: req.Effect,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, g)
}

// removeGrant deletes a grant of the admin's tenant.
func (s *Server) removeGrant(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return citebook.Errorf(citebook.EINVALID, "grant IDs are positive integers, not %q", c.Param("id"))
	}
	if err := s.cfg.Grants.Remove(c.Request().Context(), principalOf(c).Tenant, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// Package auth keeps the bearer API tokens of the web API and MCP server and
// maps them to principals. Tokens are 32 random bytes shown once at creation;
// only their sha256 is stored, so the database never holds a usable secret.
// The table is created by migrations/0003_tokens.sql.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/citebook/citebook"
)

// tokenPrefix marks citebook tokens so they are recognisable in logs and
// secret scanners.
const tokenPrefix = "cb_"

// Token describes an issued token without its secret.
type Token struct {
	ID        string             `json:"id"`
	Principal citebook.Principal `json:"principal"`
	Created   time.Time          `json:"created"`
	Revoked   time.Time          `json:"revoked,omitzero"`
}

// Store reads and writes tokens in the metadata database.
type Store struct {
	db  DB
	now func() time.Time
}

// DB is the metadata database as the tokens need it: a *sql.DB of SQLite,
// or the store's dialect-aware pool (index/metadb's SQL), which rebinds the
// ? placeholders below for PostgreSQL.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// NewStore uses db, which must have the migrations applied.
func NewStore(db DB) *Store {
	return &Store{db: db, now: time.Now}
}

// Create issues a token for p and returns the secret, which is never stored
// and cannot be shown again.
func (s *Store) Create(ctx context.Context, p citebook.Principal) (string, Token, error) {
	if strings.TrimSpace(p.Tenant) == "" || strings.TrimSpace(p.User) == "" {
		return "", Token{}, citebook.Errorf(citebook.EINVALID, "a token needs a tenant and a user")
	}
	for _, s := range append([]string{p.Tenant, p.User}, p.Groups...) {
		// What the metadata databases store as given (PostgreSQL's text
		// takes no NUL and no invalid UTF-8).
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return "", Token{}, citebook.Errorf(citebook.EINVALID, "token names must be UTF-8 text without NUL characters")
		}
	}
	for _, g := range p.Groups {
		if g == "" || strings.Contains(g, ",") {
			return "", Token{}, citebook.Errorf(citebook.EINVALID, "invalid group name %q", g)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, citebook.Wrap(err, citebook.EINTERNAL, "generating token")
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	hash := hashToken(secret)
	t := Token{ID: hash[:12], Principal: p, Created: s.now().UTC().Truncate(time.Second)}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO api_tokens (id, hash, tenant, user_name, groups, admin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.ID, hash, p.Tenant, p.User, strings.Join(p.Groups, ","), p.Admin, t.Created.Format(time.RFC3339))
	if err != nil {
		return "", Token{}, citebook.Wrap(err, citebook.EINTERNAL, "storing token")
	}
	return secret, t, nil
}

// Lookup returns the token a secret belongs to; unknown and revoked secrets
// are unauthorized, with the same message so callers learn nothing.
func (s *Store) Lookup(ctx context.Context, secret string) (Token, error) {
	if !strings.HasPrefix(secret, tokenPrefix) {
		return Token{}, citebook.Errorf(citebook.EUNAUTHORIZED, "invalid or revoked token")
	}
	row := s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ? AND revoked_at IS NULL`, hashToken(secret))
	t, err := scanToken(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, citebook.Errorf(citebook.EUNAUTHORIZED, "invalid or revoked token")
	} else if err != nil {
		return Token{}, citebook.Wrap(err, citebook.EUNAVAILABLE, "checking token")
	}
	return t, nil
}

// List returns every token, revoked ones included, oldest first.
func (s *Store) List(ctx context.Context) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "listing tokens")
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EINTERNAL, "listing tokens")
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "listing tokens")
	}
	return out, nil
}

// Revoke disables a token by its ID; revoking twice is not an error.
func (s *Store) Revoke(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`,
		s.now().UTC().Format(time.RFC3339), id)
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "revoking token")
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return citebook.Errorf(citebook.ENOTFOUND, "no token with id %q", id)
	}
	return nil
}

// Active counts tokens that still work; serve uses it to decide whether the
// zero-config local principal may be offered.
func (s *Store) Active(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		return 0, citebook.Wrap(err, citebook.EINTERNAL, "counting tokens")
	}
	return n, nil
}

// AnyIssued reports whether a token was ever created. Tokens are revoked,
// never deleted, so the answer is persistent: once true, zero-config mode
// stays off for this library, even after every token is revoked.
func (s *Store) AnyIssued(ctx context.Context) (bool, error) {
	var issued bool // SQLite answers 1, PostgreSQL true; both scan as a bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM api_tokens)`).Scan(&issued); err != nil {
		return false, citebook.Wrap(err, citebook.EUNAVAILABLE, "checking for API tokens")
	}
	return issued, nil
}

const tokenColumns = `id, tenant, user_name, groups, admin, created_at, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var (
		t                Token
		groups, created  string
		revoked          sql.NullString
		admin            bool
		tenant, userName string
	)
	if err := row.Scan(&t.ID, &tenant, &userName, &groups, &admin, &created, &revoked); err != nil {
		return Token{}, err
	}
	t.Principal = citebook.Principal{Tenant: tenant, User: userName, Admin: admin}
	if groups != "" {
		t.Principal.Groups = strings.Split(groups, ",")
	}
	t.Created, _ = time.Parse(time.RFC3339, created)
	if revoked.Valid {
		t.Revoked, _ = time.Parse(time.RFC3339, revoked.String)
	}
	return t, nil
}

func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Verify is Lookup in the shape web.TokenVerifier expects: the token's public
// ID keys rate limits, the principal scopes every read.
func (s *Store) Verify(ctx context.Context, secret string) (string, citebook.Principal, error) {
	t, err := s.Lookup(ctx, secret)
	if err != nil {
		return "", citebook.Principal{}, err
	}
	return t.ID, t.Principal, nil
}

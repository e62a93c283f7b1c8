-- API tokens for the web API and MCP server. Only the sha256 of a token is
-- stored, so a leaked database does not leak usable credentials.

-- +goose Up
CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,          -- short public handle shown by "tokens list"
    hash       TEXT NOT NULL UNIQUE,      -- hex sha256 of the secret token
    tenant     TEXT NOT NULL,
    user_name  TEXT NOT NULL,
    groups     TEXT NOT NULL DEFAULT '',  -- comma-separated ACL groups
    admin      INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,             -- RFC 3339, UTC
    revoked_at TEXT                       -- NULL while the token is valid
);
CREATE INDEX api_tokens_tenant ON api_tokens (tenant);

-- +goose Down
DROP TABLE api_tokens;

-- PostgreSQL edition of sqlite/0003_tokens.sql: API tokens, stored as the
-- sha256 of the secret. admin is a boolean here (SQLite keeps 0/1).

-- +goose Up
CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    tenant     TEXT NOT NULL,
    user_name  TEXT NOT NULL,
    groups     TEXT NOT NULL DEFAULT '',
    admin      BOOLEAN NOT NULL DEFAULT false,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_tokens_tenant ON api_tokens (tenant);

-- +goose Down
DROP TABLE api_tokens;

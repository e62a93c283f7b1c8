-- PostgreSQL edition of sqlite/0003_tokens.sql: API tokens, stored as the
-- sha256 of the secret. admin is a boolean here (SQLite keeps 0/1).

-- +goose Up
CREATE TABLE api_tokens (
    id         TEXT COLLATE "C" PRIMARY KEY,
    hash       TEXT COLLATE "C" NOT NULL UNIQUE,
    tenant     TEXT COLLATE "C" NOT NULL,
    user_name  TEXT COLLATE "C" NOT NULL,
    groups     TEXT COLLATE "C" NOT NULL DEFAULT '',
    admin      BOOLEAN NOT NULL DEFAULT false,
    created_at TEXT COLLATE "C" NOT NULL,
    revoked_at TEXT COLLATE "C"
);
CREATE INDEX api_tokens_tenant ON api_tokens (tenant);

-- +goose Down
DROP TABLE api_tokens;

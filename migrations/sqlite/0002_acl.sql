-- +goose Up
-- grants widen or narrow what a principal may read: a whole book (path '')
-- or a chapter and everything under it (path = heading path joined by
-- U+001F), for one user, one group or the whole tenant. Deny wins over allow.
CREATE TABLE grants (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant       TEXT NOT NULL,
    book_id      TEXT NOT NULL,
    path         TEXT NOT NULL DEFAULT '',
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('user', 'group', 'tenant')),
    subject      TEXT NOT NULL DEFAULT '',
    effect       TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
    created      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (tenant, book_id, path, subject_kind, subject, effect)
);
CREATE INDEX grants_tenant_book ON grants (tenant, book_id);

-- +goose Down
DROP TABLE grants;

-- Metadata of the library: books, their versions, index jobs and their
-- batches, the parents and chunks of every served version, and the library's
-- embedding version. Times are RFC 3339 UTC text; lists are JSON arrays.

-- +goose Up
CREATE TABLE books (
    id             TEXT PRIMARY KEY,
    tenant         TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    format         TEXT NOT NULL DEFAULT '',
    language       TEXT NOT NULL DEFAULT '',
    groups         TEXT NOT NULL DEFAULT '[]',
    source         TEXT NOT NULL DEFAULT '',
    pages          INTEGER NOT NULL DEFAULT 0,
    active_version INTEGER NOT NULL DEFAULT 0,
    created        TEXT NOT NULL
);
CREATE INDEX books_tenant ON books (tenant);

-- source_hash is the hash of the file bytes, so an unchanged file is
-- recognised without parsing it.
CREATE TABLE versions (
    book_id      TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    number       INTEGER NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    source_hash  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('queued', 'indexing', 'completed', 'failed')),
    error        TEXT NOT NULL DEFAULT '',
    embedding    TEXT NOT NULL DEFAULT '',
    chunks       INTEGER NOT NULL DEFAULT 0,
    created      TEXT NOT NULL,
    completed    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (book_id, number)
);

CREATE TABLE jobs (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id  TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    version  INTEGER NOT NULL,
    status   TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    started  TEXT NOT NULL,
    finished TEXT NOT NULL DEFAULT '',
    error    TEXT NOT NULL DEFAULT '',
    chunks   INTEGER NOT NULL DEFAULT 0,
    embedded INTEGER NOT NULL DEFAULT 0,
    upserted INTEGER NOT NULL DEFAULT 0,
    deleted  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_book ON jobs (book_id, version);

CREATE TABLE batches (
    job_id    INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    n         INTEGER NOT NULL,
    status    TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    attempts  INTEGER NOT NULL DEFAULT 0,
    error     TEXT NOT NULL DEFAULT '',
    chunk_ids TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (job_id, n)
);

-- A parent or chunk row is one lifespan of a record: visible in book versions
-- [version, retired), retired = 0 while it is part of the newest build. The
-- same ID gets a new row when its placement changes between versions.
CREATE TABLE parents (
    id           TEXT NOT NULL,
    book_id      TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    retired      INTEGER NOT NULL DEFAULT 0,
    ordinal      INTEGER NOT NULL,
    heading_path TEXT NOT NULL DEFAULT '[]',
    page_start   INTEGER NOT NULL DEFAULT 0,
    page_end     INTEGER NOT NULL DEFAULT 0,
    text         TEXT NOT NULL,
    pages        TEXT NOT NULL DEFAULT '[]',
    data         TEXT NOT NULL,
    PRIMARY KEY (id, version)
);
CREATE INDEX parents_book ON parents (book_id, version, retired);

CREATE TABLE chunks (
    id           TEXT NOT NULL,
    book_id      TEXT NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    retired      INTEGER NOT NULL DEFAULT 0,
    parent_id    TEXT NOT NULL,
    ordinal      INTEGER NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    page_start   INTEGER NOT NULL DEFAULT 0,
    page_end     INTEGER NOT NULL DEFAULT 0,
    hit_count    INTEGER NOT NULL DEFAULT 0,
    data         TEXT NOT NULL,
    PRIMARY KEY (id, version)
);
CREATE INDEX chunks_book ON chunks (book_id, ordinal);
CREATE INDEX chunks_parent ON chunks (parent_id);

CREATE TABLE index_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE index_settings;
DROP TABLE chunks;
DROP TABLE parents;
DROP TABLE batches;
DROP TABLE jobs;
DROP TABLE versions;
DROP TABLE books;

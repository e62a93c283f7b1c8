-- changes logs every switch of a book's served version and every deletion
-- of a book, written in the transaction that makes the change. Another
-- process sharing the library (the server while `citebook index` runs) polls
-- the newest gen and reloads the in-memory indexes of the books changed
-- since the gen it has seen. origin names the database handle that wrote
-- the row, so a process skips its own changes, which its memory already
-- has. Old rows are pruned; a reader that fell further behind reloads all.

-- +goose Up
CREATE TABLE changes (
    gen     INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id TEXT NOT NULL,
    origin  TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL
);

-- +goose Down
DROP TABLE changes;

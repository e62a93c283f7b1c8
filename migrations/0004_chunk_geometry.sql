-- Where every word of a chunk is printed (PDF books), so a citation can be
-- drawn as boxes on the page image. A compact binary encoding
-- (index/sqlite/geometry.go); empty for reflowable books and for chunks
-- indexed before geometry was kept. Kept out of the chunk's JSON so reads
-- that do not draw citations never decode it.

-- +goose Up
ALTER TABLE chunks ADD COLUMN geometry BLOB NOT NULL DEFAULT x'';

-- +goose Down
ALTER TABLE chunks DROP COLUMN geometry;

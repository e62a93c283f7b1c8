-- Where every word of a chunk is printed (PDF books), so a citation can be
-- drawn as boxes on the page image. A compact binary encoding
-- (index/sqlite/geometry.go); empty for reflowable books and for chunks
-- indexed before geometry was kept. Kept out of the chunk's JSON so reads
-- that do not draw citations never decode it.

-- A job also records what OCR did for a scanned PDF (JSON: pages sent,
-- pages read, and each page that failed with its reason).

-- +goose Up
ALTER TABLE chunks ADD COLUMN geometry BLOB NOT NULL DEFAULT x'';
ALTER TABLE jobs ADD COLUMN ocr TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE jobs DROP COLUMN ocr;
ALTER TABLE chunks DROP COLUMN geometry;

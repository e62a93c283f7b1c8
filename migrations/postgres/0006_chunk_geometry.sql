-- PostgreSQL edition of sqlite/0006_chunk_geometry.sql: where every word of
-- a chunk is printed (the store's compact binary encoding, bytea here), and
-- what OCR did for a job.

-- +goose Up
ALTER TABLE chunks ADD COLUMN geometry BYTEA NOT NULL DEFAULT ''::bytea;
ALTER TABLE jobs ADD COLUMN ocr TEXT COLLATE "C" NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE jobs DROP COLUMN ocr;
ALTER TABLE chunks DROP COLUMN geometry;

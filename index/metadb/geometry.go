package metadb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"

	"github.com/citebook/citebook"
)

// geometryV1 tags the encoding below, so a later one can be told apart.
const geometryV1 = 1

// encodeGeometry packs word boxes at about 14 bytes a word (JSON took ~90):
// per word the start as a delta from the previous one, the length, the line,
// page<<1|ocr as uvarints, then the four coordinates as 16-bit fractions of
// the page (1/65535 of a page is far below a pixel at any sane width).
func encodeGeometry(ws []citebook.WordBox) []byte {
	if len(ws) == 0 {
		return []byte{}
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen32+len(ws)*16)
	b = append(b, geometryV1)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	prev := 0
	for _, w := range ws {
		b = binary.AppendVarint(b, int64(w.Start-prev))
		prev = w.Start
		b = binary.AppendUvarint(b, uint64(max(0, w.End-w.Start)))
		b = binary.AppendUvarint(b, uint64(max(0, w.Line)))
		p := uint64(max(0, w.Page)) << 1
		if w.OCR {
			p |= 1
		}
		b = binary.AppendUvarint(b, p)
		for _, v := range [4]float64{w.X0, w.Y0, w.X1, w.Y1} {
			b = binary.BigEndian.AppendUint16(b, uint16(math.Round(math.Max(0, math.Min(1, v))*65535)))
		}
	}
	return b
}

var errGeometry = errors.New("corrupt chunk geometry")

// decodeGeometry reverses encodeGeometry; an empty blob is no geometry.
func decodeGeometry(b []byte) ([]citebook.WordBox, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != geometryV1 {
		return nil, errGeometry
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return nil, errGeometry
	}
	out := make([]citebook.WordBox, 0, n)
	prev := 0
	for range n {
		d, k := binary.Varint(b)
		if k <= 0 {
			return nil, errGeometry
		}
		b = b[k:]
		length, ok1 := uv()
		line, ok2 := uv()
		page, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || len(b) < 8 || length > math.MaxInt32 || line > math.MaxInt32 || page > math.MaxInt32 {
			return nil, errGeometry
		}
		w := citebook.WordBox{Start: prev + int(d), Line: int(line), OCR: page&1 == 1}
		w.End = w.Start + int(length)
		w.Page = int(page >> 1)
		prev = w.Start
		c := [4]float64{}
		for i := range c {
			c[i] = float64(binary.BigEndian.Uint16(b)) / 65535
			b = b[2:]
		}
		w.X0, w.Y0, w.X1, w.Y1 = c[0], c[1], c[2], c[3]
		out = append(out, w)
	}
	if len(b) != 0 {
		return nil, errGeometry
	}
	return out, nil
}

// Geometry returns the word boxes of chunks as their books' served versions
// have them, by chunk ID; chunks without geometry are left out. A corrupt
// blob is logged by the caller's error and costs only the boxes.
func (d *DB) Geometry(ctx context.Context, ids []string) (map[string][]citebook.WordBox, error) {
	out := map[string][]citebook.WordBox{}
	err := eachRowIn(ctx, d.db, `SELECT r.id, r.geometry FROM chunks r`+activeJoin+
		`AND length(r.geometry) > 0 AND r.id IN (?)`, ids, nil, func(rows *sql.Rows) error {
		var id string
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		ws, err := decodeGeometry(blob)
		if err != nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "chunk geometry unreadable")
		}
		out[id] = ws
		return nil
	})
	if err != nil {
		var ce *citebook.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, unavailable(err, "read chunk geometry")
	}
	return out, nil
}

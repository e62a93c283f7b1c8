// Package milvus is the index.VectorStore for deployments that outgrow the
// embedded store: chunks live in one Milvus collection with their access
// fields as typed scalar columns, so the reader's filter runs inside the ANN
// search rather than on a finished top-k.
package milvus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

// Column names of the collection.
const (
	fChunkID      = "chunk_id"
	fBookID       = "book_id"
	fVersion      = "version"
	fRetired      = "retired"
	fParentID     = "parent_id"
	fTenantID     = "tenant_id"
	fACL          = "acl"
	fPageStart    = "page_start"
	fPageEnd      = "page_end"
	fPrintedStart = "printed_start"
	fPrintedEnd   = "printed_end"
	fHeadingPath  = "heading_path"
	fText         = "text"
	fMeta         = "meta"
	fEmbedding    = "embedding"
	fVector       = "vector"
)

// Size limits of the VarChar columns, in bytes. Milvus caps a VarChar at
// 65535 bytes; IDs are kept short so expressions and keys stay cheap.
const (
	maxIDLen    = 512
	maxLabelLen = 256
	maxLongLen  = 65535
)

// Batch sizes: Milvus rejects requests above its message limit (64 MiB by
// default) and expressions with very long IN lists parse slowly.
const (
	maxBatchBytes = 16 << 20
	maxBatchRows  = 1000
	maxIDsPerExpr = 500
	maxTopK       = 16384 // Milvus' topk limit
)

// HNSW parameters: M and efConstruction trade build time for recall; ef at
// search time must be at least k.
const (
	hnswM              = 16
	hnswEfConstruction = 200
	minSearchEf        = 64
)

var collectionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,254}$`)

// Config says where the collection lives and what it holds.
type Config struct {
	Addr       string // host:port of the Milvus proxy
	Collection string // created on first Open; letters, digits and underscores
	Dim        int    // vector dimension of the embedding model
	// Timeout bounds every call so a hung server surfaces as unavailable
	// instead of blocking a reader; 0 means 30s.
	Timeout time.Duration
	// DialTimeout bounds connecting in Open; 0 means 10s.
	DialTimeout time.Duration
	// StrongSearch makes Search see writes made by any client. By default
	// Search uses session consistency: it sees every write made through
	// this Store (what an indexer in the same process relies on) without
	// waiting for the server's next time tick as strong does (~200ms per
	// search). Reads that feed writes (Retire) or reconciliation (IDs, Get)
	// are always strong.
	StrongSearch bool
	// Index is the vector index type: "auto" (the default; FLAT below
	// 50k chunks, IVF_FLAT above — see indexplan.go), "FLAT", "IVF_FLAT"
	// or "HNSW".
	Index string
}

// Store is a VectorStore backed by one Milvus collection.
type Store struct {
	c      client.Client
	cfg    Config
	search entity.ConsistencyLevel
	index  entity.IndexType // built on the vector field (ensureIndex)
	lists  int              // IVF_FLAT's nlist
}

var _ index.VectorStore = (*Store)(nil)

// dialOptions keeps the connection healthy without tripping the server's
// keepalive enforcement (Milvus 2.3 allows pings every 5s at the fastest;
// faster pings are answered with GOAWAY "too_many_pings"). No WithBlock
// (deprecated in grpc): the SDK's first call, Connect, is retried on
// Unavailable by its interceptor, so Open still waits for a server that is
// starting and fails with unavailable at DialTimeout for one that is not.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                60 * time.Second,
			Timeout:             10 * time.Second,
			PermitWithoutStream: false,
		}),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
			MinConnectTimeout: 3 * time.Second,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)),
	}
}

// Open connects to Milvus, creates the collection and its HNSW index when
// missing, and loads it. An existing collection of another dimension is a
// conflict rather than something to silently reuse.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Addr == "" {
		return nil, citebook.Errorf(citebook.EINVALID, "milvus address is empty")
	}
	if !collectionName.MatchString(cfg.Collection) {
		return nil, citebook.Errorf(citebook.EINVALID, "milvus collection name %q is invalid", cfg.Collection)
	}
	if cfg.Dim <= 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "milvus vector dimension must be positive, got %d", cfg.Dim)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	c, err := client.NewClient(dctx, client.Config{Address: cfg.Addr, DialOptions: dialOptions()})
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "milvus at %s is unavailable", cfg.Addr)
	}
	s := &Store{c: c, cfg: cfg, search: entity.ClSession}
	if cfg.StrongSearch {
		s.search = entity.ClStrong
	}
	if err := s.ensureCollection(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) ensureCollection(ctx context.Context) error {
	// Creating and loading a collection is slower than a query; give it
	// several call timeouts.
	ctx, cancel := context.WithTimeout(ctx, 4*s.cfg.Timeout)
	defer cancel()
	name := s.cfg.Collection
	has, err := s.c.HasCollection(ctx, name)
	if err != nil {
		return s.wrap(ctx, err, "checking collection %s", name)
	}
	if has {
		coll, err := s.c.DescribeCollection(ctx, name)
		if err != nil {
			return s.wrap(ctx, err, "describing collection %s", name)
		}
		dim := -1
		for _, f := range coll.Schema.Fields {
			if f.Name == fVector {
				fmt.Sscan(f.TypeParams[entity.TypeParamDim], &dim)
			}
		}
		if dim != s.cfg.Dim {
			return citebook.Errorf(citebook.ECONFLICT, "milvus collection %s holds %d-dimensional vectors, the embedding model makes %d", name, dim, s.cfg.Dim)
		}
	} else {
		if err := s.c.CreateCollection(ctx, schema(name, s.cfg.Dim), 1, client.WithConsistencyLevel(entity.ClStrong)); err != nil {
			return s.wrap(ctx, err, "creating collection %s", name)
		}
	}
	if err := s.ensureIndex(ctx, name); err != nil {
		return err
	}
	if err := s.c.LoadCollection(ctx, name, false); err != nil {
		return s.wrap(ctx, err, "loading collection %s", name)
	}
	return nil
}

// schema lays the chunk out as typed columns for filtering and display; meta
// holds the rest of the chunk as JSON so Get round-trips every field.
func schema(name string, dim int) *entity.Schema {
	varchar := func(n string, max int) *entity.Field {
		return entity.NewField().WithName(n).WithDataType(entity.FieldTypeVarChar).WithMaxLength(int64(max))
	}
	int64f := func(n string) *entity.Field {
		return entity.NewField().WithName(n).WithDataType(entity.FieldTypeInt64)
	}
	return entity.NewSchema().WithName(name).
		WithDescription("citebook chunks").
		WithField(varchar(fChunkID, maxIDLen).WithIsPrimaryKey(true)).
		WithField(varchar(fBookID, maxIDLen)).
		WithField(int64f(fVersion)).
		WithField(int64f(fRetired)).
		WithField(varchar(fParentID, maxIDLen)).
		WithField(varchar(fTenantID, maxIDLen)).
		WithField(varchar(fACL, maxLongLen)).
		WithField(int64f(fPageStart)).
		WithField(int64f(fPageEnd)).
		WithField(varchar(fPrintedStart, maxLabelLen)).
		WithField(varchar(fPrintedEnd, maxLabelLen)).
		WithField(varchar(fHeadingPath, maxLongLen)).
		WithField(varchar(fText, maxLongLen)).
		WithField(varchar(fMeta, maxLongLen)).
		WithField(varchar(fEmbedding, maxLabelLen)).
		WithField(entity.NewField().WithName(fVector).WithDataType(entity.FieldTypeFloatVector).WithDim(int64(dim)))
}

// Drop deletes the whole collection; tests and re-index-from-scratch use it.
func (s *Store) Drop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.c.DropCollection(ctx, s.cfg.Collection); err != nil {
		return s.wrap(ctx, err, "dropping collection %s", s.cfg.Collection)
	}
	return nil
}

// Close releases the connection.
func (s *Store) Close() error { return s.c.Close() }

// wrap classifies a Milvus error: anything that means the server could not be
// reached in time is unavailable (callers may retry or degrade), the rest is
// internal. The cause stays in the chain for operators' logs.
func (s *Store) wrap(ctx context.Context, err error, what string, args ...any) error {
	if unavailable(ctx, err) {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "milvus at %s is unavailable", s.cfg.Addr)
	}
	return citebook.Wrap(err, citebook.EINTERNAL, "milvus: "+what+" failed", args...)
}

func unavailable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, client.ErrClientNotReady) {
		return true
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted, codes.ResourceExhausted:
			return true
		}
	}
	// A restarted server answers "collection not loaded" until it has
	// reloaded the collection: a passing outage, not a fault of ours.
	return strings.Contains(err.Error(), "not loaded")
}

// row is one chunk as the collection stores it.
type row struct {
	chunk  citebook.Chunk
	vector []float32
}

// validate reports what Milvus would reject, as an error a caller can act on.
func (s *Store) validate(c *citebook.Chunk, vec []float32) error {
	if len(vec) != s.cfg.Dim {
		return citebook.Errorf(citebook.EINVALID, "chunk %q has a %d-dimensional vector, the store holds %d", c.ID, len(vec), s.cfg.Dim)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"id", c.ID, maxIDLen}, {"book id", c.BookID, maxIDLen}, {"parent id", c.ParentID, maxIDLen},
		{"tenant", c.Tenant, maxIDLen}, {"printed page", c.PrintedStart, maxLabelLen},
		{"printed page", c.PrintedEnd, maxLabelLen}, {"embedding", c.Embedding, maxLabelLen},
	} {
		if !utf8.ValidString(f.v) {
			return citebook.Errorf(citebook.EINVALID, "chunk %q: %s is not valid UTF-8", c.ID, f.name)
		}
		if len(f.v) > f.max {
			return citebook.Errorf(citebook.EINVALID, "chunk %q: %s is longer than %d bytes", c.ID, f.name, f.max)
		}
	}
	if len(c.Text) > maxLongLen {
		return citebook.Errorf(citebook.ETOOLARGE, "chunk %q: text of %d bytes exceeds Milvus' %d-byte limit", c.ID, len(c.Text), maxLongLen)
	}
	return nil
}

// Upsert inserts or replaces chunks by ID, in batches that fit a request.
func (s *Store) Upsert(ctx context.Context, chunks []citebook.Chunk, vectors [][]float32) error {
	if len(chunks) != len(vectors) {
		return citebook.Errorf(citebook.EINVALID, "upsert of %d chunks with %d vectors", len(chunks), len(vectors))
	}
	rows := make([]row, 0, len(chunks))
	seen := make(map[string]int, len(chunks))
	for i := range chunks {
		if err := s.validate(&chunks[i], vectors[i]); err != nil {
			return err
		}
		// Milvus keeps duplicate keys of one request side by side; the
		// last write of an ID wins, as with repeated calls.
		if j, ok := seen[chunks[i].ID]; ok {
			rows[j] = row{chunks[i], vectors[i]}
			continue
		}
		seen[chunks[i].ID] = len(rows)
		rows = append(rows, row{chunks[i], vectors[i]})
	}
	return s.write(ctx, rows)
}

func (s *Store) write(ctx context.Context, rows []row) error {
	for start := 0; start < len(rows); {
		end, size := start, 0
		for end < len(rows) && end-start < maxBatchRows && (end == start || size+rowSize(&rows[end]) <= maxBatchBytes) {
			size += rowSize(&rows[end])
			end++
		}
		cols, err := columns(rows[start:end], s.cfg.Dim)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		_, err = s.c.Upsert(cctx, s.cfg.Collection, "", cols...)
		if err != nil {
			err = s.wrap(cctx, err, "upserting %d chunks", end-start)
		}
		cancel()
		if err != nil {
			return err
		}
		start = end
	}
	return nil
}

func rowSize(r *row) int {
	c := &r.chunk
	return 2*len(c.Text) + 4*len(r.vector) + 512 + 64*len(c.Pages) + 2*len(c.ID) + len(c.BookID) + len(c.ParentID)
}

// columns turns rows into the collection's columns.
func columns(rows []row, dim int) ([]entity.Column, error) {
	n := len(rows)
	ids, books, parents, tenants := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	acl, printedStart, printedEnd, headings := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	texts, metas, embeddings := make([]string, n), make([]string, n), make([]string, n)
	versions, retired, pageStart, pageEnd := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	vectors := make([][]float32, n)
	for i := range rows {
		c := rows[i].chunk
		ids[i], books[i], parents[i], tenants[i] = c.ID, c.BookID, c.ParentID, c.Tenant
		printedStart[i], printedEnd[i], texts[i], embeddings[i] = c.PrintedStart, c.PrintedEnd, c.Text, c.Embedding
		versions[i], pageStart[i], pageEnd[i] = int64(c.Version), int64(c.PageStart), int64(c.PageEnd)
		retired[i] = notRetired
		if c.Retired != 0 {
			retired[i] = int64(c.Retired)
		}
		vectors[i] = rows[i].vector
		var err error
		if acl[i], err = jsonString(c.Groups); err != nil {
			return nil, err
		}
		if headings[i], err = jsonString(c.HeadingPath); err != nil {
			return nil, err
		}
		c.Text = "" // stored once, in its own column
		if metas[i], err = jsonString(c); err != nil {
			return nil, err
		}
		for _, v := range []string{acl[i], headings[i], metas[i]} {
			if len(v) > maxLongLen {
				return nil, citebook.Errorf(citebook.ETOOLARGE, "chunk %q: metadata of %d bytes exceeds Milvus' %d-byte limit", c.ID, len(v), maxLongLen)
			}
		}
	}
	return []entity.Column{
		entity.NewColumnVarChar(fChunkID, ids),
		entity.NewColumnVarChar(fBookID, books),
		entity.NewColumnInt64(fVersion, versions),
		entity.NewColumnInt64(fRetired, retired),
		entity.NewColumnVarChar(fParentID, parents),
		entity.NewColumnVarChar(fTenantID, tenants),
		entity.NewColumnVarChar(fACL, acl),
		entity.NewColumnInt64(fPageStart, pageStart),
		entity.NewColumnInt64(fPageEnd, pageEnd),
		entity.NewColumnVarChar(fPrintedStart, printedStart),
		entity.NewColumnVarChar(fPrintedEnd, printedEnd),
		entity.NewColumnVarChar(fHeadingPath, headings),
		entity.NewColumnVarChar(fText, texts),
		entity.NewColumnVarChar(fMeta, metas),
		entity.NewColumnVarChar(fEmbedding, embeddings),
		entity.NewColumnFloatVector(fVector, dim, vectors),
	}, nil
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", citebook.Wrap(err, citebook.EINTERNAL, "encoding chunk metadata")
	}
	return string(b), nil
}

// Retire marks the given chunks of a book retired from version on. Milvus
// cannot update a column in place, so the rows are read back (vectors too)
// and upserted with the new value.
func (s *Store) Retire(ctx context.Context, bookID string, ids []string, version int) error {
	for start := 0; start < len(ids); start += maxIDsPerExpr {
		batch := ids[start:min(start+maxIDsPerExpr, len(ids))]
		rows, err := s.query(ctx, bookExpr(bookID)+" && "+idsExpr(batch), true)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].chunk.Retired = version
		}
		if err := s.write(ctx, rows); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes chunks by ID; IDs that are not stored are ignored.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += maxIDsPerExpr {
		batch := ids[start:min(start+maxIDsPerExpr, len(ids))]
		cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err := s.c.Delete(cctx, s.cfg.Collection, "", idsExpr(batch))
		if err != nil {
			err = s.wrap(cctx, err, "deleting %d chunks", len(batch))
		}
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// Search runs the filtered ANN search; the filter expression is evaluated by
// Milvus while it walks the index, so k results come back whenever k chunks
// pass the filter.
func (s *Store) Search(ctx context.Context, vec []float32, f citebook.Filter, k int) ([]citebook.Hit, error) {
	if len(vec) != s.cfg.Dim {
		return nil, citebook.Errorf(citebook.EINVALID, "query vector has %d dimensions, the store holds %d", len(vec), s.cfg.Dim)
	}
	if k <= 0 || len(f.Books) == 0 {
		return nil, nil
	}
	if k > maxTopK {
		return nil, citebook.Errorf(citebook.EINVALID, "at most %d results can be asked for, not %d", maxTopK, k)
	}
	sp, err := s.searchParam(k)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "milvus search parameters are invalid")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := s.c.Search(ctx, s.cfg.Collection, nil, Expr(f), []string{fMeta, fText},
		[]entity.Vector{entity.FloatVector(vec)}, fVector, entity.COSINE, k, sp,
		client.WithSearchQueryConsistencyLevel(s.search))
	if err != nil {
		return nil, s.wrap(ctx, err, "searching")
	}
	// An empty result carries no field data, which the SDK reports as a
	// column type mismatch; there is nothing to decode.
	if len(res) == 0 || res[0].ResultCount == 0 {
		return nil, nil
	}
	if res[0].Err != nil {
		return nil, s.wrap(ctx, res[0].Err, "searching")
	}
	chunks, err := decode(res[0].Fields, nil, res[0].ResultCount)
	if err != nil {
		return nil, err
	}
	hits := make([]citebook.Hit, len(chunks))
	for i := range chunks {
		hits[i] = citebook.Hit{Chunk: chunks[i].chunk, Score: float64(res[0].Scores[i])}
	}
	return hits, nil
}

// IDs lists every stored chunk ID of a book, retired ones included.
func (s *Store) IDs(ctx context.Context, bookID string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	rs, err := s.c.Query(ctx, s.cfg.Collection, nil, bookExpr(bookID), []string{fChunkID},
		client.WithSearchQueryConsistencyLevel(entity.ClStrong))
	if err != nil {
		return nil, s.wrap(ctx, err, "listing chunks of book %q", bookID)
	}
	col, ok := rs.GetColumn(fChunkID).(*entity.ColumnVarChar)
	if !ok {
		return nil, citebook.Errorf(citebook.EINTERNAL, "milvus returned no %s column", fChunkID)
	}
	return col.Data(), nil
}

// Get returns stored chunks by ID; IDs that are not stored are skipped.
func (s *Store) Get(ctx context.Context, ids []string) ([]citebook.Chunk, error) {
	var out []citebook.Chunk
	for start := 0; start < len(ids); start += maxIDsPerExpr {
		rows, err := s.query(ctx, idsExpr(ids[start:min(start+maxIDsPerExpr, len(ids))]), false)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, r.chunk)
		}
	}
	return out, nil
}

// query reads whole rows matching expr, vectors only when asked.
func (s *Store) query(ctx context.Context, expr string, withVectors bool) ([]row, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	fields := []string{fMeta, fText}
	if withVectors {
		fields = append(fields, fVector)
	}
	rs, err := s.c.Query(ctx, s.cfg.Collection, nil, expr, fields, client.WithSearchQueryConsistencyLevel(entity.ClStrong))
	if err != nil {
		return nil, s.wrap(ctx, err, "reading chunks")
	}
	var vectors *entity.ColumnFloatVector
	if withVectors {
		v, ok := rs.GetColumn(fVector).(*entity.ColumnFloatVector)
		if !ok {
			return nil, citebook.Errorf(citebook.EINTERNAL, "milvus returned no %s column", fVector)
		}
		vectors = v
	}
	n := 0
	if col := rs.GetColumn(fMeta); col != nil {
		n = col.Len()
	}
	return decode(rs, vectors, n)
}

// decode rebuilds n chunks from the meta and text columns of a result.
func decode(rs client.ResultSet, vectors *entity.ColumnFloatVector, n int) ([]row, error) {
	if n == 0 {
		return nil, nil
	}
	meta, ok1 := rs.GetColumn(fMeta).(*entity.ColumnVarChar)
	text, ok2 := rs.GetColumn(fText).(*entity.ColumnVarChar)
	if !ok1 || !ok2 || meta.Len() < n || text.Len() < n {
		return nil, citebook.Errorf(citebook.EINTERNAL, "milvus returned incomplete chunk columns")
	}
	rows := make([]row, n)
	for i := range n {
		m, _ := meta.ValueByIdx(i)
		if err := json.Unmarshal([]byte(m), &rows[i].chunk); err != nil {
			return nil, citebook.Wrap(err, citebook.EINTERNAL, "milvus holds a chunk with unreadable metadata")
		}
		rows[i].chunk.Text, _ = text.ValueByIdx(i)
		if vectors != nil {
			rows[i].vector = vectors.Data()[i]
		}
	}
	return rows, nil
}

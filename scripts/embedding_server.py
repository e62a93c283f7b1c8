"""The OpenAI-compatible embedding server shared by scripts/minilm-server.py
and scripts/bge-server.py: one ONNX model on onnxruntime (no PyTorch, no
weights downloaded at run time), a WordPiece tokenizer, CLS or mean pooling
and L2 normalisation, behind POST /v1/embeddings, GET /v1/models and
GET /health. The model scripts only name their model, its pooling and
sequence length, and how questions differ from passages.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAX_INPUTS = 2048  # per request, as OpenAI's API
MAX_BODY_BYTES = 64 << 20


def _cls(hidden, mask):
    """The [CLS] token's last hidden state (bge was trained with it)."""
    return hidden[:, 0, :]


def _mean(hidden, mask):
    """The mean over the attention mask (sentence-transformers' MiniLM)."""
    weights = mask[..., None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


POOLING = {"cls": _cls, "mean": _mean}


class Embedder:
    """Tokenises, runs the ONNX model and pools; one inference at a time.

    Inference is serialised with a lock because onnxruntime already uses
    every thread it is given; concurrent runs would only oversubscribe the
    cores. Inputs are sorted by length and cut into sub-batches so padding,
    which costs compute but changes no vector, stays small.
    """

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int, batch: int,
                 max_seq_length: int, pooling: str):
        if pooling not in POOLING:
            raise ValueError(f"pooling must be one of {sorted(POOLING)}, not {pooling!r}")
        self.pooling = pooling
        tok = Tokenizer.from_file(str(tokenizer_path))
        tok.enable_truncation(max_length=max_seq_length)
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
        """Returns unit vectors (len(texts) x the model's width) and the word-piece count."""
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
            pooled = POOLING[self.pooling](hidden, mask)
            if out is None:  # the model's width: 384 for MiniLM and bge-small-en, 512 for bge-small-zh
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out, sum(lengths)


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


def make_handler(embedder, model_name: str, owned_by: str, server_name: str, prepare=None):
    """The request handler class of the API.

    embedder has embed(texts) -> (vectors, word pieces); prepare, when
    given, rewrites a request's texts from its body (bge prefixes questions
    with its retrieval instruction).
    """
    log = logging.getLogger(server_name)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = server_name + "/1"

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
                    {"id": model_name, "object": "model", "created": 0, "owned_by": owned_by}]})
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
                if prepare is not None:
                    texts = prepare(body, texts)
                started = time.perf_counter()
                vectors, tokens = embedder.embed(texts)
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


def arguments(description: str, port: int, batch: int) -> argparse.ArgumentParser:
    """The options every model script takes; each adds its own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=port)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="onnxruntime intra-op threads")
    ap.add_argument("--batch", type=int, default=batch, help="texts per model run")
    ap.add_argument("--log-level", default="INFO")
    return ap


def serve(args, handler, model_name: str, server_name: str) -> int:
    """Serves handler on args.host:args.port until interrupted."""
    server = ThreadingHTTPServer((args.host, args.port), handler)
    server.daemon_threads = True
    logging.getLogger(server_name).info(
        "serving %s on http://%s:%d/v1 (%d threads)", model_name, args.host, args.port, args.threads)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

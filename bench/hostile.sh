#!/usr/bin/env bash
# Peak memory and time of `citebook parse` on the hostile PDFs of issue 10
# (a 1 GiB Flate bomb; 20,000 pages sharing one 16 MiB content stream; page
# resources in an object stream behind 1 GiB of zeros),
# measured with /usr/bin/time -v. The target: peak RSS ≤ 512 MB and every
# parse finished or failed within the parse deadline.
#
#   bench/hostile.sh                 # the binary built from this tree
#   BASE_REF=63e4502 bench/hostile.sh   # also a baseline built from that commit
#   BASE=/path/to/old/citebook bench/hostile.sh   # or a baseline binary
#   TIMEOUT=60s bench/hostile.sh     # --parse-timeout (default: ingest's default)
#
# A baseline without the limits may need minutes and GBs per file; KILL_AFTER
# (default 120s) stops it, reported as "killed".
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-$(mktemp -d)}
KILL_AFTER=${KILL_AFTER:-120s}
go build -o "$WORK/citebook" ./cmd/citebook
if [ -n "${BASE_REF:-}" ] && [ -z "${BASE:-}" ]; then
  rm -rf "$WORK/base" && mkdir -p "$WORK/base"
  git archive "$BASE_REF" | tar -x -C "$WORK/base"
  (cd "$WORK/base" && go build -o "$WORK/citebook-base" ./cmd/citebook)
  BASE="$WORK/citebook-base"
fi
go run ./bench/hostile "$WORK"
ls -l "$WORK"/*.pdf | awk '{printf "%-40s %10d bytes\n", $NF, $5}'

run() { # label binary file [flags]
  local label=$1 bin=$2 file=$3; shift 3
  local log="$WORK/time.log" rc=0
  timeout -s KILL "$KILL_AFTER" /usr/bin/time -v "$bin" parse --json "$@" "$file" >/dev/null 2>"$log" || rc=$?
  local rss wall err
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$log")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
  err=$(grep '^citebook:' "$log" | head -1 | cut -c1-90 || true)
  [ "$rc" = 137 ] && err="killed after $KILL_AFTER"
  printf "%-9s %-11s peak RSS %6s MB  wall %8s  exit %3s  %s\n" "$label" "$(basename "$file")" "${rss:-?}" "${wall:-?}" "$rc" "$err"
}
flags=()
[ -n "${TIMEOUT:-}" ] && flags=(--parse-timeout "$TIMEOUT")
for f in "$WORK/bomb.pdf" "$WORK/shared.pdf" "$WORK/objstm.pdf"; do
  [ -n "${BASE:-}" ] && run baseline "$BASE" "$f"
  run limits "$WORK/citebook" "$f" "${flags[@]}"
done

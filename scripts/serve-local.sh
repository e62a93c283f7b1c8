# Sourced by the scripts that start a model server on loopback
# (embed-server.sh, minilm-server.sh, bge-server.sh, llm-server.sh): one way
# to start a server unless one already answers, record its pid and wait for
# /health, and to stop only the server a pid file names. Each script names
# its pid and log files by port, so servers on different ports keep apart.
# (No `set -e`: it is sourced, and must not change the caller's options.)

# _citebook_serve_local NAME PORT LOG PIDFILE COMMAND...
# Starts COMMAND in the background (output to LOG, pid to PIDFILE) unless
# http://127.0.0.1:PORT/health answers already, then waits up to
# $_CITEBOOK_SERVE_WAIT seconds (default 60) for it. Sets
# _CITEBOOK_SERVED_PID to the server's pid (from PIDFILE when it was
# running); returns 1 with a message naming LOG when it fails.
_citebook_serve_local() {
  local name="$1" port="$2" log="$3" pidfile="$4" wait="${_CITEBOOK_SERVE_WAIT:-60}"
  shift 4
  local health="http://127.0.0.1:$port/health"
  if curl -fsS "$health" >/dev/null 2>&1; then
    _CITEBOOK_SERVED_PID="$(cat "$pidfile" 2>/dev/null || true)"
    return 0
  fi
  "$@" >"$log" 2>&1 &
  _CITEBOOK_SERVED_PID=$!
  echo "$_CITEBOOK_SERVED_PID" >"$pidfile"
  local _
  for _ in $(seq 1 "$wait"); do
    if curl -fsS "$health" >/dev/null 2>&1; then
      return 0
    fi
    if ! kill -0 "$_CITEBOOK_SERVED_PID" 2>/dev/null; then
      echo "$name: server exited; see $log" >&2
      return 1
    fi
    sleep 1
  done
  if ! curl -fsS "$health" >/dev/null; then
    echo "$name: no answer on port $port after $wait s; see $log" >&2
    return 1
  fi
}

# _citebook_serves PIDFILE PORT: whether the process PIDFILE names is alive
# and was started with --port PORT (a pid file left by a dead server can
# name an unrelated process that reused its pid).
_citebook_serves() {
  local pid args
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] || return 1
  if [ -r "/proc/$pid/cmdline" ]; then
    args="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
  else
    args="$(ps -ww -o args= -p "$pid" 2>/dev/null)" || return 1
  fi
  case " $args " in
  *" --port $2 "*) return 0 ;;
  esac
  return 1
}

# _citebook_stop_local PIDFILE PORT stops the server PIDFILE names, when it
# is still the one serving PORT (see _citebook_serves), waits up to 10 s
# for it to exit and removes PIDFILE. Nothing else is signalled.
_citebook_stop_local() {
  local pidfile="$1" port="$2" pid _
  if ! _citebook_serves "$pidfile" "$port"; then
    rm -f "$pidfile"
    return 0
  fi
  pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$pidfile"
}

# shellcheck shell=sh
# scripts/milvus.sh gives `make test` a real Milvus server (the standalone
# engine the PyPI package `milvus` 2.3.5 ships; 2.3.5 is the newest release
# on PyPI). POSIX sh because make runs recipes with /bin/sh.
#
# Sourced (`. scripts/milvus.sh`): unless MILVUS_ADDR already answers, install
# the package into .venv/milvus (once), start a server on a free 127.0.0.1
# port with its data under .milvus/, wait until it is healthy and export
#   MILVUS_ADDR    host:port of the gRPC proxy
#   MILVUS_PID     pid of the milvus process (started by this script)
#   MILVUS_SCRIPT  absolute path of this script, so tests can start a private
#                  server: `sh "$MILVUS_SCRIPT" serve DATA_DIR PORT` runs one
#                  in the foreground (exec, so its pid is the server's).
# milvus_stop stops the server this script started; an EXIT trap calls it too.
#
# Every server gets its own ports, embedded etcd included, so several can run
# side by side (the stock `milvus-server` launcher pins etcd to 2379/2380).

MILVUS_VERSION=${MILVUS_VERSION:-2.3.5}
MILVUS_START_TIMEOUT=${MILVUS_START_TIMEOUT:-180}

milvus_root() {
	# Repository root: the parent of the folder holding this script.
	(cd "$(dirname "$MILVUS_SCRIPT")/.." && pwd)
}

# milvus_install installs the server into .venv/milvus unless it is there.
milvus_install() {
	venv="$(milvus_root)/.venv/milvus"
	if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import milvus, sys; sys.exit(milvus.__version__ != '$MILVUS_VERSION')" 2>/dev/null; then
		return 0
	fi
	echo "milvus.sh: installing milvus==$MILVUS_VERSION into $venv" >&2
	python3 -m venv "$venv" &&
		"$venv/bin/pip" install -q --disable-pip-version-check "milvus==$MILVUS_VERSION" >&2
}

# milvus_serve DATA_DIR PORT runs a server in the foreground. It extracts the
# engine once into .milvus/, writes a config whose every port is free, and
# replaces itself with the milvus process. The metrics (health) port is
# written to DATA_DIR/metrics_port.
milvus_serve() {
	root=$(milvus_root)
	exec "$root/.venv/milvus/bin/python" - "$root/.milvus" "$1" "$2" <<'EOF'
import os, re, socket, sys
from os.path import abspath, join
from milvus import MilvusServerConfig, _initialize_data_files

home, data, port = abspath(sys.argv[1]), abspath(sys.argv[2]), int(sys.argv[3])
os.makedirs(home, exist_ok=True)
_initialize_data_files(home)  # bin/milvus and its libraries, skipped when current
exe = join(home, 'bin', 'milvus')

cfg = MilvusServerConfig(data_dir=data, proxy_port=port)
cfg.resolve()  # picks free ports for every other role, writes configs/milvus.yaml

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

etcd_client, etcd_peer, metrics = cfg.get('etcd_port'), free_port(), free_port()
while etcd_peer in (etcd_client, metrics):
    etcd_peer = free_port()
conf_dir = join(data, 'configs')
etcd_conf = join(conf_dir, 'etcd.yaml')
with open(etcd_conf, 'w') as f:
    f.write(f"""name: default
listen-client-urls: http://127.0.0.1:{etcd_client}
advertise-client-urls: http://127.0.0.1:{etcd_client}
listen-peer-urls: http://127.0.0.1:{etcd_peer}
initial-advertise-peer-urls: http://127.0.0.1:{etcd_peer}
initial-cluster: default=http://127.0.0.1:{etcd_peer}
""")
milvus_conf = join(conf_dir, 'milvus.yaml')
with open(milvus_conf) as f:
    text = f.read()
text, n = re.subn(r'(?m)^etcd:\n', f'etcd:\n  config:\n    path: {etcd_conf}\n', text, count=1)
if n != 1:
    sys.exit('milvus.sh: no etcd section in ' + milvus_conf)
text = re.sub(r'(?m)^(\s*endpoints:\s*)localhost:\d+', rf'\g<1>127.0.0.1:{etcd_client}', text, count=1)
with open(milvus_conf, 'w') as f:
    f.write(text)
with open(join(data, 'metrics_port'), 'w') as f:
    f.write(str(metrics))

run_dir = join(data, 'run')
os.makedirs(run_dir, exist_ok=True)
env = dict(os.environ, DEPLOY_MODE='STANDALONE', METRICS_PORT=str(metrics),
           MILVUS_RUN_DIR=run_dir, MILVUSCONF=conf_dir,
           LD_LIBRARY_PATH=join(home, 'bin') + ':' + os.environ.get('LD_LIBRARY_PATH', ''))
os.chdir(data)
sys.stdout.flush()
os.execve(exe, [exe, 'run', 'standalone'], env)
EOF
}

# milvus_reachable ADDR succeeds when something accepts TCP at ADDR.
milvus_reachable() {
	python3 - "$1" <<'EOF'
import socket, sys
host, _, port = sys.argv[1].rpartition(':')
try:
    socket.create_connection((host or '127.0.0.1', int(port)), timeout=2).close()
except (OSError, ValueError):
    sys.exit(1)
EOF
}

# milvus_wait PID DATA_DIR waits until the server answers /healthz, failing
# early when the process dies and after MILVUS_START_TIMEOUT seconds.
milvus_wait() {
	python3 - "$1" "$2" "$MILVUS_START_TIMEOUT" <<'EOF'
import os, sys, time, urllib.request
pid, data, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
        with open(f'/proc/{pid}/stat') as f:
            if f.read().split(') ')[-1].startswith('Z'):
                raise ProcessLookupError
    except (ProcessLookupError, FileNotFoundError):
        sys.exit(f'milvus.sh: server exited during start-up; see {data}/milvus.log')
    try:
        with open(os.path.join(data, 'metrics_port')) as f:
            url = f'http://127.0.0.1:{f.read().strip()}/healthz'
        with urllib.request.urlopen(url, timeout=2) as r:
            if b'OK' in r.read():
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit(f'milvus.sh: server not healthy after {timeout:.0f}s; see {data}/milvus.log')
EOF
}

# milvus_start starts the shared test server and exports its address.
milvus_start() {
	milvus_install || {
		echo "milvus.sh: pip install milvus==$MILVUS_VERSION failed" >&2
		return 1
	}
	root=$(milvus_root)
	mkdir -p "$root/.milvus"
	MILVUS_DATA=$(mktemp -d "$root/.milvus/server.XXXXXX") || return 1
	port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
	sh "$MILVUS_SCRIPT" serve "$MILVUS_DATA" "$port" >"$MILVUS_DATA/milvus.log" 2>&1 &
	MILVUS_PID=$!
	export MILVUS_PID MILVUS_DATA
	trap milvus_stop EXIT
	started=$(date +%s)
	if ! milvus_wait "$MILVUS_PID" "$MILVUS_DATA"; then
		tail -n 20 "$MILVUS_DATA/milvus.log" >&2
		milvus_stop
		return 1
	fi
	MILVUS_ADDR="127.0.0.1:$port"
	export MILVUS_ADDR
	echo "milvus.sh: Milvus $MILVUS_VERSION at $MILVUS_ADDR (pid $MILVUS_PID) healthy after $(($(date +%s) - started))s" >&2
}

# milvus_stop stops the server milvus_start started, if any, and removes its
# data; a server named by a caller's MILVUS_ADDR is never touched.
milvus_stop() {
	if [ -n "${MILVUS_PID:-}" ]; then
		kill "$MILVUS_PID" 2>/dev/null
		i=0
		while kill -0 "$MILVUS_PID" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$MILVUS_PID" 2>/dev/null
		wait "$MILVUS_PID" 2>/dev/null
		[ -n "${MILVUS_DATA:-}" ] && rm -rf "$MILVUS_DATA"
		unset MILVUS_PID MILVUS_DATA
	fi
	return 0
}

if [ "${1:-}" = serve ]; then
	MILVUS_SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	milvus_serve "$2" "$3"
else
	MILVUS_SCRIPT=$(cd "$(dirname "${MILVUS_SCRIPT_PATH:-scripts/milvus.sh}")" && pwd)/milvus.sh
	export MILVUS_SCRIPT
	if [ -n "${MILVUS_ADDR:-}" ] && milvus_reachable "$MILVUS_ADDR"; then
		echo "milvus.sh: using the Milvus server at $MILVUS_ADDR" >&2
	else
		[ -n "${MILVUS_ADDR:-}" ] && echo "milvus.sh: nothing answers at MILVUS_ADDR=$MILVUS_ADDR; starting a server" >&2
		milvus_start
	fi
fi

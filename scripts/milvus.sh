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
#                  in the foreground (its pid relays the server's ports; the
#                  server dies with it, and SIGTERM is passed on).
# milvus_stop stops the server this script started; an EXIT trap calls it too
# (and postgres_stop, when scripts/postgres.sh was sourced first).
#
# Every server runs in a network namespace of its own whose only interface is
# loopback, and only its proxy and health ports are relayed to 127.0.0.1 of
# the host: nothing of it is reachable from another machine, and several can
# run side by side (the stock `milvus-server` launcher pins etcd to 2379/2380).

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
# starts the milvus process in its own network namespace, relaying PORT and
# the health port from the host's 127.0.0.1. The metrics (health) port is
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
# Every role registers 127.0.0.1: the namespace below has no other address.
text, n = re.subn(r'(?m)^(  ip:)[^\n]*$', r'\g<1> 127.0.0.1', text)
if n < 7:
    sys.exit(f'milvus.sh: expected 7 role ip settings in {milvus_conf}, found {n}')
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

# Loopback only. Milvus 2.3.5 listens on ":port" (every interface) for each
# role's gRPC server, the proxy and its metrics whatever `ip` says; `ip` is
# only the address a role registers. So the server runs in a network
# namespace of its own whose only interface is loopback, and this process
# relays the two ports clients use (proxy, metrics/health) from 127.0.0.1
# of the host's namespace into it. Nothing else is reachable from outside,
# and concurrent servers cannot collide on the ports the package hard-codes.
import ctypes, fcntl, signal, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET, CLONE_NEWUSER, PR_SET_PDEATHSIG = 0x40000000, 0x10000000, 1

def listen(p):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', p))
    s.listen(128)
    return s

def own_netns():
    # Root (CAP_SYS_ADMIN) unshares the network directly; otherwise a user
    # namespace that maps the caller to root makes it possible.
    if libc.unshare(CLONE_NEWNET) != 0:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
            return os.strerror(ctypes.get_errno())
        with open('/proc/self/setgroups', 'w') as f:
            f.write('deny')
        with open('/proc/self/uid_map', 'w') as f:
            f.write(f'0 {uid} 1')
        with open('/proc/self/gid_map', 'w') as f:
            f.write(f'0 {gid} 1')
    with socket.socket() as s:  # ip link set lo up
        ifr = fcntl.ioctl(s, 0x8913, struct.pack('16sH14x', b'lo', 0))  # SIOCGIFFLAGS
        flags = struct.unpack('16sH14x', ifr)[1] | 0x1 | 0x40          # IFF_UP | IFF_RUNNING
        fcntl.ioctl(s, 0x8914, struct.pack('16sH14x', b'lo', flags))    # SIOCSIFFLAGS
    return None

def pump(src, dst):
    try:
        while True:
            b = src.recv(1 << 16)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass

def connection(client, p):
    inner = None
    try:
        inner = socket.create_connection(('127.0.0.1', p), timeout=5)  # in Milvus's namespace
        inner.settimeout(None)
        for s in (client, inner):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        back = threading.Thread(target=pump, args=(inner, client), daemon=True)
        back.start()
        pump(client, inner)
        back.join()
    except OSError:
        pass  # not up yet, or gone: the client sees a closed connection
    finally:
        for s in (client, inner):
            if s is not None:
                s.close()

def relay(outer, p):
    while True:
        try:
            client, _ = outer.accept()
            threading.Thread(target=connection, args=(client, p), daemon=True).start()
        except Exception as e:  # keep relaying whatever one connection does
            print(f'milvus.sh: relay of port {p}: {e}', file=sys.stderr, flush=True)

outer = {p: listen(p) for p in (port, metrics)}  # still in the host's namespace
why = own_netns()
sys.stdout.flush()
if why is not None:
    # No namespaces here (a container without CAP_SYS_ADMIN or user
    # namespaces): run as before, on every interface of this one.
    for s in outer.values():
        s.close()
    print(f'milvus.sh: WARNING: cannot isolate Milvus in a network namespace ({why}); '
          'its ports listen on every interface', file=sys.stderr, flush=True)
    os.execve(exe, [exe, 'run', 'standalone'], env)

pid = os.fork()
if pid == 0:
    for s in outer.values():
        s.close()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the relay's death is the server's
    if os.getppid() == 1:
        os._exit(1)
    os.execve(exe, [exe, 'run', 'standalone'], env)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda s, _: os.kill(pid, s))
for p, s in outer.items():
    threading.Thread(target=relay, args=(s, p), daemon=True).start()
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
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
	trap 'milvus_stop; if type postgres_stop >/dev/null 2>&1; then postgres_stop; fi' EXIT
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

# shellcheck shell=sh
# scripts/postgres.sh gives the tests a real PostgreSQL server for the
# metadata store (`--meta postgres://…`): a throwaway cluster of Debian's
# postgresql package (15), the way scripts/milvus.sh gives them Milvus.
# POSIX sh because make runs recipes with /bin/sh.
#
# Sourced (`. scripts/postgres.sh`): unless CITEBOOK_TEST_POSTGRES already
# answers, initdb a cluster in a fresh temporary folder, start it on a free
# 127.0.0.1 port (loopback only, trust authentication, no fsync: nothing in
# it outlives the run), wait until it accepts connections and export
#   CITEBOOK_TEST_POSTGRES  postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   POSTGRES_DATA           the cluster's folder (started by this script)
# Tests create a database of their own in it for every test (internal/pgtest).
# postgres_stop stops the cluster this script started and removes its folder;
# an EXIT trap calls it too (and milvus_stop, when scripts/milvus.sh was
# sourced first).
#
# initdb and postgres refuse to run as root, so as root (CI, this
# workplace) the cluster belongs to the `postgres` system user the Debian
# package creates, and its commands run through runuser.

POSTGRES_START_TIMEOUT=${POSTGRES_START_TIMEOUT:-60}

# postgres_bindir prints the folder of initdb and pg_ctl: PG_BINDIR, else
# Debian's /usr/lib/postgresql/N/bin (15 preferred), else pg_config's.
postgres_bindir() {
	if [ -n "${PG_BINDIR:-}" ]; then
		echo "$PG_BINDIR"
		return 0
	fi
	for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
		pg_config --bindir
		return 0
	fi
	return 1
}

# postgres_as runs a command as the cluster's owner: the postgres user when
# we are root, ourselves otherwise.
postgres_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# postgres_reachable DSN succeeds when a server answers at DSN.
postgres_reachable() {
	bindir=$(postgres_bindir) || return 1
	"$bindir/pg_isready" -q -t 2 -d "$1" 2>/dev/null
}

# postgres_start starts the throwaway cluster and exports its address.
postgres_start() {
	bindir=$(postgres_bindir) || {
		echo "postgres.sh: no PostgreSQL found (apt-get install postgresql, or set PG_BINDIR)" >&2
		return 1
	}
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		echo "postgres.sh: running as root needs the postgres system user (apt-get install postgresql)" >&2
		return 1
	fi
	POSTGRES_DATA=$(mktemp -d "${TMPDIR:-/tmp}/citebook-postgres.XXXXXX") || return 1
	export POSTGRES_DATA
	trap 'postgres_stop; if type milvus_stop >/dev/null 2>&1; then milvus_stop; fi' EXIT
	[ "$(id -u)" = 0 ] && chown postgres: "$POSTGRES_DATA"
	chmod 700 "$POSTGRES_DATA"
	port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])") || return 1
	if ! postgres_as "$bindir/initdb" -D "$POSTGRES_DATA/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
		>"$POSTGRES_DATA/initdb.log" 2>&1; then
		cat "$POSTGRES_DATA/initdb.log" >&2
		postgres_stop
		return 1
	fi
	# Loopback TCP only, the socket in the cluster's own folder; durability
	# off (a crash loses a test run, nothing else); room for the servers,
	# workers and parallel test packages of one `make test`.
	started=$(date +%s)
	if ! postgres_as "$bindir/pg_ctl" -D "$POSTGRES_DATA/data" -l "$POSTGRES_DATA/postgres.log" -w \
		-t "$POSTGRES_START_TIMEOUT" -o "-p $port -c listen_addresses=127.0.0.1 -k $POSTGRES_DATA \
		-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" start >/dev/null; then
		tail -n 20 "$POSTGRES_DATA/postgres.log" >&2
		postgres_stop
		return 1
	fi
	CITEBOOK_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	export CITEBOOK_TEST_POSTGRES
	echo "postgres.sh: PostgreSQL $("$bindir/postgres" -V | awk '{print $3}') at 127.0.0.1:$port ready after $(($(date +%s) - started))s" >&2
}

# postgres_stop stops the cluster postgres_start started, if any, and
# removes its folder; a server named by a caller's CITEBOOK_TEST_POSTGRES is
# never touched.
postgres_stop() {
	if [ -n "${POSTGRES_DATA:-}" ]; then
		if [ -f "$POSTGRES_DATA/data/postmaster.pid" ]; then
			postgres_as "$(postgres_bindir)/pg_ctl" -D "$POSTGRES_DATA/data" -m fast -w stop >/dev/null 2>&1 ||
				postgres_as "$(postgres_bindir)/pg_ctl" -D "$POSTGRES_DATA/data" -m immediate -w stop >/dev/null 2>&1
		fi
		rm -rf "$POSTGRES_DATA"
		unset POSTGRES_DATA
	fi
	return 0
}

if [ -n "${CITEBOOK_TEST_POSTGRES:-}" ] && postgres_reachable "$CITEBOOK_TEST_POSTGRES"; then
	echo "postgres.sh: using the PostgreSQL server at CITEBOOK_TEST_POSTGRES" >&2
else
	[ -n "${CITEBOOK_TEST_POSTGRES:-}" ] && echo "postgres.sh: nothing answers at CITEBOOK_TEST_POSTGRES; starting a server" >&2
	unset CITEBOOK_TEST_POSTGRES
	postgres_start
fi

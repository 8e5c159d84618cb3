# shellcheck shell=bash
# A private PostgreSQL for the load tests: a fresh cluster in a directory of the run, one postgres process on a free
# loopback port (never the shared 5432), TCP only, trust authentication on 127.0.0.1, a role and a database for the
# service. Sourced by load-tests/store-throughput/run.sh and load-tests/fault-soak/run.sh.
#
# The postmaster runs as a child of the calling shell (as the postgres user when the caller is root: initdb and
# postgres refuse to run as root), so its PID is the job's PID and can be signalled by id: SIGKILL for a crash,
# SIGSTOP/SIGCONT of it and its backends for a frozen server. Debian: apt-get install -y postgresql (PostgreSQL 15+).
#
# pg_lt_init DIR                  a fresh cluster: a copy of the build's initdb-made template (fsync and
#                                 synchronous_commit stay on: durability is what is measured)
# pg_lt_run DIR PORT LOG [-c k=v] starts postgres in the background; sets PG_LT_PID; waits until it accepts
# pg_lt_prepare PORT              creates the role payments_authorization and its database payments
# pg_lt_url PORT                  the service's -D options for that database
# pg_lt_standby PRIMARY_PORT DIR  pg_basebackup of the primary into DIR, configured as a streaming standby

pg_lt_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || { echo "missing: PostgreSQL server binaries (Debian: apt-get install -y postgresql)" >&2; return 2; }
  echo "$dir"
}

# pg_lt_as_owner CMD...: runs a PostgreSQL binary as the data directory's owner (postgres when we are root)
pg_lt_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups --reset-env -- env PATH="$PATH" "$@"
  else
    "$@"
  fi
}

# pg_lt_owned_dir DIR: creates DIR (mode 700) for the server user, whose path it can reach
pg_lt_owned_dir() {
  local dir=$1
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$dir"
    # postgres must reach the directory: every parent needs o+x.
    local parent
    parent=$(dirname "$dir")
    while [ "$parent" != / ]; do chmod o+x "$parent" 2>/dev/null || true; parent=$(dirname "$parent"); done
  fi
  chmod 700 "$dir"
}

# pg_lt_template: prints the data directory of the build's template cluster, made by one initdb per PostgreSQL
# version and owner under target/postgres-template/ (the Java tests' PostgresTemplate makes and reads the same one).
# Built in a staging directory and renamed into place, under flock: a reader never sees half of one, and scripts
# running at once initdb once.
pg_lt_template() {
  local bin root name version owner staging
  bin=$(pg_lt_bin) || return 2
  version=$("$bin/initdb" --version | sed -n 's/.*(PostgreSQL) \([^ ]*\).*/\1/p' | tr -c '0-9A-Za-z.\n' _)
  owner=$([ "$(id -u)" = 0 ] && echo postgres || id -un)
  root="${PG_LT_TEMPLATE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target/postgres-template}"
  name="pg$version-$owner"
  if [ ! -d "$root/$name/data" ]; then
    mkdir -p "$root"
    (
      flock 9
      [ -d "$root/$name/data" ] && exit 0
      staging=$(mktemp -d "$root/.$name-XXXXXX")
      pg_lt_owned_dir "$staging/data"
      if ! pg_lt_as_owner "$bin/initdb" -D "$staging/data" -U postgres -A trust --no-sync -E UTF8 --locale=C \
           >"$root/$name.initdb.log" 2>&1; then
        rm -rf "$staging"
        echo "initdb failed; see $root/$name.initdb.log" >&2
        exit 1
      fi
      # a Java test's PostgresTemplate (which does not take this lock) may have been first: its copy is as good
      mv -T "$staging" "$root/$name" 2>/dev/null || rm -rf "$staging"
      [ -d "$root/$name/data" ]
    ) 9>"$root/$name.flock" || return 1
  fi
  echo "$root/$name/data"
}

pg_lt_init() {
  local dir=$1 template
  template=$(pg_lt_template) || return 1
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  cp -a "$template" "$dir" || { echo "copying the template cluster $template to $dir failed" >&2; return 1; }
  if [ "$(id -u)" = 0 ]; then
    # postgres must reach the directory: every parent needs o+x.
    local parent
    parent=$(dirname "$dir")
    while [ "$parent" != / ]; do chmod o+x "$parent" 2>/dev/null || true; parent=$(dirname "$parent"); done
  fi
}

pg_lt_run() {
  local dir=$1 port=$2 log=$3 bin
  shift 3
  bin=$(pg_lt_bin) || return 2
  touch "$log"
  [ "$(id -u)" = 0 ] && chown postgres "$log"
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$bin/postgres" -D "$dir" -p "$port" \
      -c listen_addresses=127.0.0.1 -c unix_socket_directories= "$@" >>"$log" 2>&1 &
  else
    "$bin/postgres" -D "$dir" -p "$port" -c listen_addresses=127.0.0.1 -c unix_socket_directories= "$@" >>"$log" 2>&1 &
  fi
  PG_LT_PID=$!
  local _
  for _ in $(seq 300); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && return 0
    kill -0 "$PG_LT_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "postgres on port $port did not start; see $log" >&2
  return 1
}

pg_lt_psql() { # pg_lt_psql PORT [psql args...]
  local port=$1 bin
  shift
  bin=$(pg_lt_bin) || return 2
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"
}

pg_lt_prepare() {
  pg_lt_psql "$1" -d postgres -c "CREATE ROLE payments_authorization LOGIN" \
    -c "CREATE DATABASE payments OWNER payments_authorization"
}

pg_lt_url() {
  echo "-Didempotency.store=postgres -Ddatabase.url=jdbc:postgresql://127.0.0.1:$1/payments -Ddatabase.username=payments_authorization"
}

pg_lt_standby() {
  local primary=$1 dir=$2 bin
  bin=$(pg_lt_bin) || return 2
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  chmod 700 "$dir"
  # --checkpoint=fast: the default (spread) waited ~100 s for the primary's checkpoint before copying anything.
  pg_lt_as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir" -R -X stream --no-sync \
    --checkpoint=fast \
    >"$dir.basebackup.log" 2>&1 || { echo "pg_basebackup failed; see $dir.basebackup.log" >&2; return 1; }
}

#!/usr/bin/env bash
# Make sure PostgreSQL and Redis are reachable, starting local ones when they are not.
#
#   PGHOST / PGPORT     Postgres to check (default: host/port of DATABASE_URL, else 127.0.0.1:5432)
#   REDIS_URL           Redis to check (default redis://127.0.0.1:6379/0; auth is ignored)
#   DATABASE_URL        optional; when set, the database it names is created if missing
#   LAUREL_DATA_DIR     where locally started servers keep their data (default <repo>/.data)
#
# Idempotent: when both services already answer it only reports them.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAUREL_DATA_DIR=${LAUREL_DATA_DIR:-$REPO_ROOT/.data}

die() { printf '%s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# parse_url URL -> URL_SCHEME URL_USERINFO URL_HOSTPORT URL_HOST URL_PORT URL_PATH URL_QUERY
parse_url() {
  local rest=$1
  URL_SCHEME=${rest%%://*}
  rest=${rest#*://}
  URL_USERINFO=
  if [[ $rest == *@* ]]; then           # last '@' ends the user info (passwords may contain '/')
    URL_USERINFO=${rest%@*}
    rest=${rest##*@}
  fi
  URL_QUERY=
  if [[ $rest == *\?* ]]; then
    URL_QUERY=${rest#*\?}
    rest=${rest%%\?*}
  fi
  URL_PATH=
  if [[ $rest == */* ]]; then
    URL_PATH=${rest#*/}
    rest=${rest%%/*}
  fi
  URL_HOSTPORT=$rest
  URL_PORT=
  if [[ $rest == \[* ]]; then           # [ipv6]:port
    URL_HOST=${rest%%]*}
    URL_HOST=${URL_HOST#[}
    rest=${rest#*]}
    [[ $rest == :* ]] && URL_PORT=${rest#:}
  elif [[ $rest == *:* ]]; then
    URL_HOST=${rest%:*}
    URL_PORT=${rest##*:}
  else
    URL_HOST=$rest
  fi
}

url_decode() { local s=${1//+/ }; printf '%b' "${s//%/\\x}"; }

is_local_host() {
  case $1 in
    ''|localhost|127.*|::1|/*) return 0 ;;
    *) return 1 ;;
  esac
}

tcp_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" >/dev/null 2>&1; }

# wait_until SECONDS COMMAND... : poll every 0.25 s
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.25
  done
}

# ---------------------------------------------------------------- Postgres

if [ -n "${DATABASE_URL:-}" ]; then
  parse_url "$DATABASE_URL"
  DB_URL_HOST=$URL_HOST DB_URL_PORT=$URL_PORT
else
  DB_URL_HOST= DB_URL_PORT=
fi
PG_HOST=${PGHOST:-${DB_URL_HOST:-127.0.0.1}}
PG_PORT=${PGPORT:-${DB_URL_PORT:-5432}}
PG_DATA=$LAUREL_DATA_DIR/postgres/data
PG_LOG=$LAUREL_DATA_DIR/postgres/postgres.log

pg_ready() {
  if have pg_isready; then
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2
  else
    tcp_open "$PG_HOST" "$PG_PORT"
  fi
}

# Run a command as the user that may own a cluster (initdb refuses root).
as_pg_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_local_cluster() {
  local bindir=$1
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 ||
      die "postgres: running as root and there is no 'postgres' system user to own a cluster (initdb refuses root); create one (useradd -r -m postgres) or run as a normal user"
    mkdir -p "$LAUREL_DATA_DIR/postgres"
    chown postgres: "$LAUREL_DATA_DIR/postgres"
    runuser -u postgres -- test -w "$LAUREL_DATA_DIR/postgres" ||
      die "postgres: user 'postgres' cannot write $LAUREL_DATA_DIR/postgres (a parent directory is not traversable?); set LAUREL_DATA_DIR to e.g. /var/tmp/laurel"
  else
    mkdir -p "$LAUREL_DATA_DIR/postgres"
  fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    as_pg_owner "$bindir/initdb" -D "$PG_DATA" -A trust -U postgres >"$LAUREL_DATA_DIR/postgres/initdb.log" 2>&1 ||
      die "postgres: initdb failed; see $LAUREL_DATA_DIR/postgres/initdb.log"
  fi
  as_pg_owner "$bindir/pg_ctl" -D "$PG_DATA" \
    -o "-p $PG_PORT -k /tmp -c listen_addresses=127.0.0.1" \
    -l "$PG_LOG" start -w -t 30 >/dev/null ||
    die "postgres: pg_ctl start failed; see $PG_LOG"
}

ensure_postgres() {
  if pg_ready; then
    echo "postgres: $PG_HOST:$PG_PORT is accepting connections"
    return
  fi
  is_local_host "$PG_HOST" ||
    die "postgres: $PG_HOST:$PG_PORT is not reachable and is not a local address, so nothing was started"

  # (a) a packaged cluster (Debian/Ubuntu postgresql-common)
  if [ -d /etc/postgresql ] && have pg_ctlcluster; then
    local ver out
    ver=$(ls /etc/postgresql | head -1)
    if [ -n "$ver" ]; then
      if out=$(pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>&1); then
        if wait_until 30 pg_ready; then
          echo "postgres: started cluster $ver/main (pg_ctlcluster); $PG_HOST:$PG_PORT is accepting connections"
          return
        fi
      elif pg_ready; then
        echo "postgres: $PG_HOST:$PG_PORT is accepting connections (cluster $ver/main)"
        return
      fi
      [ -n "$out" ] && printf 'postgres: pg_ctlcluster %s main start did not help: %s\n' "$ver" "$out" >&2
    fi
  fi

  # (b) server binaries without a usable packaged cluster: a private cluster in LAUREL_DATA_DIR
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ]; then
    start_local_cluster "$bindir"
    wait_until 30 pg_ready ||
      die "postgres: started a cluster in $PG_DATA but $PG_HOST:$PG_PORT did not become ready within 30 s; see $PG_LOG"
    echo "postgres: started local cluster in $PG_DATA on port $PG_PORT"
    return
  fi

  # (c) nothing to start
  cat >&2 <<MSG
postgres: nothing is accepting connections on $PG_HOST:$PG_PORT and no PostgreSQL server is installed.
  Install one:   sudo apt-get install postgresql        (then re-run this script)
  or use Docker: docker compose up -d postgres redis    (compose needs ADMIN_API_KEY set, e.g. in .env)
MSG
  exit 1
}

# Create the database DATABASE_URL names, if it is missing.
ensure_database() {
  [ -n "${DATABASE_URL:-}" ] || return 0
  parse_url "$DATABASE_URL"
  local name admin_url exists qname
  name=$(url_decode "$URL_PATH")
  [ -n "$name" ] || return 0
  have psql || die "postgres: psql is not installed, cannot check that database '$name' exists (apt-get install postgresql-client)"
  admin_url="$URL_SCHEME://${URL_USERINFO:+$URL_USERINFO@}$URL_HOSTPORT/postgres${URL_QUERY:+?$URL_QUERY}"
  qname=${name//\'/\'\'}
  exists=$(PGCONNECT_TIMEOUT=5 psql "$admin_url" -X -w -tAc "SELECT 1 FROM pg_database WHERE datname='$qname'") ||
    die "postgres: could not query the server of DATABASE_URL (through its 'postgres' database)"
  if [ "$exists" = 1 ]; then
    echo "postgres: database '$name' exists"
    return
  fi
  if PGCONNECT_TIMEOUT=5 psql "$admin_url" -X -w -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"${name//\"/\"\"}\"" >/dev/null; then
    echo "postgres: created database '$name'"
  elif [ "$(PGCONNECT_TIMEOUT=5 psql "$admin_url" -X -w -tAc "SELECT 1 FROM pg_database WHERE datname='$qname'")" = 1 ]; then
    echo "postgres: database '$name' exists"   # created concurrently
  else
    die "postgres: could not create database '$name'"
  fi
}

# ---------------------------------------------------------------- Redis

if [ -n "${REDIS_URL:-}" ]; then
  parse_url "${REDIS_URL%%,*}"   # a cluster's seed list: check the first node
  R_HOST=${URL_HOST:-127.0.0.1}
  R_PORT=${URL_PORT:-6379}
else
  R_HOST=127.0.0.1
  R_PORT=6379
fi
R_DIR=$LAUREL_DATA_DIR/redis
R_NOTE=

redis_ready() {
  if have redis-cli; then
    local out
    out=$(timeout 3 redis-cli -h "$R_HOST" -p "$R_PORT" ping 2>&1) || true
    case $out in
      *PONG*) return 0 ;;
      *NOAUTH*|*WRONGPASS*|*"Authentication required"*) R_NOTE=" (requires auth)"; return 0 ;;
      *) return 1 ;;
    esac
  else
    tcp_open "$R_HOST" "$R_PORT"
  fi
}

ensure_redis() {
  if redis_ready; then
    echo "redis: $R_HOST:$R_PORT answers PING$R_NOTE"
    return
  fi
  is_local_host "$R_HOST" ||
    die "redis: $R_HOST:$R_PORT is not reachable and is not a local address, so nothing was started"
  if ! have redis-server; then
    cat >&2 <<MSG
redis: nothing answers on $R_HOST:$R_PORT and redis-server is not installed.
  Install it:    sudo apt-get install redis-server      (then re-run this script)
  or use Docker: docker compose up -d postgres redis    (compose needs ADMIN_API_KEY set, e.g. in .env)
MSG
    exit 1
  fi
  mkdir -p "$R_DIR"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$R_PORT" --dir "$R_DIR" \
    --pidfile "$R_DIR/redis.pid" \
    --appendonly yes --appendfsync always --maxmemory 1gb --maxmemory-policy noeviction \
    --logfile "$R_DIR/redis.log" ||
    die "redis: redis-server failed to start; see $R_DIR/redis.log"
  wait_until 15 redis_ready ||
    die "redis: started redis-server on port $R_PORT but it did not answer PING within 15 s; see $R_DIR/redis.log"
  echo "redis: started redis-server on 127.0.0.1:$R_PORT (data in $R_DIR)"
}

ensure_postgres
ensure_database
ensure_redis

#!/usr/bin/env bash
# Start Laurel on a fresh machine: dependencies, .env, Postgres + Redis, migrations, then web + worker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

DEMO=0
if [ "${1:-}" = --demo ]; then
  DEMO=1
fi

ensure_node_modules

if [ ! -f .env ]; then
  if command -v openssl >/dev/null 2>&1; then
    key=$(openssl rand -hex 32)
  else
    key=$(node -e "process.stdout.write(require('node:crypto').randomBytes(32).toString('hex'))")
  fi
  (
    umask 077
    cat > .env <<ENV
DATABASE_URL=postgres://postgres@127.0.0.1:5432/laurel
REDIS_URL=redis://127.0.0.1:6379/0
ADMIN_API_KEY=$key
PORT=3000
LOG_LEVEL=info
ENV
  )
  echo "up: created $PWD/.env"
  echo "up: admin API key (also stored as ADMIN_API_KEY in .env): $key"
fi

set -a
. ./.env
set +a

bash scripts/ensure-services.sh
npm run migrate

if [ "$DEMO" = 1 ]; then
  # Demo data streams in from a second process once Laurel answers; Laurel stays in front.
  # This shell's PID becomes Laurel's (exec below): a signal sent to it reaches Laurel alone,
  # so the demo watches that PID and is stopped with it instead of posting to nobody.
  laurel=$$
  (
    for _ in $(seq 1 120); do
      curl -fsS "http://127.0.0.1:${PORT:-3000}/readyz" >/dev/null 2>&1 && break
      sleep 0.5
    done
    npm run --silent laurel -- demo --seconds "${DEMO_SECONDS:-600}" &
    demo=$!
    while kill -0 "$laurel" 2>/dev/null && kill -0 "$demo" 2>/dev/null; do sleep 1; done
    kill "$demo" 2>/dev/null || true
  ) &
fi
# exec: npm (then node) takes this shell's PID, so SIGTERM to `npm run up` reaches Laurel.
exec npm start

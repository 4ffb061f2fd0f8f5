#!/usr/bin/env bash
# Start Laurel on a fresh machine: dependencies, .env, Postgres + Redis, migrations, then web + worker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

if [ "${1:-}" = --demo ]; then
  echo "up: --demo is not implemented yet; starting normally" >&2
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
exec npm start

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

write_env_file "$PWD/.env"
# Variables set in the environment win over .env (as in the app's own loading of it).
load_env_file .env

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

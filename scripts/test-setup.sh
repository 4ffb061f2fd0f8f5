#!/usr/bin/env bash
# `npm test`'s pretest hook: dependencies installed, Postgres and Redis up, test database
# present, and two Debian packages the tests drive: chromium (the browser tests) and
# prometheus (promtool checks the alert rules). Run as root with apt-get, it installs what is
# missing and says so; otherwise it names what to install and stops.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/lib.sh

ensure_node_modules

# The tests read TEST_DATABASE_URL / TEST_REDIS_URL; point the service check at the same
# servers, and let it create the test database (via the 'postgres' maintenance database).
DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} \
REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/0} \
  bash scripts/ensure-services.sh

# The Bull Board browser test drives Debian's Chromium (playwright-core never downloads a browser).
if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "chromium: not found; installing Debian's chromium for the browser test"
    # Another run may be installing it right now: wait for the package lock rather than fail.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium >/dev/null
  else
    echo "chromium: not found; install it (apt-get install chromium) or set CHROMIUM_PATH" >&2
    exit 1
  fi
fi

# The alert rules test runs promtool (Debian's prometheus package; the package's service is
# not started in a container without systemd, and the test needs only the binary).
if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "promtool: not found; installing Debian's prometheus for the alert rules test"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "promtool: not found; install it (apt-get install prometheus) for the alert rules test" >&2
    exit 1
  fi
fi

#!/usr/bin/env bash
# `npm test`'s pretest hook: dependencies installed, Postgres and Redis up, test database
# present, and the Debian packages the tests drive: chromium (the browser tests), prometheus
# (promtool checks the alert rules) and Mono (mcs and mono build and run the C# client's
# test). Run as root with apt-get, it installs what is missing and says so; otherwise it
# names what to install and stops.
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

# The C# client test compiles the client with Mono's mcs and runs its test program with mono;
# the client needs only System.Net.Http and System.Runtime.Serialization (JSON) of the runtime.
MONO_PACKAGES="mono-mcs mono-runtime libmono-system-runtime-serialization4.0-cil libmono-system-net-http4.0-cil"
if ! command -v mcs >/dev/null 2>&1 || ! command -v mono >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "mcs/mono: not found; installing Debian's Mono for the C# client test"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $MONO_PACKAGES >/dev/null
  else
    echo "mcs/mono: not found; install them (apt-get install $MONO_PACKAGES) for the C# client test" >&2
    exit 1
  fi
fi

# Shared helpers for Laurel's shell scripts. Source it; do not execute it.
# Expects the current directory to be the repository root.

# Install dependencies with `npm ci` when node_modules is missing or older than
# package-lock.json (npm writes node_modules/.package-lock.json on every install).
ensure_node_modules() {
  local stamp=node_modules/.package-lock.json
  # A node_modules that is a link belongs to another checkout: npm ci empties node_modules
  # through the link before installing, which would wipe that checkout's install.
  if [ -L node_modules ]; then
    if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
      echo "deps: node_modules links to $(readlink node_modules) and may be stale; not reinstalling through the link (run npm ci there)"
    fi
    return 0
  fi
  if [ ! -d node_modules ] || [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "deps: node_modules missing or older than package-lock.json; running npm ci"
    npm ci
  fi
}

# Write a first .env (local Postgres and Redis, a fresh admin key) to the path given, readable
# by its owner only; prints the key it chose. Does nothing when the file exists.
write_env_file() {
  local file=$1 key
  [ -f "$file" ] && return 0
  if command -v openssl >/dev/null 2>&1; then
    key=$(openssl rand -hex 32)
  else
    key=$(node -e "process.stdout.write(require('node:crypto').randomBytes(32).toString('hex'))")
  fi
  (
    umask 077
    cat > "$file" <<ENV
DATABASE_URL=postgres://postgres@127.0.0.1:5432/laurel
REDIS_URL=redis://127.0.0.1:6379/0
ADMIN_API_KEY=$key
PORT=3000
LOG_LEVEL=info
ENV
  )
  echo "up: created $file"
  if [ -n "${ADMIN_API_KEY+x}" ]; then
    echo "up: ADMIN_API_KEY is set in the environment; it wins over the one stored in $file"
  else
    echo "up: admin API key (also stored as ADMIN_API_KEY in $file): $key"
  fi
}

# Export every variable an env file sets, except those the environment already sets: like the
# app's own .env loading, so `DATABASE_URL=... npm run up` means that database, not the file's.
load_env_file() {
  local file=$1 name entry
  local kept=()
  # The names the file assigns (NAME=..., or export NAME=...); their current values are
  # put back after sourcing it.
  while IFS= read -r name; do
    if [ -n "${!name+x}" ]; then
      kept+=("$name=${!name}")
    fi
  done < <(sed -nE 's/^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)=.*/\2/p' "$file")
  set -a
  # shellcheck disable=SC1090
  . "$file"
  set +a
  for entry in ${kept[@]+"${kept[@]}"}; do
    export "$entry"
  done
}

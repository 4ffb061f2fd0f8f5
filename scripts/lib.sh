# Shared helpers for Laurel's shell scripts. Source it; do not execute it.
# Expects the current directory to be the repository root.

# Install dependencies with `npm ci` when node_modules is missing or older than
# package-lock.json (npm writes node_modules/.package-lock.json on every install).
ensure_node_modules() {
  local stamp=node_modules/.package-lock.json
  if [ ! -d node_modules ] || [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "deps: node_modules missing or older than package-lock.json; running npm ci"
    npm ci
  fi
}

# Sourced by scripts/bench.sh: the peers' Python venvs, made one way.
#
#   peer_venv <venv dir> <min python, e.g. 3.12 | exact, e.g. =3.11> "<imports>" <pip args...>
#
# finds an interpreter that really runs (a version manager's shim that fails when run is skipped:
# every candidate is executed, not just found), makes the venv (again, if the one there is broken),
# installs the pip arguments unless every import in "<imports>" already works, checks the imports
# afterwards, and on any failure says so loudly and records it in PEER_MISSING, which
# peer_summary prints at the end of the run, so a missing peer column is never silent.

PEER_MISSING=()

# An interpreter satisfying $1 (">= X.Y", or "=X.Y" exactly) that runs, on stdout; nothing if none.
peer_python() {
  local want=$1 op=">=" cand
  if [[ $want == =* ]]; then op="=="; want=${want#=}; fi
  local major=${want%%.*} minor=${want#*.}
  local check="import sys; sys.exit(0 if sys.version_info[:2] $op ($major, $minor) else 1)"
  for cand in $(command -v "python$want" 2>/dev/null) /usr/bin/python3.1[0-9] /usr/local/bin/python3.1[0-9] \
    "$HOME"/.pyenv/versions/3.1[0-9]*/bin/python3 /root/.pyenv/versions/3.1[0-9]*/bin/python3 $(command -v python3 2>/dev/null); do
    [ -x "$cand" ] || continue
    if "$cand" -c "$check" >/dev/null 2>&1 && "$cand" -c "import venv, ensurepip" >/dev/null 2>&1; then
      echo "$cand"
      return 0
    fi
  done
  return 1
}

# See the header. Returns 0 when the venv has every import, 1 otherwise (recorded).
peer_venv() {
  local venv=$1 want=$2 imports=$3
  shift 3
  local label
  label=$(basename "$venv")
  if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c "pass" >/dev/null 2>&1; then
    echo "bench: $venv is broken (its python does not run); making it again" >&2
    rm -rf "$venv"
  fi
  if [ ! -x "$venv/bin/python" ]; then
    local py
    if ! py=$(peer_python "$want"); then
      peer_missing "$label" "no Python $want that runs on this machine"
      return 1
    fi
    if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
      rm -rf "$venv"
      peer_missing "$label" "$py -m venv failed"
      return 1
    fi
    echo "bench: $venv made with $py ($("$py" --version 2>&1))"
  fi
  local check="import ${imports// /, }"
  if ! "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
    echo "bench: installing into $venv: $*"
    "$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2 || true
  fi
  local err
  if ! err=$("$venv/bin/python" -c "$check" 2>&1); then
    peer_missing "$label" "import failed after install: $(echo "$err" | tail -1)"
    return 1
  fi
  return 0
}

# Records and shouts a missing peer column.
peer_missing() {
  PEER_MISSING+=("$1: $2")
  echo "bench: *** PEER MISSING: $1: $2 — its columns will be '-' ***" >&2
}

# Prints the peers that were missing in this run (nothing when all were there).
peer_summary() {
  if [ "${#PEER_MISSING[@]}" -gt 0 ]; then
    echo "bench: *** ${#PEER_MISSING[@]} peer venv(s) missing; their columns are '-' in this run: ***" >&2
    printf 'bench:   - %s\n' "${PEER_MISSING[@]}" >&2
  else
    echo "bench: every peer venv was present"
  fi
}

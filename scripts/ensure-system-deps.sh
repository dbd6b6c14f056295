#!/usr/bin/env bash
# npm test's pretest step: the Debian packages the tests need that npm cannot install. PostgreSQL's server binaries
# (the store, engine and fleet tests start a real server), psql (README's queries on PostgreSQL), the sqlite3 CLI
# (README's queries on SQLite), tmux (OpenCode's TUI is driven in it) and Prometheus with promtool (the service's
# metrics and alerting rules are checked by the real thing). Installed with apt when running as root;
# otherwise this stops at once with the one command to run.
set -euo pipefail
missing=()
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 || missing+=(postgresql)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the tests' system packages: ${missing[*]}" >&2
  # apt's policy-rc.d keeps the packaged cluster from starting: the tests start their own servers.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "the tests need these system packages: ${missing[*]}. Run: sudo apt-get install -y ${missing[*]}" >&2
exit 1

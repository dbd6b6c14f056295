#!/usr/bin/env bash
# npm run test:system's first step: the programs its suites need that npm cannot install. tmux (OpenCode's TUI is
# driven in it), Prometheus with promtool (the service's metrics and alerting rules are checked by the real thing), the
# sqlite3 CLI and psql (the queries of docs/database.md run with the clients users query with). Everything else,
# PostgreSQL's server and OpenCode included, comes from npm. Installed with apt when running as root on Debian or Ubuntu; otherwise
# this stops at once, naming what is missing and the command that installs it.
set -euo pipefail
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing what npm run test:system needs: ${missing[*]}" >&2
  # apt's policy-rc.d keeps a packaged service from starting: the tests start their own.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "npm run test:system needs programs npm cannot install, missing here: ${missing[*]}." >&2
echo "  On Debian or Ubuntu: sudo apt-get install -y ${missing[*]}" >&2
echo "  Elsewhere, install tmux, Prometheus (with promtool), the sqlite3 CLI and psql with your package manager." >&2
exit 1

#!/usr/bin/env bash
# npm test's checks before its vitest run: the type check, prettier, and the build followed by the migrations check.
# They share nothing, and each is one single-threaded process (tsc, prettier), so on two cores they run at once and
# take the time of the longest instead of their sum (~30 s less on the CI machine). Each one's output is printed whole,
# in this order, not interleaved; the exit code is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

names=(typecheck format build)
commands=("npm run -s typecheck" "npm run -s format:check" "npm run -s build && npm run -s db:check")
pids=()
for i in "${!names[@]}"; do
  bash -c "${commands[$i]}" >"$logs/${names[$i]}" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!names[@]}"; do
  if wait "${pids[$i]}"; then
    cat "$logs/${names[$i]}"
    echo "checks: ${names[$i]} passed"
  else
    code=$?
    echo "checks: ${names[$i]} FAILED (exit $code): ${commands[$i]}" >&2
    cat "$logs/${names[$i]}" >&2
    [ "$status" -eq 0 ] && status=$code
  fi
done
exit "$status"

#!/usr/bin/env bash
# Proves powercut installs and runs as a package, as a new user would use it:
#   1. a fresh clone with production dependencies only (npm ci --omit=dev) runs `powercut gate`;
#   2. the tarball from `npm pack`, installed into an empty project, runs `powercut gate`,
#      `powercut scenario list|run`, `powercut replay` and `powercut mount`, and installing it never
#      runs apt (only this repository's own install does).
# Bounded: each step has a timeout; every mount it makes is gone when it ends. The bins are run
# directly, never through npx, which does not pass the timeout's SIGTERM on (the gate unmounts on it).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/powercut-package-XXXXXX)
cleanup() {
  fusermount -uz "$work/mnt" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "package-smoke: 1. fresh clone, npm ci --omit=dev, powercut gate"
git clone -q . "$work/clone"
(cd "$work/clone" && npm ci --omit=dev --no-audit --no-fund >/dev/null && timeout 300 node dist/src/cli.js gate --time-budget 30 --seed 1 --artifacts "$work/arts-clone" | tail -3)

echo "package-smoke: 2. npm pack, install into an empty project"
npm pack --pack-destination "$work" >/dev/null
mkdir "$work/consumer"
cd "$work/consumer"
npm init -y >/dev/null
npm install --no-audit --no-fund "$work"/powercut-*.tgz >install.log 2>&1 || { cat install.log; exit 1; }
if grep -q "installing Debian packages" install.log; then echo "package-smoke: installing the package ran apt" >&2; exit 1; fi
timeout 300 ./node_modules/.bin/powercut gate --time-budget 20 --seed 2 --artifacts "$work/arts-package" | tail -3
./node_modules/.bin/powercut scenario list | grep -q '^new-page-dir-not-fsynced ' || { echo "package-smoke: scenario list lacks new-page-dir-not-fsynced" >&2; exit 1; }
# A known-bad variant fails its scenario (exit 1) and leaves an artifact; replaying it reproduces (exit 1).
set +e
timeout 120 ./node_modules/.bin/powercut scenario run new-page-dir-not-fsynced --variant no-dir-fsync-new-page --artifacts "$work/arts-scenario" >scenario.log 2>&1
scenario_exit=$?
set -e
[ "$scenario_exit" = 1 ] || { echo "package-smoke: scenario run on the variant exited $scenario_exit, expected 1:"; cat scenario.log; exit 1; }
set +e
timeout 120 ./node_modules/.bin/powercut replay "$work"/arts-scenario/* >replay.log 2>&1
replay_exit=$?
set -e
[ "$replay_exit" = 1 ] || { echo "package-smoke: replay exited $replay_exit, expected 1 (reproduced):"; cat replay.log; exit 1; }
echo "package-smoke: scenario list, scenario run and replay work from the package"

echo "package-smoke: 3. powercut mount from the package"
./node_modules/.bin/powercut mount "$work/mnt" --socket "$work/ctl.sock" >"$work/mount.log" 2>&1 &
mount_pid=$!
for _ in $(seq 1 150); do grep -q '"event":"mounted"' "$work/mount.log" && break; sleep 0.1; done
grep -q '"event":"mounted"' "$work/mount.log" || { echo "package-smoke: powercut mount did not mount within 15 s:"; cat "$work/mount.log"; kill -9 $mount_pid; exit 1; }
echo hello >"$work/mnt/file"
./node_modules/.bin/powercut ctl --socket "$work/ctl.sock" status >/dev/null
kill -TERM $mount_pid
wait $mount_pid
if grep -q " $work/mnt " /proc/mounts; then echo "package-smoke: the mount is still there after SIGTERM" >&2; exit 1; fi
echo "package-smoke: ok"

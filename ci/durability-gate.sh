#!/usr/bin/env bash
# The durability gate for a Linux CI job: installs what the machine lacks (Debian's fuse,
# libfuse2 and iproute2, the npm dependencies), builds, and runs `powercut gate` with the arguments given.
# Used by .ci/run and by .github/workflows/durability-gate.yml, so both run the same thing.
#
#   ci/durability-gate.sh [gate options: --time-budget SECONDS --seed N --junit FILE --report DIR --artifacts DIR ...]
#
# Exit status is the gate's: 0 nothing violated and the floor met, 1 a violation, 2 usage, 3 the
# tool itself failed, 4 below the floor (the run checked too little to pass).
# Sharding across a CI matrix: give each job its own seed (--seed "$((BASE + JOB_INDEX))"); see
# docs/gate.md, "Running the gate in CI".
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" != "Linux" ]; then
  echo "durability-gate: FUSE crash tests need Linux (this is $(uname -s))." >&2
  exit 1
fi

node scripts/install-system-deps.mjs --require
if [ ! -e /dev/fuse ]; then
  echo "durability-gate: /dev/fuse is missing: the runner must allow FUSE (on containers: --device /dev/fuse --cap-add SYS_ADMIN)." >&2
  exit 1
fi

[ -d node_modules/fuse-native ] || npm ci --no-audit --no-fund
npm run --silent build
exec node dist/src/cli.js gate "$@"

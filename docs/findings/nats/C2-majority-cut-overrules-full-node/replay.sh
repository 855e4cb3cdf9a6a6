#!/bin/sh
# Re-runs this crash case on a fresh mount and says whether the failure reproduces
# (exit 1), shows a different violation (3), or passes now (0); 2 = usage error or
# unreadable artifact, 4 = the tool itself failed. Needs powercut: on the PATH (npm link
# in a checkout), in ./node_modules/.bin of a project that installed it, or a built
# checkout named by POWERCUT_HOME=/path/to/powercut.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$POWERCUT_HOME" ]; then exec node "$POWERCUT_HOME/dist/src/cli.js" replay "$here" "$@"; fi
if command -v powercut >/dev/null 2>&1; then exec powercut replay "$here" "$@"; fi
if [ -x ./node_modules/.bin/powercut ]; then exec ./node_modules/.bin/powercut replay "$here" "$@"; fi
echo "replay.sh: powercut not found: put it on the PATH, or set POWERCUT_HOME to a built checkout" >&2
exit 2

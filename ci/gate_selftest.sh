#!/usr/bin/env bash
# The gate self-test (docs/gate_selftest.md): commits each edit of
# harness/gate_selftest/catalogue.toml to a scratch worktree of HEAD, runs the gates it names and
# checks that every break is caught, with a message naming the broken construct, by the gate the
# entry expects, and that every safe edit passes. Prints a score table.
#
# Usage: ci/gate_selftest.sh [--quick] [--only NAME]... [aot selftest options]
#   --quick   the entries that touch no Rust and run only the bot (no build; about 15 s):
#             what .ci/run runs
#   (none)    the whole catalogue: the nightly job. Each entry that touches Rust rebuilds the
#             scratch copy (incrementally, in one shared target directory under
#             $CARGO_TARGET_DIR/gate-selftest) and runs the golden suite: budget about an hour
#             on 2 cores, most of it the first build of the scratch target directory.
#
# Exit status: 0 every edit judged right, 1 a break missed / a false alarm / a stale entry,
# 2 usage or internal error.
set -uo pipefail
cd "$(dirname "$0")/.."

echo "== gate selftest: building aot"
if ! cargo build -q -p harness --bin aot; then
  echo "gate selftest: could not build the aot tool" >&2
  exit 2
fi
exec "${CARGO_TARGET_DIR:-target}/debug/aot" selftest "$@"

#!/usr/bin/env bash
# Nightly backward check beyond the committed goldens: today's runtime on artifacts produced by
# the compiler binary at the oldest revision inside the 6-month backward window.
#
#  1. picks REV: the argument, else the oldest first-parent commit whose committer date is at most
#     6 months (183 days) before HEAD's and that has both `xla_compile` and the runtime CLI;
#  2. ci/forward_compat.sh --backward REV: builds REV's xla_compile and aot once (cached by commit
#     id), compiles every golden case with REV's compiler for each golden target, runs each
#     artifact with today's runtime (its outputs must match the recorded expectations) and has
#     REV's runtime confirm, bit for bit, that it computes the same outputs for its own artifact.
#
# Usage: ci/backward_nightly.sh [REV] [-- AOT_FORWARD_ARGS...]
# Exit status: as ci/forward_compat.sh (0 pass, 1 a difference, 2 the check could not run).
set -uo pipefail
cd "$(dirname "$0")/.."

rev=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rev=$1; shift; fi
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
  echo "backward_nightly: this clone is shallow: the older revisions are missing. Fetch the whole history (git fetch --unshallow) and run it again." >&2
  exit 2
fi
if [ -z "$rev" ]; then
  head_time=$(git log -1 --format=%ct HEAD)
  since=$((head_time - 183 * 86400))
  while read -r c; do
    if git cat-file -e "$c:compiler/src/bin/xla_compile.rs" 2>/dev/null &&
       { git cat-file -e "$c:harness/src/cmd/run/mod.rs" 2>/dev/null ||
         git cat-file -e "$c:harness/src/cmd/run.rs" 2>/dev/null ||
         git cat-file -e "$c:harness/src/run_cmd.rs" 2>/dev/null; }; then
      rev=$c; break
    fi
  done < <(git rev-list --reverse --first-parent --since="$since" HEAD)
  if [ -z "$rev" ]; then
    echo "backward_nightly: no commit of the last 6 months has both xla_compile and aot run" >&2
    exit 2
  fi
  echo "== oldest revision inside the 6-month window with a compiler and a runtime CLI: $rev"
fi
exec ci/forward_compat.sh --backward "$rev" "$@"

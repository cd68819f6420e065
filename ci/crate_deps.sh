#!/usr/bin/env bash
# The crate boundaries (README.md, "Layout"), checked on the dependency graph (`cargo tree`,
# nothing is built): for each rule below, the workspace crates that the crate's normal and build
# dependencies reach, transitively, must not include the forbidden ones.
# Dev-dependencies do not count: a test may parse HLO text to build its inputs.
#
#   runtime  must not reach the compiler, the harness, a front end (hlo_text, hlo_front), the
#            verifier or the evaluator: it loads artifacts with the IR crate `hlo` alone.
#   compiler must not reach the runtime or the harness (both meet only at `proto`).
#   ptx      must not reach any crate of ours.
#   hlo      (the IR) must not reach a front end, the verifier or the evaluator.
#
# Prints each crate's workspace dependencies, then every violation with the path that
# reaches it. Exit status: 0 clean, 1 a rule is broken, 2 the graph could not be read.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

ours="proto hlo hlo_verify hlo_text hlo_front hlo_eval ptx compiler runtime harness schema_history"
rules=(
  "runtime:compiler harness hlo_text hlo_front hlo_verify hlo_eval"
  "compiler:runtime harness"
  "ptx:$ours"
  "hlo:hlo_text hlo_front hlo_verify hlo_eval compiler runtime harness"
)

status=0
for rule in "${rules[@]}"; do
  crate=${rule%%:*}
  forbidden=" ${rule#*:} "
  # One line per reached package, "name vX.Y.Z (/path)" for path dependencies; `--prefix
  # depth` keeps the depth so a violation can be reported with the chain that reaches it.
  if ! tree=$(cargo tree -q -p "$crate" -e normal,build --prefix depth --format '{p}' 2>&1); then
    echo "error: cargo tree -p $crate failed:" >&2
    echo "$tree" >&2
    exit 2
  fi
  reached=$(grep -F "($root/" <<<"$tree" | sed -E 's/^[0-9]+([^ ]+) .*/\1/' | sort -u |
    grep -vx "$crate" | tr '\n' ' ')
  echo "$crate reaches: ${reached:-(none of ours)}"
  # Walk the depth-annotated tree keeping the current chain, and report each forbidden crate
  # with the chain that first reaches it.
  violations=$(awk -v forbidden="$forbidden" -v root="($root/" '
    {
      match($0, /^[0-9]+/); depth = substr($0, 1, RLENGTH) + 0
      name = substr($0, RLENGTH + 1); sub(/ .*/, "", name)
      chain[depth] = name
      if (depth > 0 && index($0, root) && index(forbidden, " " name " ") && !(name in seen)) {
        seen[name] = 1
        path = chain[0]
        for (i = 1; i <= depth; i++) path = path " -> " chain[i]
        print "  " name ": " path
      }
    }' <<<"$tree")
  if [ -n "$violations" ]; then
    echo "error: $crate reaches crates it must not (README.md, Layout):" >&2
    echo "$violations" >&2
    status=1
  fi
done
if [ "$status" = 0 ]; then
  echo "crate boundaries: ok"
fi
exit "$status"

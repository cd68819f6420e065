#!/usr/bin/env bash
# Reproducible demonstrations that ci/forward_compat.sh catches what it must (issue 13): each
# applies one edit on a scratch branch in a scratch worktree, commits it, runs the forward check
# there against the same older runtime (cached) and succeeds only when the check fails the way it
# should.
#
#   misread        today's compiler and runtime agree on a new meaning of an existing field
#                  (CopyThunkProto's source_buffer / destination_buffer swap roles): every test of
#                  the scratch branch would pass, but the older runtime copies the wrong way.
#                  Expected: rows DIFFERS, naming the first differing output.
#   new-construct  the compiler emits memset8bit_value_thunk by default (the staged-rollout flag
#                  CompileOptions::emit_memset8 flipped before its date). Expected: rows REJECTED,
#                  naming xla.gpu.ThunkProto.memset8bit_value_thunk.
#
# Usage: ci/forward_compat_demo.sh misread|new-construct [-- AOT_FORWARD_ARGS...]
# Exit status: 0 the check failed as expected, 1 it did not (a gate that misses the break), 2 the
# demonstration could not run. The scratch worktree and branch are removed afterwards.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
demo="${1:-}"; shift || true
[ "${1:-}" = "--" ] && shift
case "$demo" in
  misread) expect_verdict=DIFFERS; expect_text="older runtime vs today's" ;;
  new-construct) expect_verdict=REJECTED; expect_text="xla.gpu.ThunkProto.memset8bit_value_thunk" ;;
  *) echo "usage: ci/forward_compat_demo.sh misread|new-construct [-- AOT_FORWARD_ARGS...]" >&2; exit 2 ;;
esac

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export FORWARD_COMPAT_CACHE="${FORWARD_COMPAT_CACHE:-$CARGO_TARGET_DIR/forward-compat}"
scratch="$FORWARD_COMPAT_CACHE/demo-$demo-$$"
branch="scratch/forward-demo-$demo-$$"
cleanup() {
  git worktree remove --force "$scratch" >/dev/null 2>&1
  git branch -D "$branch" >/dev/null 2>&1
}
trap cleanup EXIT
mkdir -p "$FORWARD_COMPAT_CACHE"
git worktree add -q -b "$branch" "$scratch" HEAD || { echo "cannot create the scratch worktree" >&2; exit 2; }

edit() { # FILE OLD NEW: replace exactly one occurrence, or fail (the edit no longer applies)
  python3 - "$scratch/$1" "$2" "$3" <<'PY' || { echo "demo edit no longer applies to $1" >&2; exit 2; }
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(1)
open(path, "w").write(text.replace(old, new))
PY
}

case "$demo" in
  misread)
    edit compiler/src/serialize.rs \
      "                    source_buffer: Some(asg.slice(*src)?),
                    destination_buffer: Some(asg.slice(*dst)?),
                    mem_size" \
      "                    source_buffer: Some(asg.slice(*dst)?),
                    destination_buffer: Some(asg.slice(*src)?),
                    mem_size"
    edit runtime/src/thunks/decode.rs \
      "c.source_buffer.as_ref(),
                &format!(\"{p2}.source_buffer\")" \
      "c.destination_buffer.as_ref(),
                &format!(\"{p2}.source_buffer\")"
    edit runtime/src/thunks/decode.rs \
      "c.destination_buffer.as_ref(),
                &format!(\"{p2}.destination_buffer\")" \
      "c.source_buffer.as_ref(),
                &format!(\"{p2}.destination_buffer\")"
    ;;
  new-construct)
    edit compiler/src/options.rs "emit_memset8: false," "emit_memset8: true,"
    ;;
esac
(cd "$scratch" && git -c user.name=forward-demo -c user.email=forward-demo@example.invalid \
   commit -q -am "scratch: forward-compat demonstration ($demo)") || { echo "cannot commit the edit" >&2; exit 2; }

echo "== scratch branch $branch: $(cd "$scratch" && git log -1 --format=%s)"
out="$FORWARD_COMPAT_CACHE/demo-$demo.log"
(cd "$scratch" && ci/forward_compat.sh -- "$@") | tee "$out"
status=${PIPESTATUS[0]}
if [ "$status" -eq 1 ] && grep -q "  $expect_verdict  .*$expect_text" "$out"; then
  echo "demo $demo: the forward check failed as it must ($expect_verdict, $expect_text)"
  exit 0
fi
echo "demo $demo: the forward check did NOT catch the break (exit $status)" >&2
exit 1

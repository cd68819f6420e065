#!/usr/bin/env bash
# Forward compatibility on the real older runtime binary (docs/compatibility.md, "The forward
# check on the older runtime").
#
#  1. picks the older revision REV: the argument, else the newest commit at least 14 days older
#     than HEAD by committer date, else (a history younger than the window) the oldest commit
#     whose runtime CLI (`aot run`) exists and builds;
#  2. builds `aot` (and `xla_compile`) as they were at REV, in their own git worktree and target
#     directory, once: the binaries are cached by commit id under
#     $FORWARD_COMPAT_CACHE/<sha>/bin/ (default ${CARGO_TARGET_DIR:-target}/forward-compat), so a
#     second run builds nothing;
#  3. builds today's `aot` and runs `aot forward`: every golden case compiled by today's compiler
#     for each golden target, run by today's runtime and by REV's `aot run` on the emulated
#     device, compared bit for bit; prints the table.
#
# Usage: ci/forward_compat.sh [REV] [-- AOT_FORWARD_ARGS...]
#   --backward                 the nightly direction instead: artifacts from REV's xla_compile,
#                              today's runtime checked against REV's (ci/backward_nightly.sh)
#   FORWARD_COMPAT_CACHE       where the older binaries are cached
#   FORWARD_COMPAT_PROFILE     cargo profile of the older build (default dev: the emulator crates
#                              are optimized even there, see Cargo.toml)
#   FORWARD_COMPAT_WINDOW_DAYS the window (default 14)
#
# Exit status: 0 every row passes, 1 a row fails (the table names the construct the older runtime
# rejected, or the first differing output), 2 the check could not run (no history, the older
# revision does not build or its CLI lacks a needed option).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=forward
rev=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --backward) mode=backward ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "forward_compat: unknown option $1" >&2; exit 2 ;;
    *) rev="$1" ;;
  esac
  shift
done

die() { echo "forward_compat: $*" >&2; exit 2; }

if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
  die "this clone is shallow: the older revisions the check needs are missing. Fetch the whole history (git fetch --unshallow) and run it again."
fi
git rev-parse --verify -q HEAD >/dev/null || die "not a git repository with a HEAD commit"

window_days="${FORWARD_COMPAT_WINDOW_DAYS:-14}"
head_sha=$(git rev-parse HEAD)
head_time=$(git log -1 --format=%ct HEAD)

# Whether REV has the runtime CLI this check drives (`aot run`: harness/src/cmd/run/mod.rs, before
# that harness/src/cmd/run.rs, before 2026-12-04 harness/src/run_cmd.rs).
has_runtime_cli() {
  git cat-file -e "$1:harness/src/cmd/run/mod.rs" 2>/dev/null ||
    git cat-file -e "$1:harness/src/cmd/run.rs" 2>/dev/null ||
    git cat-file -e "$1:harness/src/run_cmd.rs" 2>/dev/null
}

# Older runtimes known to be broken on their own artifacts (ci/forward_compat_broken.txt: the
# commit that fixed each bug): a revision without the fix is never picked by default, since its
# own bugs would read as compatibility breaks.
broken_list="$root/ci/forward_compat_broken.txt"
is_broken() {
  [ -f "$broken_list" ] || return 1
  local fix reason
  while read -r fix reason; do
    case "$fix" in ''|'#'*) continue ;; esac
    if git rev-parse -q --verify "$fix^{commit}" >/dev/null \
      && ! git merge-base --is-ancestor "$fix" "$1"; then
      echo "== skipping ${1:0:10}: it lacks the fix $fix (ci/forward_compat_broken.txt)" >&2
      return 0
    fi
  done < "$broken_list"
  return 1
}

candidates=()
if [ -n "$rev" ]; then
  sha=$(git rev-parse --verify -q "$rev^{commit}") || die "no such revision: $rev"
  has_runtime_cli "$sha" || die "revision $rev ($sha) has no runtime CLI (harness/src/cmd/run.rs, \`aot run\`); it cannot run this check"
  candidates=("$sha")
  why="given"
else
  cutoff=$((head_time - window_days * 86400))
  sha=""
  while read -r c; do
    is_broken "$c" || { sha="$c"; break; }
  done < <(git rev-list --first-parent --before="$cutoff" HEAD)
  if [ -n "$sha" ] && has_runtime_cli "$sha"; then
    candidates=("$sha")
    why="newest commit at least $window_days days older than HEAD"
  else
    # The history is younger than the window (or starts without the CLI): the oldest commits
    # that have the runtime CLI, oldest first; the first that builds is used.
    while read -r c; do
      has_runtime_cli "$c" && ! is_broken "$c" && candidates+=("$c")
      [ ${#candidates[@]} -ge 3 ] && break
    done < <(git rev-list --reverse --first-parent HEAD)
    why="no commit is $window_days days older than HEAD ($(git log -1 --format=%cs HEAD)); oldest commit with a runtime CLI that builds"
  fi
fi
[ ${#candidates[@]} -gt 0 ] || die "no commit of this history has the runtime CLI (aot run)"

cache="${FORWARD_COMPAT_CACHE:-${CARGO_TARGET_DIR:-$root/target}/forward-compat}"
mkdir -p "$cache" || die "cannot create $cache"
cache=$(cd "$cache" && pwd)
profile="${FORWARD_COMPAT_PROFILE:-dev}"
profile_dir=$([ "$profile" = dev ] && echo debug || echo "$profile")

# Builds aot (+ xla_compile) at $1 into $cache/$1/bin unless already there. Returns 1 when REV does
# not build (remembered in build-failed, so the next run does not retry it).
build_old() {
  local c=$1 dir="$cache/$1"
  if [ -x "$dir/bin/aot" ]; then
    echo "== older runtime $c: cached ($dir/bin, built in $(cat "$dir/build-seconds" 2>/dev/null || echo '?') s)"
    return 0
  fi
  if [ -f "$dir/build-failed" ]; then
    echo "== older revision $c: did not build before (see $dir/build.log)"
    return 1
  fi
  mkdir -p "$dir"
  exec 9>"$dir.lock"
  command -v flock >/dev/null && flock 9
  if [ -x "$dir/bin/aot" ]; then return 0; fi
  if [ ! -d "$dir/src" ]; then
    git worktree add --detach "$dir/src" "$c" >/dev/null 2>&1 || die "cannot create a worktree for $c at $dir/src"
  fi
  local bins=(--bin aot) pkgs=(-p harness)
  if git cat-file -e "$c:compiler/src/bin/xla_compile.rs" 2>/dev/null; then
    bins+=(--bin xla_compile); pkgs+=(-p compiler)
  fi
  echo "== building the older runtime at $c (its own worktree and target directory; once)"
  local t0 t1
  t0=$(date +%s)
  if ! (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" cargo build --locked -q --profile "$profile" \
        "${pkgs[@]}" "${bins[@]}") >"$dir/build.log" 2>&1; then
    tail -5 "$dir/build.log" >&2
    touch "$dir/build-failed"
    return 1
  fi
  t1=$(date +%s)
  mkdir -p "$dir/bin"
  for b in aot xla_compile; do
    [ -x "$dir/target/$profile_dir/$b" ] && cp "$dir/target/$profile_dir/$b" "$dir/bin/.$b.tmp" && mv "$dir/bin/.$b.tmp" "$dir/bin/$b"
  done
  echo $((t1 - t0)) >"$dir/build-seconds"
  echo "== built in $((t1 - t0)) s (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
  # The binaries are the cache; the worktree and its build directory are not needed any more.
  if [ -z "${FORWARD_COMPAT_KEEP_BUILD:-}" ]; then
    git worktree remove --force "$dir/src" >/dev/null 2>&1
    rm -rf "$dir/target"
  fi
  return 0
}

old=""
for c in "${candidates[@]}"; do
  if build_old "$c"; then old=$c; break; fi
done
[ -n "$old" ] || die "no candidate revision builds (${candidates[*]}); logs under $cache/<sha>/build.log"
echo "== older revision: $old $(git log -1 --format='(%cs) %s' "$old" | cut -c1-80) [$why]"

if [ "$mode" = backward ] && [ ! -x "$cache/$old/bin/xla_compile" ]; then
  die "revision $old has no xla_compile; the backward direction needs it"
fi

echo "== building today's aot"
cargo build -q -p harness --bin aot || die "cannot build today's aot"
aot="${CARGO_TARGET_DIR:-$root/target}/debug/aot"

args=(forward --old-aot "$cache/$old/bin/aot" --old-rev "$old")
# With the older compiler, a failing row is retried with the older revision's own artifact: a case
# the older revision could never run itself is listed as OLD-BROKEN; it fails unless the case is
# new since that revision (docs/compatibility.md, "OLD-BROKEN").
if [ -x "$cache/$old/bin/xla_compile" ]; then
  args+=(--old-compiler "$cache/$old/bin/xla_compile")
fi
if [ "$mode" = backward ]; then
  args+=(--backward)
fi
work="$cache/work-$$"
trap 'rm -rf "$work"' EXIT
"$aot" "${args[@]}" --work-dir "$work" "${extra[@]}"
status=$?
case $status in
  0) echo "forward_compat: ($mode) the runtime at ${old:0:10} agrees with today on every case" ;;
  1) echo "forward_compat: the runtime at ${old:0:10} rejects or misreads today's artifacts (table above)" >&2 ;;
  *) echo "forward_compat: the check could not run (exit $status)" >&2 ;;
esac
exit $status

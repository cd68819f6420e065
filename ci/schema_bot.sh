#!/usr/bin/env bash
# The pre-merge schema bot: compares the change's compatibility surface (working tree) with its
# merge base and the dated snapshot history, writes the PR comment (markdown) and exits with the
# status CI gates on: 0 clean (notes and warnings allowed), 1 error findings, 2 usage or internal
# error. See docs/compatibility.md.
#
# Usage: ci/schema_bot.sh [BASE_REF]
#   BASE_REF              what to compare against (default: merge base of HEAD with origin/main
#                         or main)
#   SCHEMA_BOT_COMMENT    where the markdown comment goes (default target/schema-bot/comment.md)
#   SCHEMA_BOT_TODAY      YYYY-MM-DD to compute the windows for (default: today, UTC)
#   GITHUB_ACTIONS        when set, findings are also printed as workflow annotations (at most 50
#                         and a summary line; one ::error when there is no verdict)
#   SCHEMA_BOT_APPROVE_TRUSTED_INPUTS
#                         set to 1 when a maintainer approved the change's loosening of the
#                         bot's policy or waivers (CI sets it from a label only maintainers may
#                         apply); without it the base's policy and waivers judge the change
#   SCHEMA_BOT_ARGS       extra `aot schema diff` options, e.g. `--policy FILE`,
#                         `--against-image base.binpb`, `--history-depth 2000`, `--since DATE`
set -uo pipefail
cd "$(dirname "$0")/.."

base="${1:-}"
if [ -z "$base" ]; then
  for candidate in origin/main main; do
    if base="$(git merge-base HEAD "$candidate" 2>/dev/null)" && [ -n "$base" ]; then
      break
    fi
    base=""
  done
fi
if [ -z "$base" ]; then
  echo "schema bot: no merge base with main found; pass the base revision as an argument" >&2
  exit 2
fi

comment="${SCHEMA_BOT_COMMENT:-target/schema-bot/comment.md}"
mkdir -p "$(dirname "$comment")" || exit 2

echo "== schema bot: building aot"
if ! cargo build -q -p harness --bin aot; then
  echo "schema bot: could not build the aot tool" >&2
  exit 2
fi
aot="${CARGO_TARGET_DIR:-target}/debug/aot"

args=(schema diff --against "$base")
if [ -n "${SCHEMA_BOT_TODAY:-}" ]; then
  args+=(--today "$SCHEMA_BOT_TODAY")
fi
if [ "${SCHEMA_BOT_APPROVE_TRUSTED_INPUTS:-0}" = 1 ]; then
  args+=(--approve-trusted-inputs)
fi
if [ -n "${SCHEMA_BOT_ARGS:-}" ]; then
  # Word-split on purpose: a list of options.
  # shellcheck disable=SC2206
  args+=(${SCHEMA_BOT_ARGS})
fi

echo "== schema bot: working tree against $base"
status=0
"$aot" "${args[@]}" --format markdown --output "$comment" || status=$?
# Annotations even without a verdict: on exit 2 the github format prints one `::error` naming
# what failed (the comment then says "No verdict" with the same message).
if [ -n "${GITHUB_ACTIONS:-}" ]; then
  "$aot" "${args[@]}" --format github || true
fi

# Forward check on the older runtime binary, for changes that touch the compatibility surface
# (schema, compiler, runtime, goldens): the schema diff cannot see a field an older runtime
# would misinterpret. SCHEMA_BOT_FORWARD=0 skips it (reported); its failure fails the bot.
if [ "$status" -ne 2 ] && [ "${SCHEMA_BOT_FORWARD:-1}" != 0 ]; then
  if ! git diff --quiet "$base" -- proto compiler runtime hlo hlo_verify hlo_text hlo_front hlo_eval ptx goldens 2>/dev/null ||
     [ -n "$(git status --porcelain -- proto compiler runtime hlo hlo_verify hlo_text hlo_front hlo_eval ptx goldens)" ]; then
    echo "== schema bot: the change touches the surface; forward check on the older runtime"
    ci/forward_compat.sh || { fc=$?; [ "$fc" -gt "$status" ] && status=$fc; }
  else
    echo "== schema bot: surface untouched; forward check on the older runtime not needed"
  fi
elif [ "${SCHEMA_BOT_FORWARD:-1}" = 0 ]; then
  echo "== schema bot: forward check on the older runtime skipped (SCHEMA_BOT_FORWARD=0)"
fi

case "$status" in
  0) echo "schema bot: clean; comment in $comment" ;;
  1) echo "schema bot: the change breaks the compatibility contract; comment in $comment" ;;
  *) echo "schema bot: internal or usage error (exit $status)" >&2 ;;
esac
exit "$status"

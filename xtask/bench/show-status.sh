#!/usr/bin/env bash
# The seed systems' status display, for `cargo xtask bench`.
#
# OrchestKit's checkpoint-resume skill shows a pipeline with a bash script over
# `.claude/pipeline-state.json`; this one does the same work the same way: check the file with
# jq, read each field with its own jq process, then print each list with one more.
#
# Usage: show-status.sh [path/to/pipeline-state.json]   (requires jq)
set -euo pipefail

state="${1:-.claude/pipeline-state.json}"
if [[ ! -f "$state" ]]; then
  echo "No pipeline state at $state."
  exit 0
fi
if ! jq empty "$state" 2>/dev/null; then
  echo "error: $state is not valid JSON" >&2
  exit 1
fi

branch=$(jq -r '.context_summary.branch // "unknown"' "$state")
n_completed=$(jq -r '.completed_phases | length' "$state")
n_remaining=$(jq -r '.remaining_phases | length' "$state")
current=$(jq -r '.current_phase.name // ""' "$state")
progress=$(jq -r '.current_phase.progress_description // ""' "$state")
updated=$(jq -r '.updated_at // "unknown"' "$state")

printf 'Pipeline status\n\nBranch:  %s\nUpdated: %s\n\n' "$branch" "$updated"
echo "Completed ($n_completed phases):"
jq -r '.completed_phases[]
  | "  ✓ \(.name) (\(.timestamp | sub("^[^T]*T"; "") | rtrimstr("Z")))"
    + (if .commit_sha then ", sha \(.commit_sha)" else "" end)' "$state"
echo
echo "In progress:"
if [[ -n "$current" ]]; then
  echo "  → $current"
  if [[ -n "$progress" ]]; then
    echo "    $progress"
  fi
else
  echo "  (none)"
fi
echo
echo "Remaining ($n_remaining phases):"
jq -r '.remaining_phases[]
  | "  · \(.name)"
    + (if (.dependencies // []) | length > 0 then " (needs \(.dependencies | join(", ")))" else "" end)' "$state"

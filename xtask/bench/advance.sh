#!/usr/bin/env bash
# The seed systems' state write after a phase, for `cargo xtask bench`.
#
# OrchestKit's checkpoint-resume rules (state-write-timing) update `.claude/pipeline-state.json`
# after every phase: the current phase moves into `completed_phases` with a timestamp (and its
# commit SHA, if any), the first remaining phase becomes current, the files it wrote join
# `context_summary.file_paths`, and `updated_at` changes. This does it with one jq pass into a
# temporary file, renamed over the state.
#
# Usage: advance.sh [path/to/pipeline-state.json] [commit-sha] [file]...   (requires jq)
set -euo pipefail

state="${1:-.claude/pipeline-state.json}"
sha="${2:-}"
shift $(($# < 2 ? $# : 2))

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
tmp=$(mktemp "$state.XXXXXX")
jq --arg now "$now" --arg sha "$sha" '
  .current_phase as $done
  | if $done == null then . else
      .completed_phases += [
        {id: $done.id, name: $done.name, timestamp: $now}
        + (if $sha == "" then {} else {commit_sha: $sha} end)
      ]
      | .current_phase = (.remaining_phases[0]
          | if . == null then null else {id, name, progress_description: ""} end)
      | .remaining_phases = .remaining_phases[1:]
    end
  | .context_summary.file_paths = ((.context_summary.file_paths // []) as $known
      | $known + ($ARGS.positional - $known))
  | .updated_at = $now
' "$state" --args "$@" >"$tmp"
mv "$tmp" "$state"

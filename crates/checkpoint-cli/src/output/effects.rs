//! The effect ledger as text: `checkpoint effects`.

use std::{collections::HashMap, fmt::Write as _};

use checkpoint_core::{
    PhaseId,
    effects::{Ledger, normalized as one_line},
};

use crate::{
    json::{EffectRow, Shown},
    output::{
        paint::Paint,
        text::{count, shorten},
    },
};

/// How many effects each phase has done (those that succeeded, in every attempt), as `status`
/// and `watch` show them.
#[derive(Debug, Default)]
pub(crate) struct EffectCounts(HashMap<PhaseId, usize>);

impl EffectCounts {
    pub(crate) fn of(ledger: &Ledger) -> Self {
        let mut counts = HashMap::new();
        for effect in ledger.effects.iter().filter(|effect| effect.ok) {
            if let Some(phase) = &effect.phase {
                *counts.entry(phase.clone()).or_insert(0) += 1;
            }
        }
        Self(counts)
    }

    /// The effects phase `phase` has done.
    pub(crate) fn of_phase(&self, phase: &PhaseId) -> usize {
        self.0.get(phase).copied().unwrap_or(0)
    }
}

/// Where a listing's texts are whole.
const WHOLE: &str = "checkpoint effects --format json";

/// The listing: a heading saying what is shown, then two lines per effect (what ran, and its
/// output), and how a repeat is let through.
pub(crate) fn effects_text(
    rows: &[EffectRow<'_>],
    shown: Shown,
    total: usize,
    paint: Paint,
) -> String {
    let which = match shown {
        Shown::Unfinished => "of the phases not done and of no phase",
        Shown::Phase => "of the phase",
        Shown::All => "in all",
    };
    let mut text = String::new();
    if rows.is_empty() {
        let _ = write!(text, "no effects {which}");
        if shown != Shown::All && total > 0 {
            let _ = write!(
                text,
                " ({} in all: `checkpoint effects --all`)",
                count(total, "effect")
            );
        }
        text.push('\n');
        return text;
    }
    let _ = writeln!(text, "{} {which}", count(rows.len(), "effect"));
    for row in rows {
        let mut head = format!("#{}", row.number);
        match (row.phase, row.attempt) {
            (Some(phase), Some(attempt)) => {
                let _ = write!(head, " {phase} (attempt {attempt})");
            }
            (Some(phase), None) => {
                let _ = write!(head, " {phase}");
            }
            (None, _) => head.push_str(" (no phase)"),
        }
        let _ = write!(head, "  {}", row.at.format("%Y-%m-%d %H:%M:%S UTC"));
        if let Some(session) = row.session_id {
            let _ = write!(head, "  session {}", session.get(..8).unwrap_or(session));
        }
        let state = if !row.ok {
            paint.red("failed")
        } else if row.allowed {
            paint.yellow("one repeat allowed")
        } else if row.guards {
            paint.green("done")
        } else {
            paint.dim("done, repeated since")
        };
        let _ = writeln!(text, "{}  {state}", paint.bold(&head));
        let what = match row.tool.filter(|tool| *tool != "Bash") {
            Some(tool) => format!("{tool} {}", row.command),
            None => row.command.to_owned(),
        };
        let _ = writeln!(text, "    {}", shorten(&one_line(&what), WHOLE));
        if let Some(output) = row.output.filter(|output| !output.is_empty()) {
            let _ = writeln!(text, "    → {}", shorten(&one_line(output), WHOLE));
        }
    }
    if rows.iter().any(|row| row.guards) {
        let _ = writeln!(
            text,
            "{}",
            paint.dim("a repeat of a done effect is refused before it runs; `checkpoint effects allow <n>` lets one through")
        );
    }
    text
}

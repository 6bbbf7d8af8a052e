//! What the runner saw of a session while it ran, from its stream: its id, its last tool, the
//! limits, the usage and what it spent.

use checkpoint_core::{budget::Usage, run::Reset};

use crate::{clients::session::SessionEvent, output, runner::display::RunEvent};

/// What the runner saw of a session while it ran.
#[derive(Default)]
pub(crate) struct Observed {
    pub(crate) session_id: Option<String>,
    pub(crate) last_tool: Option<String>,
    pub(crate) rate_limited: bool,
    pub(crate) reset: Option<Reset>,
    /// The last value of the stream that could not be believed, and why.
    pub(crate) ignored: Option<String>,
    pub(crate) retry_delay_ms: Option<u64>,
    pub(crate) result: Option<String>,
    pub(crate) cost_usd: Option<f64>,
    pub(crate) tokens: Option<u64>,
    pub(crate) usage: Vec<Usage>,
}

impl Observed {
    /// Takes one event of the stream into account; returns what to show of it, if anything.
    pub(crate) fn take(&mut self, number: u32, event: SessionEvent) -> Option<RunEvent> {
        match event {
            SessionEvent::SessionId(session_id) => {
                if self.session_id.as_ref() != Some(&session_id) {
                    self.session_id = Some(session_id.clone());
                    return Some(RunEvent::SessionId { number, session_id });
                }
            }
            SessionEvent::ToolUse(tool) => {
                self.last_tool = Some(tool.clone());
                return Some(RunEvent::ToolUse { number, tool });
            }
            SessionEvent::Retry { status, delay_ms } => {
                self.retry_delay_ms = Some(delay_ms);
                return Some(RunEvent::ClientRetry {
                    number,
                    status,
                    delay_ms,
                });
            }
            SessionEvent::RateLimited { reset } => {
                self.rate_limited = true;
                if let Some(reset) = reset {
                    // An exact time beats a coarse one, whichever came first.
                    self.reset = Some(self.reset.map_or(reset, |seen| seen.better(reset)));
                }
            }
            SessionEvent::Ignored(why) => {
                output::warn(&format!("session {number}: {why}: taken as no reset time"));
                self.ignored = Some(why);
            }
            SessionEvent::Usage(usage) => {
                let shown = RunEvent::Usage {
                    number,
                    window: usage.window.clone(),
                    percent: usage.percent(),
                    resets_at: usage.resets_at,
                };
                self.usage.push(usage);
                return Some(shown);
            }
            SessionEvent::Spent { cost_usd, tokens } => {
                self.cost_usd = cost_usd.or(self.cost_usd);
                self.tokens = tokens.or(self.tokens);
            }
            SessionEvent::Result { is_error, text } => {
                if is_error {
                    self.result = Some(text);
                }
            }
        }
        None
    }
}

//! The single next action a resume recommends, below both the planner and the sub-agents'
//! view that propose it.

use crate::{
    id::{PhaseId, TaskId},
    resume::codes::Action,
};

/// The single recommended next action.
#[derive(Debug, Clone, PartialEq)]
pub struct NextAction {
    /// `start`, `continue`, `retry`, `rollback`, `approve`, `decide`, `confirm`, `wait`,
    /// `done` or `abandoned`.
    pub action: Action,
    /// The phase it concerns.
    pub phase: Option<PhaseId>,
    /// The task of that phase to work on, where one was interrupted.
    pub task: Option<TaskId>,
    /// Other phases that may run now in parallel.
    pub parallel: Vec<PhaseId>,
    /// The command to run for it.
    pub command: Option<String>,
    /// Why, in a sentence.
    pub reason: String,
}

//! Errors the CLI raises itself (not the core's), each with a stable diagnostic code, whose
//! documented exit code `exit_code::BY_DIAGNOSTIC` decides, so that refusals, invalid input and
//! missing things never fall back to 1; and the exit codes of `checkpoint run`'s stops, which
//! are not errors.

use std::fmt;

use checkpoint_contract::exit_code;
use checkpoint_core::run::StopKind;
use miette::Diagnostic;

/// The exit code of `checkpoint run` stopped so.
pub(crate) fn exit_code_of_stop(kind: StopKind) -> u8 {
    match kind {
        StopKind::Finished => exit_code::SUCCESS,
        StopKind::NeedsPerson => exit_code::NEEDS_PERSON,
        StopKind::Limit => exit_code::RUN_LIMIT,
        StopKind::Interrupted => exit_code::INTERRUPTED,
    }
}

/// The exit code of `checkpoint run --all`: its most serious stop's, but a run that finished
/// with workflows it could not read (skipped) has not done them: the state cannot be trusted.
pub(crate) fn exit_code_of_all(worst: StopKind, skipped_any: bool) -> u8 {
    match exit_code_of_stop(worst) {
        exit_code::SUCCESS if skipped_any => exit_code::UNTRUSTED,
        code => code,
    }
}

/// An error raised by a command, with its stable code and its hint.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    code: &'static str,
    message: String,
    help: Option<String>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Failure {
    /// An error with its stable code, whose exit code is the one [`checkpoint_contract::exit_code::BY_DIAGNOSTIC`]
    /// gives it.
    pub(crate) fn new(code: &'static str, message: String) -> Self {
        Self {
            code,
            message,
            help: None,
            source: None,
        }
    }

    pub(crate) fn with_help(self, help: impl Into<String>) -> Self {
        Self {
            help: Some(help.into()),
            ..self
        }
    }

    pub(crate) fn with_source(
        self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            source: Some(Box::new(source)),
            ..self
        }
    }
}

impl Diagnostic for Failure {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stop has its own documented code; a finished `run --all` that skipped a workflow
    /// is not a success, and any other stop keeps its code.
    #[test]
    fn each_stop_has_its_documented_exit_code() {
        let all = [
            StopKind::Finished,
            StopKind::NeedsPerson,
            StopKind::Limit,
            StopKind::Interrupted,
        ];
        let codes: Vec<u8> = all.iter().map(|kind| exit_code_of_stop(*kind)).collect();
        assert_eq!(
            codes,
            [
                exit_code::SUCCESS,
                exit_code::NEEDS_PERSON,
                exit_code::RUN_LIMIT,
                exit_code::INTERRUPTED
            ]
        );
        for code in &codes {
            assert!(
                exit_code::ALL
                    .iter()
                    .any(|documented| documented.code == *code)
            );
        }
        assert_eq!(
            exit_code_of_all(StopKind::Finished, false),
            exit_code::SUCCESS
        );
        assert_eq!(
            exit_code_of_all(StopKind::Finished, true),
            exit_code::UNTRUSTED
        );
        for kind in &all[1..] {
            assert_eq!(exit_code_of_all(*kind, true), exit_code_of_stop(*kind));
        }
    }
}

//! Errors the CLI raises itself (not the core's), each carrying the documented exit code it
//! maps to, so that refusals, invalid input and missing things never fall back to 1.

use std::fmt;

use miette::Diagnostic;

use crate::exit_code;

/// An error raised by a command, with its stable code, its hint and its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    code: &'static str,
    message: String,
    help: Option<String>,
    pub(crate) exit: u8,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Failure {
    /// Invalid input: an argument or a variable that does not parse (exit code 2).
    pub(crate) fn usage(code: &'static str, message: String) -> Self {
        Self::new(code, message, exit_code::USAGE)
    }

    /// A request the current state does not allow (exit code 3).
    pub(crate) fn refused(code: &'static str, message: String) -> Self {
        Self::new(code, message, exit_code::REFUSED)
    }

    /// Something named that does not exist (exit code 4).
    pub(crate) fn not_found(code: &'static str, message: String) -> Self {
        Self::new(code, message, exit_code::NOT_FOUND)
    }

    /// Data from outside that is not what `checkpoint` writes, left unread (exit code 6).
    pub(crate) fn untrusted(code: &'static str, message: String) -> Self {
        Self::new(code, message, exit_code::UNTRUSTED)
    }

    fn new(code: &'static str, message: String, exit: u8) -> Self {
        Self {
            code,
            message,
            help: None,
            exit,
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

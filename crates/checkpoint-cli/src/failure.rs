//! Errors the CLI raises itself (not the core's), each with a stable diagnostic code, whose
//! documented exit code `exit_code::BY_DIAGNOSTIC` decides, so that refusals, invalid input and
//! missing things never fall back to 1.

use std::fmt;

use miette::Diagnostic;

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

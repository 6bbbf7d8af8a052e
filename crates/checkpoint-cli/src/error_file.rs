//! A failed command's error as a typed document ([`ErrorReport`]), written to the file
//! `CHECKPOINT_ERROR_FILE` names, whatever `--format`: the channel the MCP server reads its
//! commands' errors from, so that stderr carries warnings and text only.

use std::path::Path;

use checkpoint_contract::{diagnostic, document::ErrorReport};
use miette::Report;

use crate::{env, output};

/// The error of a report, with the diagnostic code its exit code is decided from.
pub(crate) fn of_report(report: &Report) -> ErrorReport {
    ErrorReport {
        message: report.to_string(),
        code: diagnostic_code(report),
        help: report.help().map(|help| help.to_string()),
    }
}

/// A command line clap refused, as a usage error: its first paragraph the message (what is
/// wrong, with the arguments it names), the rest (a tip, the usage, the pointer to `--help`)
/// the fix.
pub(crate) fn of_clap(err: &clap::Error) -> ErrorReport {
    let rendered = err.render().to_string();
    let rendered = rendered.trim();
    let (message, rest) = rendered.split_once("\n\n").unwrap_or((rendered, ""));
    let message: Vec<&str> = message.lines().map(str::trim).collect();
    let message = message.join(" ");
    let help: Vec<&str> = rest
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    ErrorReport {
        message: message
            .strip_prefix("error: ")
            .unwrap_or(&message)
            .to_owned(),
        code: Some(diagnostic::USAGE.to_owned()),
        help: (!help.is_empty()).then(|| help.join("\n")),
    }
}

/// The diagnostic code of a report; a report wrapped in context keeps the code of the core
/// error inside.
pub(crate) fn diagnostic_code(report: &Report) -> Option<String> {
    report
        .code()
        .or_else(|| {
            report
                .downcast_ref::<checkpoint_core::Error>()
                .and_then(miette::Diagnostic::code)
        })
        .map(|code| code.to_string())
}

/// Writes `report` to the file `CHECKPOINT_ERROR_FILE` names, replacing it atomically (a reader
/// sees the whole document or the file as it was); nothing when the variable is unset or empty.
/// A write that fails is a warning: the error itself is on stderr.
pub(crate) fn write(report: &ErrorReport) {
    let Some(path) = std::env::var_os(env::CHECKPOINT_ERROR_FILE).filter(|path| !path.is_empty())
    else {
        return;
    };
    let path = Path::new(&path);
    let written = serde_json::to_vec(report)
        .map_err(|err| err.to_string())
        .and_then(|bytes| {
            checkpoint_core::write_atomic(path, &bytes, true).map_err(|err| err.to_string())
        });
    if let Err(err) = written {
        output::warn(&format!(
            "could not write the error to `{}` (`{}`): {err}",
            path.display(),
            env::CHECKPOINT_ERROR_FILE
        ));
    }
}

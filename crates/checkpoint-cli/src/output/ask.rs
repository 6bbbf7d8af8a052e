//! Questions to a person at a terminal: asked on stderr, answered on stdin.

use std::io::{self, BufRead, Write};

use miette::{IntoDiagnostic, Result};

/// Asks `question` on stderr and returns the line typed in answer.
pub(crate) fn ask(question: &str) -> Result<String> {
    let mut stderr = io::stderr();
    stderr
        .write_all(question.as_bytes())
        .and_then(|()| stderr.flush())
        .into_diagnostic()?;
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line).into_diagnostic()?;
    Ok(line)
}

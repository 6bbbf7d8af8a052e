//! Colour for human output (`Paint`): plain text when colour is off.

use anstyle::{AnsiColor, Style};

/// Styles for human output; plain text when colour is off.
#[derive(Clone, Copy)]
pub(crate) struct Paint {
    color: bool,
}

impl Paint {
    pub(crate) fn new(color: bool) -> Self {
        Self { color }
    }

    fn paint(self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn green(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint(AnsiColor::Yellow.on_default(), text)
    }

    pub(crate) fn red(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default(), text)
    }

    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint(AnsiColor::Cyan.on_default(), text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }
}

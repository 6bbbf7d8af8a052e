//! The full-screen view of `checkpoint watch`: the alternate screen, redrawn in place.

use std::io;

use crate::output::{
    sink::{emit, sanitize},
    text::cut,
};

/// The full-screen view of `checkpoint watch`: the terminal's alternate screen with the cursor
/// hidden, redrawn in place; dropping it restores the screen and the cursor.
pub(crate) struct Screen {
    color: bool,
    /// The last frame written and the terminal's size then: not written again while neither
    /// changed.
    last: (String, usize, usize),
}

impl Screen {
    /// Switches to the alternate screen.
    pub(crate) fn enter(color: bool) -> io::Result<Self> {
        emit("\u{1b}[?1049h\u{1b}[?25l")?;
        Ok(Self {
            color,
            last: (String::new(), 0, 0),
        })
    }

    /// Draws `text` (human text, escaped like `emit_human`) from the top left, each line cut
    /// to `width` columns and the whole to `height` lines, clearing what the last frame left;
    /// writes nothing when the frame is the one on screen.
    pub(crate) fn draw(&mut self, text: &str, width: usize, height: usize) -> io::Result<()> {
        let text = sanitize(self.color, text);
        let lines: Vec<&str> = text.lines().collect();
        let room = height.saturating_sub(1).max(1);
        let mut frame = String::from("\u{1b}[H");
        for (idx, line) in lines.iter().enumerate() {
            if idx + 1 == room && lines.len() > room {
                let more = format!(
                    "… {} more lines (a taller terminal shows them)",
                    lines.len() - idx
                );
                frame.push_str(&cut(&more, width, self.color));
                frame.push_str("\u{1b}[K\n");
                break;
            }
            frame.push_str(&cut(line, width, self.color));
            frame.push_str("\u{1b}[K\n");
        }
        frame.push_str("\u{1b}[J");
        if self.last.0 == frame && (self.last.1, self.last.2) == (width, height) {
            return Ok(());
        }
        emit(&frame)?;
        self.last = (frame, width, height);
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = emit("\u{1b}[?25h\u{1b}[?1049l");
    }
}

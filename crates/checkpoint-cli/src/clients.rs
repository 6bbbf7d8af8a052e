//! What the agent clients print, as typed documents (their own formats, read leniently).

pub(crate) mod claude;

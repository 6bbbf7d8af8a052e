//! What the agent clients send us and print, one module per client: their payloads and
//! streams as typed documents (their own formats, read leniently).

pub(crate) mod claude;
pub(crate) mod gemini;

//! What the agent clients send us, one module per client: the shapes of their payloads, typed.

pub(crate) mod claude;

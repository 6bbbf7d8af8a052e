//! End-to-end harness: the real `claude` client against a scripted mock of the Messages API.
//!
//! [`MockApi`] serves the API on 127.0.0.1 and records every request; [`ClaudeEnv`] runs the
//! client in a throwaway HOME and git project pointed at that mock; [`Plugin`] is the
//! `checkpoint` plugin bundle under test.
//!
//! ```no_run
//! use checkpoint_e2e::{ClaudeEnv, MockApi, Turn};
//!
//! let mock = MockApi::start(vec![Turn::text("HELLO-FROM-MOCK")]);
//! let env = ClaudeEnv::new(&mock);
//! let output = env.run(&["-p", "hello"], &[]);
//! assert!(output.stdout.contains("HELLO-FROM-MOCK"));
//! assert!(mock.request_text(0).contains("hello"));
//! ```

pub mod claude;
pub mod codex;
pub mod files;
pub mod gemini;
pub mod mock;
pub mod plugin;

pub use crate::claude::{ClaudeEnv, ClaudeOutput, JsonResult};
pub use crate::codex::CodexEnv;
pub use crate::gemini::{GeminiEnv, GeminiOutput};
pub use crate::mock::{
    MockApi, MockConfig, RecordedRequest, RequestKind, Turn,
    gemini::{GeminiMock, GeminiRequest, GeminiTurn},
    responses::{ResponsesMock, ResponsesTurn},
};
pub use crate::plugin::Plugin;

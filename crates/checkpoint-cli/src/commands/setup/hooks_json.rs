//! The JSON files the clients share a shape for: `{"hooks": {"<Event>": [{"matcher": …,
//! "hooks": [{"type": "command", "command": …, "timeout": …}]}]}}` and `{"mcpServers":
//! {"checkpoint": {"command": …, "args": ["mcp"]}}}`, edited keeping every other entry.

use serde_json::{Map, Value, json};

use std::path::PathBuf;

use super::{FileEdit, Malformed, Target, is_checkpoint_binary};
use crate::clients::Client;

/// A hook `setup` writes.
pub(crate) struct HookSpec {
    pub(crate) event: &'static str,
    pub(crate) matcher: Option<&'static str>,
    pub(crate) command: String,
    /// In the client's unit.
    pub(crate) timeout: u64,
}

/// The MCP server's name in every client's configuration.
pub(crate) const SERVER: &str = "checkpoint";

/// The edit of `client`'s hooks file at `path`: `specs` in, every older hook of ours out.
pub(crate) fn hooks_file<'a>(
    path: PathBuf,
    client: Client,
    specs: Vec<HookSpec>,
    remove: bool,
) -> FileEdit<'a> {
    FileEdit {
        path,
        edit: Box::new(move |text| {
            let before = parse(text)?;
            let mut after = before.clone();
            edit_hooks(
                &mut after,
                &specs,
                |command| Target::is_our_hook(command, client),
                remove,
            )?;
            Ok(render(&before, after))
        }),
    }
}

/// Parses a client's JSON file (absent or blank: an empty object).
pub(crate) fn parse(text: Option<&str>) -> Result<Map<String, Value>, Malformed> {
    let Some(text) = text.filter(|text| !text.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Malformed::at(Some(1), "not a JSON object")),
        Err(err) => Err(Malformed::at(
            Some(err.line()),
            format!("not valid JSON ({err})"),
        )),
    }
}

/// The new text of a JSON file whose parsed content went from `before` to `after`; `None` when
/// nothing changed (so that a second run rewrites nothing, not even the layout).
pub(crate) fn render(before: &Map<String, Value>, after: Map<String, Value>) -> Option<String> {
    (before != &after).then(|| {
        let mut text = serde_json::to_string_pretty(&Value::Object(after))
            .expect("a JSON value always serializes");
        text.push('\n');
        text
    })
}

/// Takes every hook `is_ours` says is ours out of `root["hooks"]` (and the groups and events
/// it leaves empty), then, unless `remove`, adds `specs`.
pub(crate) fn edit_hooks(
    root: &mut Map<String, Value>,
    specs: &[HookSpec],
    is_ours: impl Fn(&str) -> bool,
    remove: bool,
) -> Result<(), Malformed> {
    if !root.contains_key("hooks") && (remove || specs.is_empty()) {
        return Ok(());
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(Malformed::at(None, "`hooks` is not an object"));
    };
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(Value::Array(groups)) = hooks.get_mut(&event) else {
            return Err(Malformed::at(
                None,
                format!("`hooks.{event}` is not an array"),
            ));
        };
        let before = groups.len();
        let mut emptied = 0;
        for group in groups.iter_mut() {
            let Some(Value::Array(handlers)) = group.get_mut("hooks") else {
                continue;
            };
            let count = handlers.len();
            handlers.retain(|handler| {
                !handler
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(&is_ours)
            });
            if handlers.is_empty() && count > 0 {
                emptied += 1;
            }
        }
        if emptied > 0 {
            groups.retain(|group| {
                group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|handlers| !handlers.is_empty())
            });
        }
        if groups.is_empty() && before > 0 {
            hooks.remove(&event);
        }
    }
    if !remove {
        for spec in specs {
            let mut group = Map::new();
            if let Some(matcher) = spec.matcher {
                group.insert("matcher".into(), json!(matcher));
            }
            group.insert(
                "hooks".into(),
                json!([{ "type": "command", "command": spec.command, "timeout": spec.timeout }]),
            );
            let groups = hooks
                .entry(spec.event)
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(groups) = groups {
                groups.push(Value::Object(group));
            }
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(())
}

/// Sets (or, with `remove`, takes out) the `checkpoint` server in `root[key]`, an object of
/// servers by name. A server of that name that is not ours is left alone, and said.
pub(crate) fn edit_server(
    root: &mut Map<String, Value>,
    key: &str,
    server: Value,
    remove: bool,
) -> Result<(), Malformed> {
    if remove && !root.contains_key(key) {
        return Ok(());
    }
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(Malformed::at(None, format!("`{key}` is not an object")));
    };
    if let Some(existing) = servers.get(SERVER) {
        let ours = existing
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(is_checkpoint_binary);
        if !ours {
            return Err(Malformed::at(
                None,
                format!(
                    "`{key}.{SERVER}` is a server of your own, not `checkpoint mcp`; rename it"
                ),
            ));
        }
    }
    if !remove {
        servers.insert(SERVER.into(), server);
    } else if servers.remove(SERVER).is_some() && servers.is_empty() {
        root.remove(key);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_file_is_reported_with_its_line() {
        let err = parse(Some("{\n  \"a\": 1,\n  oops\n}")).unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(parse(Some("[1]")).unwrap_err().line, Some(1));
        assert!(parse(Some("  \n")).unwrap().is_empty());
        assert!(parse(None).unwrap().is_empty());
    }
}

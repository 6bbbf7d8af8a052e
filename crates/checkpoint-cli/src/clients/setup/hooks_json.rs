//! The JSON files the clients share a shape for: `{"hooks": {"<Event>": [{"matcher": …,
//! "hooks": [{"type": "command", "command": …, "timeout": …}]}]}}` and `{"mcpServers":
//! {"checkpoint": {"command": …, "args": ["mcp"]}}}`, edited by splicing the text (as
//! `jsonc.rs` parses it): only the entries we wrote change, every other byte (a large number,
//! a duplicate key, a comment, the layout) stays as it was.

use checkpoint_contract::hooks::Registration;
use serde_json::{Value, json};

use std::path::PathBuf;

use super::{FileEdit, Malformed, Target, is_checkpoint_binary};
use crate::{
    clients::Client,
    jsonc::{self, Node},
};

/// A hook `setup` writes.
pub(crate) struct HookSpec {
    pub(crate) event: &'static str,
    pub(crate) matcher: Option<&'static str>,
    pub(crate) command: String,
    /// In the client's unit.
    pub(crate) timeout: u64,
}

impl HookSpec {
    /// The hooks of `client`'s row of the contract's table, each running this binary's hook.
    pub(crate) fn of(target: &Target, client: Client, hooks: &[Registration]) -> Vec<HookSpec> {
        hooks
            .iter()
            .map(|hook| HookSpec {
                event: hook.event,
                matcher: hook.matcher,
                command: target.hook_command(client, hook.event),
                timeout: hook.timeout,
            })
            .collect()
    }

    /// The hook group this spec stands for.
    fn group(&self) -> Value {
        let mut group = serde_json::Map::new();
        if let Some(matcher) = self.matcher {
            group.insert("matcher".into(), json!(matcher));
        }
        group.insert(
            "hooks".into(),
            json!([{ "type": "command", "command": self.command, "timeout": self.timeout }]),
        );
        Value::Object(group)
    }
}

/// The MCP server's name in every client's configuration.
pub(crate) const SERVER: &str = "checkpoint";

/// What we own in a hooks file: the group we want under each event (none when removing), and
/// which hooks (the handlers inside a group) are ours.
pub(crate) struct OwnedHooks<'a> {
    pub(crate) wanted: Vec<(String, Value)>,
    pub(crate) is_ours: &'a dyn Fn(&Value) -> bool,
}

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
            let is_ours = |handler: &Value| {
                handler
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|command| Target::is_our_hook(command, client))
            };
            let owned = OwnedHooks {
                wanted: if remove {
                    Vec::new()
                } else {
                    specs
                        .iter()
                        .map(|spec| (spec.event.to_owned(), spec.group()))
                        .collect()
                },
                is_ours: &is_ours,
            };
            splice(text, remove, |text, root| hooks_edit(text, root, &owned))
        }),
    }
}

/// The edit of a JSON file of MCP servers at `path` (`key` holding them by name): ours set to
/// `server`, or taken out with `remove`. A server of that name that is not ours is left alone,
/// and said.
pub(crate) fn servers_file<'a>(
    path: PathBuf,
    key: &'static str,
    server: Value,
    remove: bool,
) -> FileEdit<'a> {
    FileEdit {
        path,
        edit: Box::new(move |text| {
            let wanted = (!remove).then_some(&server);
            splice(text, remove, |text, root| {
                server_edit(text, root, key, wanted, &|existing| {
                    existing
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_checkpoint_binary)
                })
            })
        }),
    }
}

/// `text` (the file's, `None` when there is none) after every edit `next` asks for, one at a
/// time on a fresh parse; `None` when nothing changes.
pub(crate) fn splice(
    text: Option<&str>,
    remove: bool,
    mut next: impl FnMut(&str, &Node) -> Result<Option<String>, Malformed>,
) -> Result<Option<String>, Malformed> {
    let original = text.unwrap_or_default();
    let mut text = match text {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ if remove => return Ok(None),
        _ => "{}\n".to_owned(),
    };
    // Each edit takes out or puts in one entry, so this ends.
    for _ in 0..10_000 {
        let root = jsonc::parse(&text).map_err(|error| {
            Malformed::at(
                Some(error.line),
                format!("column {}: {}", error.column, error.message),
            )
        })?;
        if root.members().is_none() {
            return Err(not_a(&text, "the file", &root, "an object"));
        }
        match next(&text, &root)? {
            Some(edited) => text = edited,
            None => break,
        }
    }
    Ok((text != original).then_some(text))
}

/// The next edit of `root["hooks"]`: a hook of ours that is not the wanted group goes (its
/// group too when it held only ours, and the event when that was its only group); a wanted
/// group that is missing is added. Another hook in a group of ours stays, with its group.
pub(crate) fn hooks_edit(
    text: &str,
    root: &Node,
    owned: &OwnedHooks<'_>,
) -> Result<Option<String>, Malformed> {
    let Some(hooks) = root.get("hooks") else {
        if owned.wanted.is_empty() {
            return Ok(None);
        }
        let all: serde_json::Map<String, Value> = owned
            .wanted
            .iter()
            .map(|(name, group)| (name.clone(), json!([group])))
            .collect();
        return Ok(Some(jsonc::insert_member(
            text,
            root,
            "hooks",
            &Value::Object(all),
        )));
    };
    let Some(events) = hooks.value.members() else {
        return Err(not_a(text, "hooks", &hooks.value, "an object"));
    };
    for (index, event) in events.iter().enumerate() {
        let Some(groups) = event.value.elements() else {
            return Err(not_a(
                text,
                &format!("hooks.{}", event.key),
                &event.value,
                "an array",
            ));
        };
        let wanted = owned
            .wanted
            .iter()
            .find(|(name, _)| *name == event.key)
            .map(|(_, group)| group);
        let keep = wanted.and_then(|wanted| {
            groups
                .iter()
                .position(|group| group.to_value(text) == *wanted)
        });
        for (at, group) in groups.iter().enumerate() {
            if Some(at) == keep {
                continue;
            }
            let Some(handlers) = group
                .get("hooks")
                .and_then(|member| member.value.elements())
            else {
                continue;
            };
            let ours: Vec<usize> = (0..handlers.len())
                .filter(|at| (owned.is_ours)(&handlers[*at].to_value(text)))
                .collect();
            let Some(&first) = ours.first() else {
                continue;
            };
            if ours.len() < handlers.len() {
                // A group shared with the user's hooks: only our hook goes.
                let previous = first.checked_sub(1).map(|at| handlers[at].end);
                let handler = &handlers[first];
                return Ok(Some(jsonc::remove_entry(
                    text,
                    handler.start,
                    handler.end,
                    previous,
                )));
            }
            if groups.len() == 1 && wanted.is_none() {
                // The event held only ours: the event goes too, and `hooks` when it held only
                // that.
                if sole(text, &hooks.value, event.start, event.value.end) {
                    return Ok(Some(remove_member(text, root, "hooks")));
                }
                let previous = index.checked_sub(1).map(|at| events[at].value.end);
                return Ok(Some(jsonc::remove_entry(
                    text,
                    event.start,
                    event.value.end,
                    previous,
                )));
            }
            let previous = at.checked_sub(1).map(|at| groups[at].end);
            return Ok(Some(jsonc::remove_entry(
                text,
                group.start,
                group.end,
                previous,
            )));
        }
        if let (Some(wanted), None) = (wanted, keep) {
            return Ok(Some(jsonc::push_element(text, &event.value, wanted)));
        }
    }
    for (name, group) in &owned.wanted {
        if hooks.value.get(name).is_none() {
            return Ok(Some(jsonc::insert_member(
                text,
                &hooks.value,
                name,
                &json!([group]),
            )));
        }
    }
    Ok(None)
}

/// The next edit of the servers in `root[key]`: ours set to `wanted`, or taken out when it is
/// `None` (`key` too when it held only ours). A server of our name that `is_ours` rejects is
/// an error.
pub(crate) fn server_edit(
    text: &str,
    root: &Node,
    key: &str,
    wanted: Option<&Value>,
    is_ours: &dyn Fn(&Value) -> bool,
) -> Result<Option<String>, Malformed> {
    let Some(servers) = root.get(key) else {
        return Ok(
            wanted.map(|wanted| jsonc::insert_member(text, root, key, &json!({ SERVER: wanted })))
        );
    };
    if servers.value.members().is_none() {
        return Err(not_a(text, key, &servers.value, "an object"));
    }
    let Some(server) = servers.value.get(SERVER) else {
        return Ok(wanted.map(|wanted| jsonc::insert_member(text, &servers.value, SERVER, wanted)));
    };
    let existing = server.value.to_value(text);
    if !is_ours(&existing) {
        return Err(Malformed::at(
            Some(line_of(text, server.start)),
            format!("`{key}.{SERVER}` is a server of your own, not `checkpoint mcp`; rename it"),
        ));
    }
    match wanted {
        Some(wanted) => {
            Ok((existing != *wanted).then(|| jsonc::replace(text, &server.value, wanted)))
        }
        None if sole(text, &servers.value, server.start, server.value.end) => {
            Ok(Some(remove_member(text, root, key)))
        }
        None => Ok(Some(remove_member(text, &servers.value, SERVER))),
    }
}

/// Whether the entry at `start..end` is all that `container` holds (no other entry, no
/// comment).
fn sole(text: &str, container: &Node, start: usize, end: usize) -> bool {
    text[container.start + 1..start].trim().is_empty()
        && text[end..container.end - 1].trim().is_empty()
}

/// `text` without member `key` of `object`.
fn remove_member(text: &str, object: &Node, key: &str) -> String {
    let members = object.members().unwrap_or_default();
    let Some(index) = members.iter().position(|member| member.key == key) else {
        return text.to_owned();
    };
    let previous = index.checked_sub(1).map(|at| members[at].value.end);
    let member = &members[index];
    jsonc::remove_entry(text, member.start, member.value.end, previous)
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// `key` is not what it must be.
pub(crate) fn not_a(text: &str, key: &str, node: &Node, expected: &'static str) -> Malformed {
    Malformed::at(
        Some(line_of(text, node.start)),
        format!("`{key}` is not {expected}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> HookSpec {
        HookSpec {
            event: "Stop",
            matcher: None,
            command: "/b/checkpoint hook --client claude Stop".into(),
            timeout: 5,
        }
    }

    fn edit(text: Option<&str>, remove: bool) -> Result<Option<String>, Malformed> {
        let edit = hooks_file(
            PathBuf::from("settings.json"),
            Client::Claude,
            vec![spec()],
            remove,
        );
        (edit.edit)(text)
    }

    #[test]
    fn a_malformed_file_is_reported_with_its_line() {
        let err = edit(Some("{\n  \"a\": 1,\n  oops\n}"), false).unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(edit(Some("[1]"), false).unwrap_err().line, Some(1));
        assert!(edit(Some("  \n"), true).unwrap().is_none());
        assert!(edit(None, true).unwrap().is_none());
    }

    /// Large numbers, duplicate keys, the layout: every byte that is not ours survives an
    /// install, a second install and a removal.
    #[test]
    fn the_text_that_is_not_ours_is_kept_byte_for_byte() {
        let user = "{\n    \"big\": 12345678901234567890123,\n    \"dup\": 1,\n    \"dup\": 2,\n    \"float\": 1.0000000000000000001\n}\n";
        let installed = edit(Some(user), false).unwrap().unwrap();
        assert!(installed.starts_with("{\n    \"big\": 12345678901234567890123,\n    \"dup\": 1,\n    \"dup\": 2,\n    \"float\": 1.0000000000000000001,\n"), "{installed}");
        assert!(
            installed.contains("hook --client claude Stop"),
            "{installed}"
        );
        assert_eq!(edit(Some(&installed), false).unwrap(), None);
        assert_eq!(edit(Some(&installed), true).unwrap().as_deref(), Some(user));
    }

    /// A hook of the user's in the same group as ours stays, in its group, through a re-run
    /// and a removal.
    #[test]
    fn a_users_hook_in_our_group_is_kept() {
        let ours = "/old/checkpoint hook --client claude Stop";
        let text = format!(
            "{{\"hooks\": {{\"Stop\": [{{\"hooks\": [{{\"type\": \"command\", \"command\": \"{ours}\"}}, {{\"type\": \"command\", \"command\": \"notify-send done\"}}]}}]}}}}"
        );
        for remove in [false, true] {
            let after = edit(Some(&text), remove).unwrap().unwrap();
            let value: Value = serde_json::from_str(&after).unwrap();
            let groups = value["hooks"]["Stop"].as_array().unwrap();
            assert_eq!(
                groups[0]["hooks"],
                json!([{"type": "command", "command": "notify-send done"}]),
                "{after}"
            );
            assert_eq!(groups.len(), if remove { 1 } else { 2 }, "{after}");
            assert!(!after.contains("/old/checkpoint"), "{after}");
        }
    }
}

//! The MCP server entry in a TOML configuration (`[mcp_servers.checkpoint]` in Codex's
//! `config.toml`), edited in place so that the user's comments, order and layout stay.

use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::{Malformed, hooks_json::SERVER, is_checkpoint_binary};

/// The new text of `text` with the `checkpoint` server of `servers` set to run `binary mcp`
/// (or, with `remove`, taken out); `None` when nothing changes.
pub(crate) fn edit_server(
    text: Option<&str>,
    servers: &str,
    binary: &str,
    remove: bool,
) -> Result<Option<String>, Malformed> {
    let source = text.unwrap_or("");
    let mut document: DocumentMut = source.parse().map_err(|err: toml_edit::TomlError| {
        let line = err
            .span()
            .map(|span| source[..span.start.min(source.len())].matches('\n').count() + 1);
        Malformed::at(line, format!("not valid TOML ({})", err.message()))
    })?;
    let root = document.as_table_mut();
    if remove && !root.contains_key(servers) {
        return Ok(None);
    }
    let table = root.entry(servers).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(table) = table.as_table_like_mut() else {
        return Err(Malformed::at(None, format!("`{servers}` is not a table")));
    };
    if let Some(existing) = table.get(SERVER) {
        let ours = existing
            .get("command")
            .and_then(Item::as_str)
            .is_some_and(is_checkpoint_binary);
        if !ours {
            return Err(Malformed::at(
                None,
                format!(
                    "`{servers}.{SERVER}` is a server of your own, not `checkpoint mcp`; rename it"
                ),
            ));
        }
    }
    if remove {
        if table.remove(SERVER).is_some() && table.is_empty() {
            root.remove(servers);
        }
    } else {
        let server = match table.get_mut(SERVER).and_then(Item::as_table_like_mut) {
            Some(server) => server,
            None => {
                table.insert(SERVER, Item::Table(Table::new()));
                table
                    .get_mut(SERVER)
                    .and_then(Item::as_table_like_mut)
                    .expect("just inserted")
            }
        };
        if server.get("command").and_then(Item::as_str) != Some(binary) {
            server.insert("command", value(binary));
        }
        let args_ok = server
            .get("args")
            .and_then(Item::as_array)
            .is_some_and(|args| {
                args.len() == 1 && args.get(0).and_then(|arg| arg.as_str()) == Some("mcp")
            });
        if !args_ok {
            server.insert("args", value(Array::from_iter(["mcp"])));
        }
    }
    let after = document.to_string();
    Ok((after != source).then_some(after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_file_is_reported_with_its_line() {
        let err = edit_server(
            Some("a = 1\n\nb = [\n"),
            "mcp_servers",
            "/b/checkpoint",
            false,
        )
        .unwrap_err();
        assert!(err.line.is_some_and(|line| line >= 3), "{err:?}");
    }

    #[test]
    fn comments_stay_and_a_second_run_changes_nothing() {
        let text = "# mine\nmodel = \"x\" # the model\n\n[mcp_servers.other]\ncommand = \"o\"\n";
        let after = edit_server(Some(text), "mcp_servers", "/b/checkpoint", false)
            .unwrap()
            .unwrap();
        assert!(after.starts_with(text), "{after}");
        assert!(
            after.contains(
                "[mcp_servers.checkpoint]\ncommand = \"/b/checkpoint\"\nargs = [\"mcp\"]\n"
            ),
            "{after}"
        );
        assert_eq!(
            edit_server(Some(&after), "mcp_servers", "/b/checkpoint", false).unwrap(),
            None
        );
        let removed = edit_server(Some(&after), "mcp_servers", "/b/checkpoint", true)
            .unwrap()
            .unwrap();
        assert_eq!(removed, text);
    }
}

//! `cargo xtask codegen`: the committed JSON Schemas of the file formats, from the model types;
//! the exit-code tables of `docs/commands.md` and the skill, and its table of environment
//! variables, from the contract (`checkpoint-contract`); and the plugin's files
//! that carry the crate's version (`plugin.rs`).

use std::{fs, path::Path};

use crate::Result;

/// Writes (or with `check`, verifies) `docs/*.schema.json`, the exit codes in `docs/commands.md` and
/// the skill, and the plugin's versioned files.
pub(crate) fn run(root: &Path, check: bool) -> Result {
    let mut files = vec![
        (
            "docs/state.schema.json",
            checkpoint_core::schema::state_schema(),
        ),
        (
            "docs/journal.schema.json",
            checkpoint_core::schema::journal_schema(),
        ),
        (
            "docs/plan.schema.json",
            checkpoint_core::schema::plan_schema(),
        ),
    ];
    files.push((
        "docs/commands.md",
        with_blocks(
            root,
            "docs/commands.md",
            &[&README_EXIT_CODES, &ENVIRONMENT],
        )?,
    ));
    files.push((
        "plugin/skills/checkpoint/SKILL.md",
        with_block(root, "plugin/skills/checkpoint/SKILL.md", &SKILL_EXIT_CODES)?,
    ));
    files.extend(crate::plugin::generated_files(root)?);
    let mut stale = Vec::new();
    for (path, contents) in files {
        let path = root.join(path);
        if fs::read_to_string(&path).ok().as_deref() == Some(contents.as_str()) {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            fs::write(&path, contents)
                .map_err(|err| format!("failed to write `{}`: {err}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "stale generated files (run `cargo xtask codegen`): {}",
            stale.join(", ")
        ))
    }
}

/// Where a generated block of lines stands in a Markdown file: the first run of lines that start
/// with `prefix`, after the line `after` (when given).
struct Block {
    after: Option<&'static str>,
    prefix: &'static str,
    contents: fn() -> String,
}

const README_EXIT_CODES: Block = Block {
    after: Some("### Exit codes"),
    prefix: "|",
    contents: checkpoint_contract::exit_code::markdown_table,
};

const ENVIRONMENT: Block = Block {
    after: Some("### Environment variables"),
    prefix: "|",
    contents: checkpoint_contract::env::markdown_table,
};

const SKILL_EXIT_CODES: Block = Block {
    after: None,
    prefix: "Exit codes: ",
    contents: checkpoint_contract::exit_code::skill_line,
};

/// The file at `path` with `block` regenerated.
fn with_block(root: &Path, path: &str, block: &Block) -> Result<String> {
    with_blocks(root, path, &[block])
}

/// The file at `path` with each of `blocks` regenerated.
fn with_blocks(root: &Path, path: &str, blocks: &[&Block]) -> Result<String> {
    let mut text = fs::read_to_string(root.join(path))
        .map_err(|err| format!("failed to read `{path}`: {err}"))?;
    for block in blocks {
        text = regenerate(&text, path, block)?;
    }
    Ok(text)
}

/// `text` (of the file `path`) with `block` regenerated.
fn regenerate(text: &str, path: &str, block: &Block) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let from = match block.after {
        Some(heading) => lines
            .iter()
            .position(|line| line.trim_end() == heading)
            .ok_or_else(|| format!("`{path}` has no line `{heading}`"))?,
        None => 0,
    };
    let start = (from..lines.len())
        .find(|&index| lines[index].starts_with(block.prefix))
        .ok_or_else(|| format!("`{path}` has no line starting with `{}`", block.prefix))?;
    let end = (start..lines.len())
        .find(|&index| !lines[index].starts_with(block.prefix))
        .unwrap_or(lines.len());
    Ok(format!(
        "{}{}{}",
        lines[..start].concat(),
        (block.contents)(),
        lines[end..].concat()
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// `cargo test` alone catches a stale schema or exit-code table.
    #[test]
    fn generated_files_are_fresh() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        if let Err(err) = run(&root, true) {
            panic!("{err}");
        }
    }

    #[test]
    fn a_block_is_replaced_where_it_stands_and_nowhere_else() {
        let dir = std::env::temp_dir().join(format!("xtask-codegen-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("a.md"),
            "| not this |\n### Exit codes\n\n| old |\n| rows |\nafter\n| not this either |\n",
        )
        .unwrap();
        let block = Block {
            after: Some("### Exit codes"),
            prefix: "|",
            contents: || "| new |\n".into(),
        };
        let text = with_block(&dir, "a.md", &block).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            text,
            "| not this |\n### Exit codes\n\n| new |\nafter\n| not this either |\n"
        );
    }
}

//! The MCP handler: tools that run `checkpoint` commands, a resource per workflow (its state and
//! its journal) and the resume plan as a prompt.

use std::{
    ffi::OsString,
    io::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
};

use checkpoint_contract::{
    diagnostic::mcp,
    document::{Listed, Listing},
    exit_code,
};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
        PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig,
        Tool, ToolAnnotations,
    },
    service::RequestContext,
};
use serde::Deserialize as _;
use serde_json::{Value, json};

use crate::{
    invoke::{Cli, CliError},
    summary, tools,
};

/// The instructions a client may show the model when the server connects.
const INSTRUCTIONS: &str = "These tools keep the state of a long, multi-phase workflow on disk so \
that it survives crashes, rate limits and compactions. Prefer them to running `checkpoint` \
through a shell. At the start of a session, call `resume` (or `status`); then `start` a phase, \
record `progress` after each meaningful step, and `complete` it with its artifacts. Approving or \
rejecting an approval gate is the user's decision: there is no tool for it.";

/// The URI scheme of the resources: `checkpoint://<workflow>/state` and `…/journal`.
const SCHEME: &str = "checkpoint://";

/// The server: the `checkpoint` command line it runs, and its tools.
#[derive(Clone)]
pub(crate) struct Server {
    cli: Cli,
    /// The checkpoint directory whose workflows are resources.
    store_root: PathBuf,
    tools: Arc<Vec<tools::ToolDef>>,
}

impl Server {
    pub(crate) fn new(cli: Cli, store_root: PathBuf) -> Self {
        Self {
            cli,
            store_root,
            tools: Arc::new(tools::all()),
        }
    }

    async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        let Some(tool) = self.tools.iter().find(|tool| tool.name == name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                Some(json!({ "tools": self.tools.iter().map(|t| t.name).collect::<Vec<_>>() })),
            ));
        };
        let mut invocation = match tool.invocation(arguments) {
            Ok(invocation) => invocation,
            Err(err) => {
                return Ok(tool_error(&CliError {
                    message: format!("invalid arguments for `{name}`: {err}"),
                    code: Some(mcp::INVALID_ARGUMENTS.into()),
                    hint: Some(format!(
                        "the input schema of `{name}` lists its arguments and their types"
                    )),
                    exit_code: None,
                }));
            }
        };
        // A plan object goes to the command line as a file; it lives until the command is done.
        let plan_file = match invocation.plan.take() {
            Some(plan) => match write_plan(&plan) {
                Ok(file) => {
                    let mut arg = OsString::from("--plan=");
                    arg.push(file.path());
                    invocation.args.insert(1, arg);
                    Some(file)
                }
                Err(err) => return Ok(tool_error(&err)),
            },
            None => None,
        };
        let result = self
            .cli
            .run_json(
                invocation.workflow.as_deref(),
                &invocation.args,
                invocation.stdin.take(),
            )
            .await;
        drop(plan_file);
        Ok(match result {
            Ok((document, warnings)) => {
                let text = summary::describe(
                    &invocation.headline,
                    &document,
                    &warnings,
                    tool.shows_document,
                );
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(document);
                result
            }
            Err(err) => tool_error(&err),
        })
    }

    /// The workflows of this project's checkpoint directory, by `checkpoint list`.
    async fn workflows(&self) -> Result<Vec<Listed>, McpError> {
        let (document, _) = self
            .cli
            .run_json(None, &["list".into()], None)
            .await
            .map_err(|err| protocol_error(&err))?;
        let listing = Listing::deserialize(&document)
            .map_err(|err| protocol_error(&CliError::unreadable("list", &err)))?;
        let root = canonical(&self.store_root);
        Ok(listing
            .workflows
            .into_iter()
            .filter(|workflow| {
                Path::new(&workflow.dir)
                    .parent()
                    .is_some_and(|parent| canonical(parent) == root)
            })
            .collect())
    }

    async fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let not_found = || {
            McpError::resource_not_found(
                format!("no resource `{uri}`"),
                Some(
                    json!({ "hint": "list the resources: `checkpoint://<workflow>/state` or `checkpoint://<workflow>/journal`" }),
                ),
            )
        };
        let (workflow, part) = uri
            .strip_prefix(SCHEME)
            .and_then(|rest| rest.split_once('/'))
            .ok_or_else(not_found)?;
        let text = match part {
            "state" => self
                .cli
                .run("json", Some(workflow), &["show".into()])
                .await
                .map(|printed| printed.stdout),
            "journal" => self
                .cli
                .run("json", Some(workflow), &["log".into()])
                .await
                .map(|printed| printed.stdout),
            _ => return Err(not_found()),
        }
        .map_err(|err| match err.exit_code {
            Some(code) if code == i32::from(exit_code::NOT_FOUND) => {
                McpError::resource_not_found(err.to_text(), Some(err.to_json()))
            }
            _ => protocol_error(&err),
        })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("application/json"),
        ]))
    }

    async fn resume_prompt(&self, workflow: Option<&str>) -> Result<GetPromptResult, McpError> {
        let printed = self
            .cli
            .run("prompt", workflow, &["resume".into(), "--dry-run".into()])
            .await
            .map_err(|err| McpError::invalid_params(err.to_text(), Some(err.to_json())))?;
        let text = format!(
            "{}\n\nWith the `checkpoint` MCP tools available, record state through them \
             (`resume` with `apply: true` writes the recoveries above); continue from the next \
             action.",
            printed.stdout.trim_end()
        );
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Where the workflow stopped and what to do next"),
        )
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("checkpoint", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self
            .tools
            .iter()
            .map(|tool| {
                let mut annotations = ToolAnnotations::default();
                annotations.read_only_hint = Some(tool.read_only);
                annotations.destructive_hint = Some(false);
                let mut out = Tool::new(tool.name, tool.description, tool.input_schema.clone());
                out.annotations = Some(annotations);
                out
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.call(&request.name, arguments).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut resources = Vec::new();
        for workflow in self.workflows().await? {
            let id = &workflow.id;
            let status = workflow.status.as_deref().unwrap_or("?");
            resources.push(
                Resource::new(format!("{SCHEME}{id}/state"), format!("{id} state"))
                    .with_description(format!(
                        "The state of workflow `{id}` ({status}): phases, tasks, context"
                    ))
                    .with_mime_type("application/json"),
            );
            resources.push(
                Resource::new(format!("{SCHEME}{id}/journal"), format!("{id} journal"))
                    .with_description(format!("Every transition of workflow `{id}`, in order"))
                    .with_mime_type("application/json"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.read(&request.uri).await.map(Into::into)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let mut workflow = PromptArgument::new("workflow")
            .with_description("The workflow id; omit it when one workflow is unfinished");
        workflow.required = Some(false);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "resume",
            Some("Resume the interrupted workflow: where it stopped and the next action"),
            Some(vec![workflow]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != "resume" {
            return Err(McpError::invalid_params(
                format!("unknown prompt `{}`", request.name),
                Some(json!({ "prompts": ["resume"] })),
            ));
        }
        let workflow = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("workflow"))
            .and_then(Value::as_str)
            .filter(|id| !id.trim().is_empty());
        self.resume_prompt(workflow).await.map(Into::into)
    }
}

/// A failed command as an MCP tool error: the CLI's message, code and hint.
fn tool_error(err: &CliError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(err.to_text())]);
    result.structured_content = Some(err.to_json());
    result
}

/// A failed command as a JSON-RPC error, for requests that are not tool calls.
fn protocol_error(err: &CliError) -> McpError {
    McpError::internal_error(err.to_text(), Some(err.to_json()))
}

/// Writes a plan object to a temporary JSON file for `checkpoint init --plan`.
fn write_plan(plan: &Value) -> Result<tempfile::NamedTempFile, CliError> {
    let io_error = |err: std::io::Error| CliError {
        message: format!("failed to write the plan to a temporary file: {err}"),
        code: Some(mcp::PLAN_FILE.into()),
        hint: None,
        exit_code: None,
    };
    let mut file = tempfile::Builder::new()
        .prefix("checkpoint-plan-")
        .suffix(".json")
        .tempfile()
        .map_err(io_error)?;
    file.write_all(plan.to_string().as_bytes())
        .and_then(|()| file.flush())
        .map_err(io_error)?;
    Ok(file)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

//! Claude Code's hook payloads, typed: the events `checkpoint hook` handles, the fields each
//! event's payload must carry (a payload without them changes nothing), the fields read when
//! present, and the tool names the hooks act on.
//!
//! Unknown fields are ignored. A field read only when present never makes a payload unusable:
//! one of another type reads as absent, as before the payloads were typed.

use std::{fmt, marker::PhantomData, str::FromStr};

use serde::{
    Deserialize, Deserializer,
    de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer},
};

/// A Claude Code hook event that `checkpoint hook` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookEvent {
    SessionStart,
    PreCompact,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SubagentStart,
    SubagentStop,
    StopFailure,
    /// Accepted, and does nothing.
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order they are documented.
    pub(crate) const ALL: [HookEvent; 10] = [
        Self::SessionStart,
        Self::PreCompact,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::Stop,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::StopFailure,
        Self::SessionEnd,
    ];

    /// The event's name in Claude Code's hook configuration and payloads.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::PreCompact => "PreCompact",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::Stop => "Stop",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::StopFailure => "StopFailure",
            Self::SessionEnd => "SessionEnd",
        }
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HookEvent {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|event| event.name() == value)
            .ok_or_else(|| format!("unknown hook event `{value}`; nothing recorded"))
    }
}

/// A tool the hooks act on, by the name Claude Code gives it in `tool_name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// Dispatches a sub-agent (named `Agent` by 2.1.197 and later).
    Agent,
    /// Runs a shell command (a `git commit` records commits).
    Bash,
    /// Writes a file at `file_path` or `notebook_path`: `Write`, `Edit`, `MultiEdit`,
    /// `NotebookEdit`.
    FileEdit,
    /// Any other tool.
    Other,
}

impl Tool {
    /// The tool named `name`.
    pub(crate) fn named(name: &str) -> Self {
        match name {
            "Agent" => Self::Agent,
            "Bash" => Self::Bash,
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => Self::FileEdit,
            _ => Self::Other,
        }
    }
}

/// The fields every payload carries.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope {
    pub(crate) hook_event_name: String,
    pub(crate) session_id: String,
    pub(crate) cwd: String,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) transcript_path: Option<String>,
}

/// `SessionStart`.
#[derive(Debug, Deserialize)]
pub(crate) struct SessionStart {
    /// `startup`, `resume`, `clear` or `compact`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) source: Option<String>,
}

/// `PreCompact`.
#[derive(Debug, Deserialize)]
pub(crate) struct PreCompact {
    /// `manual` or `auto`.
    pub(crate) trigger: String,
}

/// `PreToolUse` and `PostToolUse`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolUse {
    pub(crate) tool_name: String,
    #[serde(default, deserialize_with = "input_and_raw")]
    pub(crate) tool_input: ToolInput,
    /// Only in `PostToolUse`.
    #[serde(default, deserialize_with = "response_or_text")]
    pub(crate) tool_response: ToolResponse,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
}

impl ToolUse {
    pub(crate) fn tool(&self) -> Tool {
        Tool::named(&self.tool_name)
    }
}

/// The fields of a tool call's input that the hooks read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolInput {
    /// `Write`, `Edit`, `MultiEdit`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) file_path: Option<String>,
    /// `NotebookEdit`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) notebook_path: Option<String>,
    /// `Bash`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) command: Option<String>,
    /// `Agent`: the dispatch prompt.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) prompt: Option<String>,
    /// `Agent`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) description: Option<String>,
    /// The whole input as the client sent it (an MCP tool's arguments).
    #[serde(skip)]
    pub(crate) raw: serde_json::Value,
}

/// The fields of a tool call's response that the hooks read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolResponse {
    /// `Bash`: the command was interrupted.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub(crate) interrupted: Option<bool>,
    /// `Agent`: the sub-agent's id.
    #[serde(default, rename = "agentId", deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
    /// `Agent`: `completed` once the sub-agent has ended.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) status: Option<String>,
    /// `Agent`: the sub-agent's result, as content blocks.
    #[serde(default, deserialize_with = "lenient_seq")]
    pub(crate) content: Vec<ContentBlock>,
    /// `Bash`: what the command printed.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) stdout: Option<String>,
    /// `Bash`: what the command printed on stderr.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) stderr: Option<String>,
    /// An MCP tool's result, which the client sends as a string.
    #[serde(skip)]
    pub(crate) text: Option<String>,
}

/// A content block of an `Agent` call's result.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ContentBlock {
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) text: Option<String>,
}

/// `PostToolUseFailure`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolFailure {
    pub(crate) tool_name: String,
    pub(crate) error: String,
    #[serde(default, deserialize_with = "input_and_raw")]
    pub(crate) tool_input: ToolInput,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
}

impl ToolFailure {
    pub(crate) fn tool(&self) -> Tool {
        Tool::named(&self.tool_name)
    }
}

/// `Stop` and `SubagentStop`.
#[derive(Debug, Deserialize)]
pub(crate) struct Stop {
    /// The session goes on because a `Stop` hook blocked it already.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub(crate) stop_hook_active: Option<bool>,
    /// `SubagentStop`: the sub-agent that stopped.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
    /// `SubagentStop`: its last message.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) last_assistant_message: Option<String>,
}

/// `SubagentStart`.
#[derive(Debug, Deserialize)]
pub(crate) struct SubagentStart {
    pub(crate) agent_id: String,
}

/// `StopFailure`: an API failure ended the turn.
#[derive(Debug, Deserialize)]
pub(crate) struct StopFailure {
    pub(crate) error: String,
    /// Set when the failure was a sub-agent's.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
}

/// A payload, by event.
#[derive(Debug)]
pub(crate) enum Payload {
    SessionStart(SessionStart),
    PreCompact(PreCompact),
    PreToolUse(ToolUse),
    PostToolUse(ToolUse),
    PostToolUseFailure(ToolFailure),
    Stop(Stop),
    SubagentStart(SubagentStart),
    SubagentStop(Stop),
    StopFailure(StopFailure),
    SessionEnd,
}

impl Payload {
    /// Parses the payload of `event` from `bytes`, a JSON object; the error says why it is not
    /// one this event's hook can act on.
    pub(crate) fn parse(event: HookEvent, bytes: &[u8]) -> Result<(Envelope, Payload), String> {
        if bytes.trim_ascii().is_empty() {
            return Err("no payload on stdin; nothing recorded".into());
        }
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
                Ok(_) => "the payload on stdin is not a JSON object; nothing recorded".into(),
                Err(err) => format!("the payload on stdin is not JSON ({err}); nothing recorded"),
            });
        }
        let envelope: Envelope = parse(event, bytes)?;
        if envelope.hook_event_name != event.name() {
            return Err(format!(
                "the payload is for `{}`, not `{event}`; nothing recorded",
                envelope.hook_event_name
            ));
        }
        let payload = match event {
            HookEvent::SessionStart => Payload::SessionStart(parse(event, bytes)?),
            HookEvent::PreCompact => Payload::PreCompact(parse(event, bytes)?),
            HookEvent::PreToolUse => Payload::PreToolUse(parse(event, bytes)?),
            HookEvent::PostToolUse => Payload::PostToolUse(parse(event, bytes)?),
            HookEvent::PostToolUseFailure => Payload::PostToolUseFailure(parse(event, bytes)?),
            HookEvent::Stop => Payload::Stop(parse(event, bytes)?),
            HookEvent::SubagentStart => Payload::SubagentStart(parse(event, bytes)?),
            HookEvent::SubagentStop => Payload::SubagentStop(parse(event, bytes)?),
            HookEvent::StopFailure => Payload::StopFailure(parse(event, bytes)?),
            HookEvent::SessionEnd => Payload::SessionEnd,
        };
        Ok((envelope, payload))
    }
}

fn parse<'de, T: Deserialize<'de>>(event: HookEvent, bytes: &'de [u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|err| {
        if err.is_data() {
            format!("the payload is not a `{event}` payload we can use ({err}); nothing recorded")
        } else {
            format!("the payload on stdin is not JSON ({err}); nothing recorded")
        }
    })
}

/// A string, or `None` for a value of any other type.
fn lenient_str<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_any(Lenient::<String>(PhantomData))
}

/// A boolean, or `None` for a value of any other type.
fn lenient_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    deserializer.deserialize_any(Lenient::<bool>(PhantomData))
}

/// A tool's input: its fields read as [`ToolInput`]'s (leniently), and the whole value kept.
fn input_and_raw<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolInput, D::Error> {
    let raw = serde_json::Value::deserialize(deserializer)?;
    let mut input = match &raw {
        serde_json::Value::Object(_) => ToolInput::deserialize(&raw).unwrap_or_default(),
        _ => ToolInput::default(),
    };
    input.raw = raw;
    Ok(input)
}

/// A tool's response: an object's fields read as [`ToolResponse`]'s (leniently), or a string
/// (an MCP tool's result) as its text.
fn response_or_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolResponse, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        raw @ serde_json::Value::Object(_) => ToolResponse::deserialize(&raw).unwrap_or_default(),
        serde_json::Value::String(text) => ToolResponse {
            text: Some(text),
            ..ToolResponse::default()
        },
        _ => ToolResponse::default(),
    })
}

/// An array's objects (other elements left out), or none for a value of any other type.
fn lenient_seq<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(deserializer
        .deserialize_any(Lenient::<Vec<T>>(PhantomData))?
        .unwrap_or_default())
}

/// An object's fields as `T`.
struct Object<T>(T);

/// Visits a value of any type, keeping it only when it has the shape of `T`.
struct Lenient<T>(PhantomData<T>);

impl<'de, T> Lenient<T> {
    fn skip_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<T>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn skip_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// The visits that keep nothing: every scalar of another type than the one kept.
macro_rules! skip_scalars {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method<E: de::Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(None)
        })*
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

impl<'de> Visitor<'de> for Lenient<String> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    skip_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de> Visitor<'de> for Lenient<bool> {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    skip_scalars!(visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Lenient<Object<T>> {
    type Value = Option<Object<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    skip_scalars!(visit_bool: bool, visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|value| Some(Object(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for Lenient<Vec<T>> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    skip_scalars!(visit_bool: bool, visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(element) = seq.next_element::<ObjectOrNothing<T>>()? {
            kept.extend(element.0);
        }
        Ok(Some(kept))
    }
}

/// An array element: an object as `T`, anything else left out.
struct ObjectOrNothing<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOrNothing<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = deserializer.deserialize_any(Lenient::<Object<T>>(PhantomData))?;
        Ok(Self(object.map(|object| object.0)))
    }
}

#[cfg(test)]
mod tests;

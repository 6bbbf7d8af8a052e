//! Phase plans: what `checkpoint init` turns into a workflow, from `--phase` specs or a JSON or
//! TOML plan file, with the phase graph checked to be a DAG.

use std::{path::Path, sync::Arc};

use chrono::{DateTime, Utc};
use miette::{NamedSource, SourceOffset};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    error::{Error, Result, showable},
    id::{PhaseId, WorkflowId},
    model::{
        ContextSummary, GitContext, Phase, SCHEMA_VERSION, Workflow, WorkflowStatus, validate_graph,
    },
};

/// A plan: the phases of a new workflow, with optional metadata.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// A one-line title.
    #[serde(default)]
    pub title: Option<String>,
    /// A longer description.
    #[serde(default)]
    pub description: Option<String>,
    /// The workflow kind, for example `implement`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Where `checkpoint run --all` takes this workflow among the project's: higher first, none
    /// as 0.
    #[serde(default)]
    pub priority: Option<i32>,
    /// The phases, in order.
    pub phases: Vec<PhasePlan>,
}

/// One phase of a plan.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhasePlan {
    /// The phase id.
    pub id: PhaseId,
    /// A human name (defaults to the id).
    #[serde(default)]
    pub name: Option<String>,
    /// What the phase is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Phases that must be done first.
    #[serde(default, alias = "depends_on")]
    pub dependencies: Vec<PhaseId>,
    /// Artifact paths the phase must produce.
    #[serde(default)]
    pub outputs: Vec<String>,
    /// Whether completing the phase needs a person's approval.
    #[serde(default)]
    pub requires_approval: bool,
    /// The phase to go back to when this one fails.
    #[serde(default)]
    pub on_failure: Option<PhaseId>,
    /// How many failed attempts before a person must decide.
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Patterns that add to (or, with a leading `!`, remove from) what counts as an effect,
    /// for the whole workflow: globs over a Bash command (`./scripts/deploy.sh*`) or an MCP
    /// tool's name (`mcp__slack__*`).
    #[serde(default)]
    pub effects: Vec<String>,
    /// Paths the writer holding the phase (the session that started it, or the sub-agent it was
    /// dispatched to) holds while it is in progress: globs over paths from the checkout's top
    /// (`src/parser/*`, `src/**/*.rs`, a directory `docs/`); other writers' writes there are
    /// refused.
    #[serde(default)]
    pub claims: Vec<String>,
}

impl PhasePlan {
    /// Parses a `--phase` spec: `id` or `id:dep,dep`.
    pub fn from_spec(spec: &str) -> Result<Self> {
        let (id, deps) = match spec.split_once(':') {
            Some((id, deps)) => (id, deps),
            None => (spec, ""),
        };
        let dependencies = deps
            .split(',')
            .map(str::trim)
            .filter(|dep| !dep.is_empty())
            .map(PhaseId::new)
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            id: PhaseId::new(id.trim())?,
            name: None,
            description: None,
            dependencies,
            outputs: Vec::new(),
            requires_approval: false,
            on_failure: None,
            max_attempts: None,
            effects: Vec::new(),
            claims: Vec::new(),
        })
    }
}

impl Plan {
    /// Parses a plan file's contents; TOML when the path ends in `.toml`, JSON otherwise.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let is_toml = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("toml"));
        let (message, span) = if is_toml {
            match toml::from_str::<Plan>(text) {
                Ok(plan) => return plan.with_claims_checked(path),
                Err(err) => (err.message().to_owned(), err.span().map(|span| span.into())),
            }
        } else {
            match serde_json::from_str::<Plan>(text) {
                Ok(plan) => return plan.with_claims_checked(path),
                Err(err) => {
                    let offset = SourceOffset::from_location(text, err.line(), err.column());
                    (err.to_string(), Some((offset.offset(), 0).into()))
                }
            }
        };
        Err(Error::PlanParse {
            path: path.to_owned(),
            message,
            source_code: Arc::new(NamedSource::new(
                path.display().to_string(),
                text.to_owned(),
            )),
            span: span.filter(|_| showable(text)),
        })
    }

    /// The plan with each phase's claims in their one form ([`claim_glob`]), or
    /// the first bad one as an error naming the file, the phase and the fix.
    fn with_claims_checked(mut self, path: &Path) -> Result<Self> {
        for phase in &mut self.phases {
            for claim in &mut phase.claims {
                *claim = claim_glob(claim).map_err(|why| Error::InvalidPlan {
                    message: format!(
                        "plan file `{}`: phase `{}` claims `{claim}`, {why}",
                        path.display(),
                        phase.id
                    ),
                    help: CLAIM_HELP.to_owned(),
                })?;
            }
        }
        Ok(self)
    }

    /// Checks the phase graph: unique ids, known dependencies, no cycles.
    pub fn validate(&self) -> Result<()> {
        validate_graph(self.phases.iter().map(|phase| {
            (
                &phase.id,
                phase.dependencies.as_slice(),
                phase.on_failure.as_ref(),
            )
        }))
    }

    /// Builds the initial state of a new workflow from this plan.
    pub fn into_workflow(
        self,
        id: WorkflowId,
        git: Option<GitContext>,
        now: DateTime<Utc>,
    ) -> Result<Workflow> {
        self.validate()?;
        let phases = self
            .phases
            .into_iter()
            .map(|plan| {
                let mut phase = Phase::new(plan.id, plan.dependencies);
                if let Some(name) = plan.name {
                    phase.name = name;
                }
                phase.description = plan.description;
                phase.outputs = plan.outputs;
                phase.requires_approval = plan.requires_approval;
                phase.on_failure = plan.on_failure;
                phase.max_attempts = plan.max_attempts;
                phase.effects = plan.effects;
                phase.claims = plan.claims;
                phase
            })
            .collect();
        Ok(Workflow {
            schema_version: SCHEMA_VERSION,
            id,
            title: self.title,
            description: self.description,
            kind: self.kind,
            status: WorkflowStatus::Pending,
            created_at: now,
            updated_at: now,
            seq: 0,
            git,
            context: ContextSummary::default(),
            phases,
            pause: None,
            last_activity: None,
            replans: Vec::new(),
            priority: self.priority,
            handoff: None,
            extensions: serde_json::Map::new(),
        })
    }
}

/// What to write instead of a bad claim.
pub const CLAIM_HELP: &str = "write a claim as a glob over paths from the checkout's top: `src/parser/*`, `src/**/*.rs`, or a directory `docs/`";

/// A claim's glob in its one form, or why it is refused: an empty one, an absolute path or one
/// that leaves the project (`..`), one that holds the whole checkout (`*`, `**`, `.`). `./` in
/// front and `/` behind (a directory) are dropped: a directory holds everything under it.
pub fn claim_glob(glob: &str) -> Result<String, String> {
    let trimmed = glob.trim();
    if trimmed.is_empty() {
        return Err("an empty claim".to_owned());
    }
    if trimmed.starts_with('/') || trimmed.starts_with('~') {
        return Err(
            "an absolute path: a claim is a path from the checkout's top, inside the project"
                .to_owned(),
        );
    }
    if trimmed.split('/').any(|part| part == "..") {
        return Err("a path outside the project (`..`)".to_owned());
    }
    let parts: Vec<&str> = trimmed
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.iter().all(|part| part.chars().all(|c| c == '*')) {
        return Err(
            "which holds the whole checkout: every other writer would be refused everywhere"
                .to_owned(),
        );
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(specs: &[&str]) -> Result<Plan> {
        let phases = specs
            .iter()
            .map(|spec| PhasePlan::from_spec(spec))
            .collect::<Result<_>>()?;
        let plan = Plan {
            phases,
            ..Plan::default()
        };
        plan.validate()?;
        Ok(plan)
    }

    #[track_caller]
    fn check_err(specs: &[&str], expect: &str) {
        let err = plan(specs).unwrap_err();
        assert_eq!(err.to_string(), expect);
    }

    #[test]
    fn accepts_a_dag() {
        let plan = plan(&["design", "build:design", "docs:design", "ship:build,docs"]).unwrap();
        assert_eq!(plan.phases[3].dependencies.len(), 2);
    }

    #[test]
    fn rejects_bad_graphs() {
        check_err(
            &["a:b"],
            "invalid plan: phase `a` depends on unknown phase `b`",
        );
        check_err(
            &["a:a"],
            "invalid plan: the dependencies form a cycle: a -> a",
        );
        check_err(
            &["a:c", "b:a", "c:b"],
            "invalid plan: the dependencies form a cycle: a -> c -> b -> a",
        );
        check_err(&["a", "a"], "invalid plan: phase `a` is declared twice");
        check_err(&[], "invalid plan: the plan has no phases");
        check_err(&["../x"], "invalid phase id `../x`: it contains `..`");
    }

    #[test]
    fn parses_json_and_toml() {
        let json = r#"{"title": "T", "phases": [{"id": "a"}, {"id": "b", "dependencies": ["a"], "outputs": ["b.md"], "requires_approval": true}]}"#;
        let from_json = Plan::parse(Path::new("plan.json"), json).unwrap();
        let toml = "title = \"T\"\n[[phases]]\nid = \"a\"\n[[phases]]\nid = \"b\"\ndependencies = [\"a\"]\noutputs = [\"b.md\"]\nrequires_approval = true\n";
        let from_toml = Plan::parse(Path::new("plan.toml"), toml).unwrap();
        assert_eq!(from_json, from_toml);
    }

    /// A phase's claims are kept in their one form; a bad one, in JSON or TOML, is an error
    /// naming the file, the phase, the claim and the fix.
    #[test]
    fn claims_are_checked_when_a_plan_is_parsed() {
        let json = r#"{"phases": [{"id": "a", "claims": ["./src/", "docs/*.md"]}]}"#;
        let plan = Plan::parse(Path::new("plan.json"), json).unwrap();
        assert_eq!(plan.phases[0].claims, ["src", "docs/*.md"]);
        let workflow = plan
            .into_workflow(
                WorkflowId::new("w").unwrap(),
                None,
                DateTime::<Utc>::UNIX_EPOCH,
            )
            .unwrap();
        assert_eq!(workflow.phases[0].claims, ["src", "docs/*.md"]);
        assert_eq!(workflow.fresh().phases[0].claims, ["src", "docs/*.md"]);
        for (path, text) in [
            (
                "plan.json",
                r#"{"phases": [{"id": "a", "claims": ["../x"]}]}"#,
            ),
            ("plan.toml", "[[phases]]\nid = \"a\"\nclaims = [\"../x\"]\n"),
        ] {
            let err = Plan::parse(Path::new(path), text).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "invalid plan: plan file `{path}`: phase `a` claims `../x`, a path outside the project (`..`)"
                )
            );
            let help = miette::Diagnostic::help(&err).unwrap().to_string();
            assert!(help.contains("src/**/*.rs"), "{help}");
        }
    }

    #[test]
    fn parse_errors_point_at_the_field() {
        let err = Plan::parse(
            Path::new("p.json"),
            "{\"phases\": [{\"id\": \"a\", \"colour\": 1}]}",
        )
        .unwrap_err();
        let Error::PlanParse { message, span, .. } = err else {
            panic!("{err:?}")
        };
        assert!(message.contains("unknown field `colour`"), "{message}");
        assert!(span.is_some());
    }
}

//! The catalogue (`harness/gate_selftest/catalogue.toml`): the gates, the edits with their steps
//! and expectations, and the checks a catalogue must pass before anything runs.
use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;
use serde::Deserialize;

/// The catalogue file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// The gates by name.
    pub gate: BTreeMap<String, Gate>,
    /// The edits, in the order they run.
    pub edit: Vec<Entry>,
}

/// One gate: how to run it in the scratch worktree.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// What the gate is (shown by `--list`).
    pub description: String,
    /// The command (placeholders: `{aot}`, `{base}`, `{repo}`; in edit steps also `{newest:T}`,
    /// `{next:T}`, `{newest_number:T}` and `{next_number:T}`: target T's newest compiled golden
    /// version and the one after, see `expand_versions`). It catches an edit when it exits
    /// non-zero.
    pub command: Vec<String>,
    /// A build to run first (e.g. `cargo test --no-run ...`): when it fails the edit does not
    /// compile, which is a broken catalogue entry, not a catch.
    #[serde(default)]
    pub prebuild: Vec<String>,
}

/// Whether an edit must be caught or must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Breaks the compiler/runtime contract: the expected gates must catch it.
    Break,
    /// Keeps the contract: every gate it runs must pass.
    Safe,
}

/// One catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Unique name (used by `--only` and in the score table).
    pub name: String,
    /// Break or safe.
    pub kind: Kind,
    /// What the edit does and why it is (or is not) a break.
    pub summary: String,
    /// Where it comes from (e.g. "issue 11 blind spot 3").
    #[serde(default)]
    pub origin: String,
    /// In the `--quick` subset.
    #[serde(default)]
    pub quick: bool,
    /// Gates to run, by name.
    pub gates: Vec<String>,
    /// For breaks: the gates that must catch it and a fragment of what each must say.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// The edit, applied in order.
    pub step: Vec<Step>,
}

/// A gate that must catch a break, and a fragment its output must contain.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Gate name.
    pub gate: String,
    /// Fragment of the gate's output (case-sensitive), naming the broken construct.
    pub says: String,
}

/// One step of an edit.
#[derive(Debug, Deserialize)]
#[serde(tag = "do", rename_all = "lowercase", deny_unknown_fields)]
pub enum Step {
    /// Replace the one occurrence of `find` in `file` (relative to the repository) by `with`.
    /// `find` must occur exactly once, so a stale entry fails loudly instead of editing nothing.
    Replace {
        /// File relative to the repository root.
        file: String,
        /// Text to find (exactly one occurrence).
        find: String,
        /// Replacement.
        with: String,
    },
    /// Run a command in the scratch worktree (placeholders as for gates), e.g.
    /// `["{aot}", "schema", "snapshot"]`; it must succeed.
    Run {
        /// Program and arguments, not a shell line; with `{aot}` in it, `aot` is first rebuilt
        /// from the edited tree when an edit made it stale.
        command: Vec<String>,
    },
}

impl Catalogue {
    /// Parses and checks a catalogue (unique names, known gates, expectations only on breaks).
    pub fn parse(text: &str) -> anyhow::Result<Catalogue> {
        let c: Catalogue = toml::from_str(text)?;
        let mut names = BTreeSet::new();
        for (name, g) in &c.gate {
            if g.command.is_empty() {
                bail!("gate {name}: empty command");
            }
        }
        for e in &c.edit {
            if !names.insert(e.name.as_str()) {
                bail!("edit {}: the name is used twice", e.name);
            }
            if e.step.is_empty() {
                bail!("edit {}: no steps", e.name);
            }
            if e.gates.is_empty() {
                bail!("edit {}: no gates", e.name);
            }
            for g in &e.gates {
                if !c.gate.contains_key(g) {
                    bail!("edit {}: unknown gate {g}", e.name);
                }
            }
            match e.kind {
                Kind::Break if e.expect.is_empty() => {
                    bail!(
                        "edit {}: a break must name the gate that catches it",
                        e.name
                    )
                }
                Kind::Safe if !e.expect.is_empty() => {
                    bail!("edit {}: a safe edit expects no gate to catch it", e.name)
                }
                _ => {}
            }
            for x in &e.expect {
                if !e.gates.contains(&x.gate) {
                    bail!(
                        "edit {}: expects gate {} to catch it but does not run it",
                        e.name,
                        x.gate
                    );
                }
                if x.says.is_empty() {
                    bail!("edit {}: empty `says` for gate {}", e.name, x.gate);
                }
            }
            for s in &e.step {
                if let Step::Run { command } = s {
                    if command.is_empty() {
                        bail!("edit {}: a run step with an empty command", e.name);
                    }
                }
            }
        }
        Ok(c)
    }
}

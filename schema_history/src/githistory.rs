//! History without snapshots: where a repository keeps no snapshot history, the history rules
//! (number and name reuse, reserved ranges removed and re-added) read the compared protos' git
//! history instead.
//!
//! The walk follows first parents from the head's commit, bounded by a depth (commits walked)
//! and optionally a date (`--since`): the bot's run time stays bounded on any repository. Each
//! commit costs one object read plus one tree-entry lookup per proto directory; only commits
//! whose proto directories differ from the last state seen are compiled, and every distinct file
//! text is parsed once for the whole walk (a shared parse cache). A state that does not compile,
//! or lacks the root, is skipped: it says nothing about numbers. Each state becomes a
//! pseudo-snapshot named `git COMMIT (DATE)`, oldest first, so that the history rules read it
//! exactly as they read snapshots: a field deleted and later restored with the same name and
//! number is no reuse, a number used a year ago for another name is.
use std::sync::Arc;

use crate::diff::SchemaSpec;
use crate::git::Repo;
use crate::model::Model;
use crate::protos::{normalize_dir, ParseCache, ProtoSources};
use crate::surface::{Extras, History, Snapshot, SnapshotMeta};
use crate::{Date, Error};

/// How far back the git history is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitHistoryBound {
    /// Commits walked at most (first parents).
    pub depth: usize,
    /// Commits older than this day are not read.
    pub since: Option<Date>,
}

impl Default for GitHistoryBound {
    /// 1000 commits, no date bound.
    fn default() -> GitHistoryBound {
        GitHistoryBound {
            depth: 1000,
            since: None,
        }
    }
}

/// The pseudo-snapshots of the compared protos' git history from `start` (a revision; the
/// working tree's `HEAD` when `None`), oldest first. A repository without commits gives an
/// empty history.
pub(crate) fn load(
    repo: &Repo,
    start: Option<&str>,
    spec: &SchemaSpec,
    bound: GitHistoryBound,
) -> Result<History, Error> {
    let Ok(mut commit) = repo.resolve(start.unwrap_or("HEAD")) else {
        return Ok(History::default());
    };
    let dirs: Vec<&str> = spec.proto_dirs.iter().map(|d| normalize_dir(d)).collect();
    let cache = Arc::new(ParseCache::default());
    let mut last_state: Option<Vec<Option<String>>> = None;
    let mut states: Vec<(String, Date, Model)> = Vec::new();
    for _ in 0..bound.depth {
        let Some((parents, time)) = repo.commit_info(&commit)? else {
            break;
        };
        let date = Date::from_days(time.div_euclid(86_400));
        if bound.since.is_some_and(|since| date < since) {
            break;
        }
        let state = repo.path_oids(&commit, &dirs)?;
        if last_state.as_ref() != Some(&state) && state.iter().any(Option::is_some) {
            if let Some(model) = model_at(repo, &commit, spec, &cache) {
                states.push((commit.clone(), date, model));
            }
        }
        last_state = Some(state);
        match parents.into_iter().next() {
            Some(p) => commit = p,
            None => break,
        }
    }
    states.reverse();
    let snapshots = states
        .into_iter()
        .enumerate()
        .map(|(i, (commit, date, model))| {
            let short = commit.get(..10).unwrap_or(&commit).to_owned();
            Snapshot {
                name: format!("git {short} ({date})"),
                meta: SnapshotMeta {
                    seq: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    date,
                    commit: short,
                    dirty: false,
                    root: spec.root.clone(),
                    extras: Extras::default(),
                },
                listing: Vec::new(),
                model,
            }
        })
        .collect();
    Ok(History { snapshots })
}

/// The model of the protos at `commit`, `None` when they do not compile or lack the root.
fn model_at(
    repo: &Repo,
    commit: &str,
    spec: &SchemaSpec,
    cache: &Arc<ParseCache>,
) -> Option<Model> {
    let rev = crate::Revision::Git(commit.to_owned());
    let sources = ProtoSources::load(repo, &rev, &spec.proto_dirs).ok()?;
    let compiled = sources.compile_for_model(&spec.files, commit, cache).ok()?;
    Model::extract(&compiled, &spec.root, &spec.ignorable).ok()
}

//! What a side of a diff is read from, besides `.proto` sources at a revision: a
//! `FileDescriptorSet` image (`protoc --include_imports --include_source_info
//! --descriptor_set_out`, `buf build -o`), nothing at all (the schema is created by the change),
//! and, for the history rules, the git history when there are no snapshots.
use std::path::Path;

use crate::diff::{DiffOptions, SchemaSpec};
use crate::finding::{Finding, Rule};
use crate::git::{Repo, Revision};
use crate::model::Model;
use crate::protos::{Compiled, ProtoSources};
use crate::surface::History;
use crate::Error;

/// The model of a side read from an image file (relative to `repo`, or absolute).
pub(crate) fn image_model(
    repo: &Path,
    image: &Path,
    spec: &SchemaSpec,
    side: &Revision,
) -> Result<Model, Error> {
    let file = if image.is_absolute() {
        image.to_owned()
    } else {
        repo.join(image)
    };
    let Some(bytes) = crate::bounded_read::read_file(&file)? else {
        // The operating system's own words for the missing file.
        let e = std::fs::metadata(&file).err();
        return Err(Error::io(
            &file,
            e.unwrap_or_else(|| std::io::ErrorKind::NotFound.into()),
        ));
    };
    let compiled = Compiled::from_image(&bytes, &image.display().to_string())?;
    spec.model(&compiled, side)
}

/// The first of the compared files (`--file`) the base does not have.
pub(crate) fn missing_file(base: &ProtoSources, files: &[String]) -> Option<String> {
    files.iter().find(|f| !base.has_file(f)).cloned()
}

/// A base that is absent (no protos under the proto directories, not the compared file, no root
/// message) becomes an empty model, and the reason a creation note; other results pass.
pub(crate) fn created(
    base: Result<Option<Model>, Error>,
    spec: &SchemaSpec,
) -> (Result<Option<Model>, Error>, Option<String>) {
    let what = match &base {
        Err(Error::NoProtoFiles { dirs, .. }) => format!("{dirs} has no protos"),
        Err(Error::NoRoot { root, .. }) => format!("`{root}` is not defined"),
        _ => return (base, None),
    };
    let empty = Model {
        root: spec.root.clone(),
        messages: Default::default(),
        enums: Default::default(),
        files: Default::default(),
    };
    (Ok(Some(empty)), Some(what))
}

/// The note that says the schema is new.
pub(crate) fn created_note(what: &str, head: &Model, base_label: &str) -> Finding {
    let root = &head.root;
    Finding::new(
        Rule::SchemaCreated,
        root.clone(),
        format!("`{root}` is created by this change: at the base ({base_label}) {what}"),
        head.messages.get(root).and_then(|m| m.location.clone()),
        "creation is additive: nothing to reserve; the staged-rollout notes say when each new \
         construct may be emitted by default",
    )
}

/// The git history that stands in for snapshots: read when the snapshot history is empty and
/// the base is a git revision (from the base back, bounded by `opts.git_history`).
pub(crate) fn git_history(
    repo: &Repo,
    opts: &DiffOptions,
    snapshots: &History,
) -> Result<Option<History>, Error> {
    if !snapshots.snapshots.is_empty() || opts.git_history.depth == Some(0) {
        return Ok(None);
    }
    let Revision::Git(base) = &opts.base else {
        return Ok(None);
    };
    if opts.base_image.is_some() {
        return Ok(None);
    }
    crate::githistory::load(repo, Some(base), &opts.spec, opts.git_history, opts.today).map(Some)
}

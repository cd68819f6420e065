//! Schema history: dated snapshots of the compatibility surface (data under
//! `schema_history/snapshots/`) and the rules engine behind the pre-merge schema bot.
//!
//! The compatibility surface is everything reachable from the root message
//! (`xla.gpu.GpuExecutableProto`) plus the registered custom-call / FFI / kernel-symbol names,
//! the HLO opcodes the runtime accepts and the runtime's flags with their defaults. This crate
//! owns the surface's canonical listing, the snapshots, the comparison of two surfaces (each
//! compiled from git objects or the working tree with protox, no checkout) against the dated
//! history, the golden census and the waivers, and the reports (text, markdown, json, github).
//!
//! Inputs beyond `proto2` / `proto3` sources: Protobuf Editions files (2023, 2024; `editions`
//! rewrites them line for line into proto2 text for protox and resolves their features per
//! field), `FileDescriptorSet` images for either side, and, where a repository keeps no
//! snapshots, the compared protos' git history for the history rules (`githistory`). A
//! repository policy (`policy`) sets which rules apply and how strictly, per path.
//!
//! It must not know the compiler, the runtime or the HLO crate: the harness, which sees them,
//! hands the non-proto parts of the surface in as plain data ([`Extras`]). It depends on the
//! `proto` crate only for the project's defaults (root message, compat option name).
//!
//! See `docs/compatibility.md` for the rules, the windows and worked examples.
#![forbid(unsafe_code)]

mod bounded_read;
mod census;
mod date;
mod diff;
mod editions;
mod error;
mod fallback;
mod features;
mod finding;
mod flag_rules;
mod git;
mod githistory;
mod golden_store;
mod inputs;
mod kernel_header;
mod model;
mod policy;
mod proto_limits;
mod protos;
mod report;
mod retype;
mod rules;
mod spans;
mod surface;
mod trust;
mod waiver;

pub use bounded_read::{read_file, read_file_limited, read_text, Refusal, MAX_FILE_BYTES};
pub use census::{
    check_index, write_index, Census, Golden, IndexError, IndexOutcome, INDEX_COMMAND, INDEX_FILE,
};
pub use date::Date;
pub use diff::{diff, load_history, newest_extras, snapshot_base, DiffOptions, SchemaSpec};
pub use editions::{Edition, FieldFeatures, Presence};
pub use error::Error;
pub use fallback::{scan as scan_fallbacks, scan_text as scan_fallback_text};
pub use finding::{Finding, Rule, Severity};
pub use git::{Repo, Revision};
pub use githistory::GitHistoryBound;
pub use model::{Enum, EnumValue, Field, Location, Message, Model, WireClass};
pub use policy::{Exception, Level, Policy, DEFAULT_POLICY};
pub use proto_limits::{
    check_source, LimitKind, SourceLimit, MAX_IMPORTS, MAX_NAME_BYTES,
    MAX_NESTING as MAX_PROTO_NESTING, MAX_STATEMENTS,
};
pub use protos::{Compiled, ProtoSources};
pub use report::{render_error, Format, Report, GITHUB_ANNOTATIONS, MARKDOWN_LIMIT};
pub use rules::{windows, wire, Side, BACKWARD_WINDOW_MONTHS, FORWARD_WINDOW_DAYS};
pub use surface::{
    unified_diff, write_snapshot, Extras, FfiAttribute, FlagReaders, History, Listing, LoadPass,
    RegistryName, RuntimeFlag, Snapshot, SnapshotMeta, SnapshotOutcome, Surface,
    DEFAULT_HISTORY_DIR,
};
pub use waiver::{Waiver, Waivers};

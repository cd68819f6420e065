//! The runtime's side of the census, end to end through the rules: a golden whose manifest has no
//! `flag:` or `pass:` entry (v1 manifests predate them) still depends on the flags read for, and
//! the passes applying to, the constructs it uses.
use std::collections::BTreeSet;

use schema_history::{
    windows, Census, Compiled, Date, Extras, FlagReaders, Golden, History, LoadPass, Model,
    ProtoSources, RuntimeFlag, Side,
};

fn date(s: &str) -> Date {
    s.parse().expect("test date")
}

fn model() -> Model {
    let text = "syntax = \"proto3\";\npackage t;\nmessage Root { int32 a = 1; }\n";
    let compiled: Compiled = ProtoSources::from_texts([("t.proto", text.to_owned())])
        .compile(&[], "fixture")
        .expect("fixture compiles");
    Model::extract(&compiled, "t.Root", "t.ignorable").expect("fixture has t.Root")
}

fn extras(num_streams: &str, pass_applies_to: &[&str]) -> Extras {
    Extras {
        runtime_flags: vec![RuntimeFlag {
            name: "num_streams".into(),
            default: num_streams.into(),
            limit: false,
        }],
        flag_readers: vec![FlagReaders {
            flag: "num_streams".into(),
            read_for: vec!["xla.gpu.ThunkProto".into()],
        }],
        load_passes: if pass_applies_to.is_empty() {
            Vec::new()
        } else {
            vec![LoadPass {
                name: "command_buffer_conversion".into(),
                applies_to: pass_applies_to.iter().map(|c| (*c).to_owned()).collect(),
            }]
        },
        ..Extras::default()
    }
    .normalized()
}

fn census(constructs: &[&str], sides: &[&Extras]) -> Census {
    Census {
        goldens: vec![Golden {
            target: "h100_sxm".into(),
            version: 1,
            created: date("2026-11-29"),
            constructs: constructs
                .iter()
                .map(|c| (*c).to_owned())
                .collect::<BTreeSet<_>>(),
        }],
    }
    .with_runtime_dependencies(sides)
}

fn messages(base: &Extras, head: &Extras, census: &Census) -> Vec<String> {
    let m = model();
    windows(
        Side {
            model: &m,
            extras: base,
        },
        Side {
            model: &m,
            extras: head,
        },
        &History::default(),
        census,
        date("2026-12-01"),
    )
    .into_iter()
    .filter(|f| f.rule == schema_history::Rule::BackwardWindow)
    .map(|f| f.message)
    .collect()
}

#[test]
fn changed_default_of_a_flag_a_golden_reads_is_an_error() {
    let (base, head) = (extras("4", &[]), extras("1", &[]));
    let census = census(
        &["xla.gpu.GpuExecutableProto", "xla.gpu.ThunkProto"],
        &[&base, &head],
    );
    assert_eq!(
        messages(&base, &head, &census),
        ["runtime flag `num_streams` changes its default from `4` to `1`, but golden h100_sxm/v1 (created 2026-11-29) depends on it"]
    );
}

#[test]
fn changed_default_of_a_flag_no_golden_reads_passes() {
    let (base, head) = (extras("4", &[]), extras("1", &[]));
    // No thunk at all: the runtime never checks a stream id for this golden.
    let census = census(&["xla.gpu.GpuExecutableProto"], &[&base, &head]);
    assert_eq!(messages(&base, &head, &census), Vec::<String>::new());
}

#[test]
fn removed_load_pass_a_golden_depends_on_is_an_error() {
    let kernel = "xla.gpu.ThunkProto.kernel_thunk";
    let (base, head) = (extras("4", &[kernel]), extras("4", &[]));
    let census = census(&["xla.gpu.ThunkProto", kernel], &[&base, &head]);
    assert_eq!(
        messages(&base, &head, &census),
        ["load-time pass `command_buffer_conversion` is removed, but golden h100_sxm/v1 (created 2026-11-29) depends on it"]
    );
}

#[test]
fn listing_records_flag_readers_and_passes() {
    let e = extras("4", &["xla.gpu.ThunkProto.kernel_thunk"]);
    assert_eq!(
        e.listing(),
        [
            "flag:num_streams flag default 4",
            "flag:num_streams flag read-for xla.gpu.ThunkProto",
            "pass:command_buffer_conversion pass applies-to xla.gpu.ThunkProto.kernel_thunk",
        ]
    );
}

//! The fixture suite: for every rule a breaking and a compliant case (base and head protos,
//! history, census, runtime sources, waivers), each report snapshotted with insta.
//!
//! Bless changed reports with `INSTA_UPDATE=always cargo test -p schema_history --test rules`
//! (or `cargo insta review`), then read the `.snap` diffs before committing them.
use std::collections::BTreeSet;

use schema_history::{
    scan_fallback_text, windows, wire, Census, Compiled, Date, Extras, Finding, Format, Golden,
    History, Model, ProtoSources, RegistryName, Report, RuntimeFlag, Side, Snapshot, SnapshotMeta,
    Waivers,
};

const HEADER: &str = r#"syntax = "proto3";
package t;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool ignorable = 51001; }
"#;

fn date(s: &str) -> Date {
    s.parse().expect("test date")
}

fn model(body: &str) -> Model {
    let text = format!("{HEADER}{body}");
    let compiled: Compiled = ProtoSources::from_texts([("t.proto", text)])
        .compile(&[], "fixture")
        .expect("fixture compiles");
    Model::extract(&compiled, "t.Root", "t.ignorable").expect("fixture has t.Root")
}

fn history(snapshots: &[(&str, &str)]) -> History {
    History {
        snapshots: snapshots
            .iter()
            .enumerate()
            .map(|(i, (day, body))| Snapshot {
                name: format!("{day}-s{}", i + 1),
                meta: SnapshotMeta {
                    seq: i as u32 + 1,
                    date: date(day),
                    commit: format!("s{}", i + 1),
                    dirty: false,
                    root: "t.Root".into(),
                    extras: Extras::default(),
                },
                listing: Vec::new(),
                model: model(body),
            })
            .collect(),
    }
}

fn golden(target: &str, version: u32, created: &str, constructs: &[&str]) -> Golden {
    Golden {
        target: target.into(),
        version,
        created: date(created),
        constructs: constructs
            .iter()
            .map(|c| c.to_string())
            .collect::<BTreeSet<_>>(),
    }
}

struct Case<'a> {
    base: &'a str,
    head: &'a str,
    history: History,
    census: Census,
    base_extras: Extras,
    head_extras: Extras,
    today: Date,
}

impl<'a> Case<'a> {
    fn new(base: &'a str, head: &'a str) -> Case<'a> {
        Case {
            base,
            head,
            history: History::default(),
            census: Census::default(),
            base_extras: Extras::default(),
            head_extras: Extras::default(),
            today: date("2026-11-29"),
        }
    }

    fn findings(&self) -> Vec<Finding> {
        let base = model(self.base);
        let head = model(self.head);
        let mut f = wire(&base, &head, &self.history);
        f.extend(windows(
            Side {
                model: &base,
                extras: &self.base_extras,
            },
            Side {
                model: &head,
                extras: &self.head_extras,
            },
            &self.history,
            &self.census,
            self.today,
        ));
        f
    }

    fn report(&self) -> Report {
        report(self.findings(), Vec::new(), self.today)
    }

    fn text(&self) -> String {
        self.report().render(Format::Text)
    }
}

fn report(
    findings: Vec<Finding>,
    waived: Vec<(Finding, schema_history::Waiver)>,
    today: Date,
) -> Report {
    let mut r = Report {
        base: "base".into(),
        head: "head".into(),
        today,
        findings,
        waived,
    };
    r.sort();
    r
}

fn errors(text: &str) -> usize {
    text.lines().filter(|l| l.contains(": error[")).count()
}

// ---------------------------------------------------------------------------------------------
// Wire rules

#[test]
fn field_deleted_breaking() {
    let c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; }",
        "message Root { int32 a = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn field_deleted_compliant() {
    let c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; }",
        "message Root { reserved 2; reserved \"b\"; int32 a = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn enum_value_deleted_breaking() {
    let c = Case::new(
        "enum Kind { K_UNSET = 0; K_A = 1; K_B = 2; } message Root { Kind kind = 1; }",
        "enum Kind { K_UNSET = 0; K_A = 1; } message Root { Kind kind = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn enum_value_deleted_compliant() {
    let c = Case::new(
        "enum Kind { K_UNSET = 0; K_A = 1; K_B = 2; } message Root { Kind kind = 1; }",
        "enum Kind { reserved 2; reserved \"K_B\"; K_UNSET = 0; K_A = 1; } message Root { Kind kind = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn reserved_removed_breaking() {
    let c = Case::new(
        "message Root { reserved 5, 7 to 9; reserved \"gone\"; int32 a = 1; }",
        "message Root { reserved 5; int32 a = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn reserved_removed_compliant() {
    let c = Case::new(
        "message Root { reserved 5, 7 to 9; reserved \"gone\"; int32 a = 1; }",
        "message Root { reserved 5, 7 to 9, 12; reserved \"gone\", \"more\"; int32 a = 1; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn number_reused_breaking_from_history() {
    // The base lost field 3 without reserving it; only the history remembers `old = 3`.
    let mut c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1; string fresh = 3; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    insta::assert_snapshot!(c.text());
}

#[test]
fn number_reused_breaking_reserved_in_base() {
    let c = Case::new(
        "message Root { reserved 3; int32 a = 1; }",
        "message Root { int32 a = 1; string fresh = 3; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn number_reused_compliant() {
    let mut c = Case::new(
        "message Root { reserved 3; reserved \"old\"; int32 a = 1; }",
        "message Root { reserved 3; reserved \"old\"; int32 a = 1; string fresh = 4; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    insta::assert_snapshot!(c.text());
}

#[test]
fn name_reused_breaking() {
    let mut c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1; int64 old = 9; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    insta::assert_snapshot!(c.text());
}

#[test]
fn name_reused_compliant() {
    let mut c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1; int64 newer = 9; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    insta::assert_snapshot!(c.text());
}

#[test]
fn wire_type_changed_breaking() {
    let c = Case::new(
        "enum E { E0 = 0; E1 = 1; } message Root { int32 a = 1; E e = 2; }",
        "enum E { E0 = 0; E1 = 5; } message Root { string a = 1; E e = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn wire_type_changed_compliant_same_wire_type() {
    // int32 -> int64 keeps the varint encoding: only a type-changed warning.
    let c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int64 a = 1; }",
    );
    let text = c.text();
    assert_eq!(errors(&text), 0, "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn cardinality_changed_breaking() {
    let c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; }",
        "message Root { repeated int32 a = 1; optional int32 b = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn cardinality_changed_compliant() {
    let c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1; repeated int32 a_list = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn oneof_changed_breaking() {
    let c = Case::new(
        "message Root { int32 a = 1; oneof impl { int32 x = 2; int32 y = 3; } }",
        "message Root { oneof impl { int32 a = 1; int32 x = 2; } int32 y = 3; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn oneof_changed_compliant() {
    let c = Case::new(
        "message Root { int32 a = 1; oneof impl { int32 x = 2; } }",
        "message Root { int32 a = 1; oneof impl { int32 x = 2; int32 z = 4; } }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn type_deleted_breaking() {
    let c = Case::new(
        "message Foo { int32 v = 1; } message Bar { int32 v = 1; } message Root { Foo foo = 1; Bar bar = 2; }",
        "message Bar { int32 v = 1; } message Root { Bar foo = 1; Bar bar = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn type_deleted_compliant() {
    // The type goes away together with the (reserved) field that used it.
    let c = Case::new(
        "message Foo { int32 v = 1; } message Root { Foo foo = 1; int32 a = 2; }",
        "message Root { reserved 1; reserved \"foo\"; int32 a = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn renamed_breaking() {
    let c = Case::new(
        "enum E { E0 = 0; OLD = 1; } message Root { int32 a = 1; E e = 2; }",
        "enum E { E0 = 0; NEW = 1; } message Root { int32 alpha = 1; E e = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

#[test]
fn renamed_compliant() {
    let c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1 [deprecated = true]; int32 alpha = 2; }",
    );
    insta::assert_snapshot!(c.text());
}

// ---------------------------------------------------------------------------------------------
// Windows

const BEFORE_C: &str = "message Root { int32 a = 1; }";
const WITH_C: &str =
    "message Root { int32 a = 1; int32 c = 2; int32 hint = 3 [(t.ignorable) = true]; }";

#[test]
fn forward_window_breaking() {
    let mut c = Case::new(WITH_C, WITH_C);
    c.history = history(&[("2026-10-01", BEFORE_C), ("2026-11-24", WITH_C)]);
    c.census.goldens = vec![
        golden("h100", 1, "2026-10-02", &["t.Root.a"]),
        golden(
            "h100",
            2,
            "2026-11-29",
            &["t.Root.a", "t.Root.c", "t.Root.hint"],
        ),
    ];
    insta::assert_snapshot!(c.text());
}

#[test]
fn forward_window_compliant() {
    let mut c = Case::new(WITH_C, WITH_C);
    c.history = history(&[("2026-10-01", BEFORE_C), ("2026-11-15", WITH_C)]);
    c.census.goldens = vec![golden("h100", 2, "2026-11-29", &["t.Root.a", "t.Root.c"])];
    insta::assert_snapshot!(c.text());
}

#[test]
fn forward_window_baseline_counts_as_old() {
    let mut c = Case::new(WITH_C, WITH_C);
    c.history = history(&[("2026-11-28", WITH_C)]);
    c.census.goldens = vec![golden("h100", 1, "2026-11-29", &["t.Root.c"])];
    assert_eq!(c.text().lines().count(), 1, "{}", c.text());
}

#[test]
fn forward_window_opcode_and_registry() {
    let mut c = Case::new(BEFORE_C, BEFORE_C);
    c.history = history(&[("2026-10-01", BEFORE_C)]);
    c.base_extras = Extras {
        opcodes: vec!["add".into()],
        ..Extras::default()
    };
    c.head_extras = Extras {
        opcodes: vec!["add".into(), "tan".into()],
        registry: vec![RegistryName {
            name: "__gpu_topk".into(),
            aliases: vec![],
        }],
        runtime_flags: vec![],
        ..Extras::default()
    };
    c.census.goldens = vec![golden(
        "a100",
        3,
        "2026-11-29",
        &["opcode:tan", "registry:__gpu_topk"],
    )];
    insta::assert_snapshot!(c.text());
}

const WITH_OLD: &str = "message Root { int32 a = 1; int32 legacy = 2; }";
const WITHOUT_OLD: &str = "message Root { reserved 2; reserved \"legacy\"; int32 a = 1; }";

#[test]
fn backward_window_breaking() {
    let mut c = Case::new(WITH_OLD, WITHOUT_OLD);
    c.census.goldens = vec![
        golden("h100", 1, "2026-03-01", &["t.Root.legacy"]),
        golden("h100", 2, "2026-09-15", &["t.Root.legacy", "t.Root.a"]),
        golden("h100", 3, "2026-11-01", &["t.Root.a"]),
    ];
    insta::assert_snapshot!(c.text());
}

#[test]
fn backward_window_compliant() {
    let mut c = Case::new(WITH_OLD, WITHOUT_OLD);
    c.census.goldens = vec![
        golden("h100", 1, "2026-03-01", &["t.Root.legacy"]),
        golden("h100", 2, "2026-05-29", &["t.Root.legacy", "t.Root.a"]),
        golden("h100", 3, "2026-11-01", &["t.Root.a"]),
    ];
    insta::assert_snapshot!(c.text());
}

#[test]
fn backward_window_opcodes_registry_flags() {
    let mut c = Case::new(BEFORE_C, BEFORE_C);
    c.base_extras = Extras {
        opcodes: vec!["add".into(), "rng".into()],
        registry: vec![RegistryName {
            name: "__gpu_sort".into(),
            aliases: vec!["__cpu_sort_legacy".into()],
        }],
        runtime_flags: vec![RuntimeFlag {
            name: "enable_command_buffers".into(),
            default: "true".into(),
        }],
        ..Extras::default()
    };
    c.head_extras = Extras {
        opcodes: vec!["add".into()],
        registry: vec![RegistryName {
            name: "__gpu_sort".into(),
            aliases: vec![],
        }],
        runtime_flags: vec![RuntimeFlag {
            name: "enable_command_buffers".into(),
            default: "false".into(),
        }],
        ..Extras::default()
    };
    c.census.goldens = vec![golden(
        "h100",
        4,
        "2026-10-10",
        &[
            "opcode:rng",
            "registry:__cpu_sort_legacy",
            "flag:enable_command_buffers",
        ],
    )];
    insta::assert_snapshot!(c.text());
}

#[test]
fn backward_window_rename_is_not_a_removal() {
    let mut c = Case::new(
        WITH_OLD,
        "message Root { int32 a = 1; int32 legacy_v2 = 2; }",
    );
    c.census.goldens = vec![golden("h100", 2, "2026-11-01", &["t.Root.legacy"])];
    let text = c.text();
    assert!(!text.contains("backward-window"), "{text}");
    assert!(text.contains("renamed"), "{text}");
}

#[test]
fn staged_rollout_notes() {
    let c = Case::new(
        BEFORE_C,
        "message Extra { int32 v = 1; } message Root { int32 a = 1; Extra extra = 2; int32 hint = 3 [(t.ignorable) = true]; }",
    );
    insta::assert_snapshot!(c.text());
}

// ---------------------------------------------------------------------------------------------
// Fallbacks

#[test]
fn fallback_expiry_breaking() {
    let src = "\
pub fn legacy_kernel_lookup() {}

// Can be removed in june 2027 (6 months window).
pub fn fallback_decode() {}

// Can be removed in January 2026 (6 months backward compatibility window).
pub const LEGACY_NAME: &str = \"x\";

fn register(r: &mut Registry) {
    r.add(\"__gpu_topk\", &[\"__cpu_topk\"]);
}
";
    let mut findings = Vec::new();
    scan_fallback_text(
        "runtime/src/registry.rs",
        src,
        &["__cpu_topk".to_owned()],
        date("2026-11-29"),
        &mut findings,
    );
    insta::assert_snapshot!(report(findings, Vec::new(), date("2026-11-29")).render(Format::Text));
}

#[test]
fn fallback_expiry_compliant() {
    let src = "\
/// Resolves names of artifacts from before the rename.
// Can be removed in May 2027 (6 months backward compatibility window).
#[inline]
pub fn legacy_kernel_lookup() {}

fn register(r: &mut Registry) {
    // Can be removed in June 2027 (6 months backward compatibility window).
    r.add(\"__gpu_topk\", &[\"__cpu_topk\"]);
}
";
    let mut findings = Vec::new();
    scan_fallback_text(
        "runtime/src/registry.rs",
        src,
        &["__cpu_topk".to_owned()],
        date("2026-11-29"),
        &mut findings,
    );
    assert!(findings.is_empty(), "{findings:?}");
}

// ---------------------------------------------------------------------------------------------
// Waivers

const WAIVERS: &str = r#"
[[waiver]]
rule = "field-deleted"
construct = "t.Root.b"
reason = "never emitted by any compiler (#12)"
expires = "2026-12-31"

[[waiver]]
rule = "renamed"
construct = "t.Root.zzz"
reason = "text goldens regenerated"
expires = 2026-10-01

[[waiver]]
rule = "wire-type-changed"
construct = "t.Root.nothing"
reason = "stale"
expires = "2027-01-01"
"#;

#[test]
fn waivers_silence_until_expiry() {
    let c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; }",
        "message Root { int32 a = 1; }",
    );
    let waivers = Waivers::parse(WAIVERS, "schema_history/waivers.toml").expect("waivers parse");
    let (kept, waived) = waivers.apply(c.findings(), c.today);
    let r = report(kept, waived, c.today);
    assert_eq!(r.exit_code(), 1, "the expired waiver is an error");
    insta::assert_snapshot!(r.render(Format::Text));
}

#[test]
fn waiver_expired_does_not_silence() {
    let c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; }",
        "message Root { int32 a = 1; }",
    );
    let text = WAIVERS.replace("2026-12-31", "2026-11-28");
    let waivers = Waivers::parse(&text, "waivers.toml").expect("waivers parse");
    let (kept, waived) = waivers.apply(c.findings(), c.today);
    assert!(waived.is_empty());
    let ids: Vec<&str> = kept.iter().map(|f| f.rule.id()).collect();
    assert!(
        ids.contains(&"field-deleted") && ids.contains(&"waiver-expired"),
        "{ids:?}"
    );
}

#[test]
fn waivers_reject_unknown_rules_and_empty_reasons() {
    let bad = "[[waiver]]\nrule = \"nope\"\nconstruct = \"x\"\nreason = \"r\"\nexpires = \"2027-01-01\"\n";
    assert!(Waivers::parse(bad, "w.toml").is_err());
    let bad = "[[waiver]]\nrule = \"renamed\"\nconstruct = \"x\"\nreason = \" \"\nexpires = \"2027-01-01\"\n";
    assert!(Waivers::parse(bad, "w.toml").is_err());
    let bad =
        "[[waiver]]\nrule = \"renamed\"\nconstruct = \"x\"\nreason = \"r\"\nexpires = \"soon\"\n";
    assert!(Waivers::parse(bad, "w.toml").is_err());
}

// ---------------------------------------------------------------------------------------------
// Output formats

fn mixed_report() -> Report {
    let mut c = Case::new(
        "message Root { int32 a = 1; int32 b = 2; int32 d = 4; }",
        "message Root { int32 alpha = 1; int64 d = 4; }",
    );
    c.census.goldens = vec![golden("h100", 1, "2026-10-01", &["t.Root.b"])];
    c.report()
}

#[test]
fn format_markdown() {
    insta::assert_snapshot!(mixed_report().render(Format::Markdown));
}

#[test]
fn format_json() {
    insta::assert_snapshot!(mixed_report().render(Format::Json));
}

#[test]
fn format_github() {
    insta::assert_snapshot!(mixed_report().render(Format::Github));
}

#[test]
fn exit_codes() {
    assert_eq!(mixed_report().exit_code(), 1);
    assert_eq!(Case::new(BEFORE_C, BEFORE_C).report().exit_code(), 0);
    // Warnings and notes alone do not fail.
    assert_eq!(
        Case::new(
            "message Root { int32 a = 1; }",
            "message Root { int64 b = 1; }"
        )
        .report()
        .exit_code(),
        0
    );
}

#[test]
fn listing_is_canonical() {
    let m = model(
        "enum E { E0 = 0; E1 = 1; reserved 4 to 6; } message Root { reserved 8; reserved \"z\"; \
         int32 a = 1 [(t.ignorable) = true]; optional int32 b = 2; repeated E e = 3; \
         oneof impl { Root r = 5; string s = 6; } map<string, int64> m = 7; }",
    );
    insta::assert_snapshot!(m.listing().join("\n"));
}

#[test]
fn listing_round_trips_through_the_history_model() {
    let m = model(
        "enum E { E0 = 0; E1 = 1; reserved 4 to 6; reserved \"E9\"; } message Root { reserved 8, 10 to 12; \
         reserved \"z\"; int32 a = 1 [(t.ignorable) = true]; optional int32 b = 2; repeated E e = 3; \
         oneof impl { Root r = 5; string s = 6; E en = 9; } map<string, int64> m = 7; sint64 zz = 13; }",
    );
    let listing = m.listing();
    let back = Model::from_listing("t.Root", listing.iter().map(String::as_str));
    assert_eq!(back.listing(), listing);
    for (name, msg) in &m.messages {
        let other = &back.messages[name];
        for (n, f) in &msg.fields {
            let g = &other.fields[n];
            assert_eq!(
                (
                    f.wire,
                    f.repeated,
                    f.presence,
                    f.is_message,
                    &f.oneof,
                    f.ignorable
                ),
                (
                    g.wire,
                    g.repeated,
                    g.presence,
                    g.is_message,
                    &g.oneof,
                    g.ignorable
                ),
                "{name}.{}",
                f.name
            );
        }
    }
}

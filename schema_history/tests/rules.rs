//! The fixture suite: for every rule a breaking and a compliant case (base and head protos,
//! history, census, runtime sources, waivers), each report snapshotted with insta.
//!
//! Bless changed reports with `INSTA_UPDATE=always cargo test -p schema_history --test rules`
//! (or `cargo insta review`), then read the `.snap` diffs before committing them.
use std::collections::BTreeSet;

use schema_history::{
    scan_fallback_text, windows, wire, Census, Compiled, Date, Extras, FfiAttribute, Finding,
    Format, Golden, History, Listing, Model, ProtoSources, RegistryName, Report, Rule, RuntimeFlag,
    Side, Snapshot, SnapshotMeta, Waivers,
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
                listing: Listing::default(),
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
        "message Foo { int32 v = 1; } message Bar { string v = 1; } message Root { Foo foo = 1; Bar bar = 2; }",
        "message Bar { string v = 1; } message Root { Bar foo = 1; Bar bar = 2; }",
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
            limit: false,
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
            limit: false,
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

fn ffi_extras(attributes: &[(&str, &str)]) -> Extras {
    Extras {
        registry: vec![RegistryName {
            name: "cusolver_syevd_ffi".into(),
            aliases: vec!["legacy_syevd".into()],
        }],
        ffi_attributes: attributes
            .iter()
            .map(|(name, ty)| FfiAttribute {
                target: "cusolver_syevd_ffi".into(),
                name: (*name).into(),
                ty: (*ty).into(),
            })
            .collect(),
        ..Extras::default()
    }
}

/// A handler attribute removed, or retyped, while a golden inside the window sets it is an
/// error (those artifacts no longer load: the loader refuses an unknown or mistyped attribute),
/// also when the golden names the handler by a legacy alias; an attribute no golden sets, or
/// one added, is not.
#[test]
fn ffi_attributes_removed_or_retyped_inside_the_window() {
    let mut c = Case::new(BEFORE_C, BEFORE_C);
    c.base_extras = ffi_extras(&[("algorithm", "ui8"), ("lower", "bool"), ("unused", "i64")]);
    c.head_extras = ffi_extras(&[("algorithm", "i32"), ("extra", "bool")]);
    c.census.goldens = vec![golden(
        "h100/handwritten",
        5,
        "2026-11-20",
        &[
            "registry:legacy_syevd",
            "ffi-attr:legacy_syevd.algorithm",
            "ffi-attr:legacy_syevd.algorithm:ui8",
            "ffi-attr:legacy_syevd.lower",
            "ffi-attr:legacy_syevd.lower:bool",
        ],
    )];
    let findings = c.findings();
    let errors: Vec<String> = shown(&findings)
        .into_iter()
        .filter(|f| f.starts_with("error"))
        .collect();
    assert_eq!(
        errors,
        vec![
            "error backward-window ffi-attr:legacy_syevd.algorithm:ui8: `ffi-attr:legacy_syevd.algorithm:ui8` is removed, but golden h100/handwritten/v5 (created 2026-11-20) uses it and today's runtime must load artifacts for 6 months",
            "error backward-window ffi-attr:legacy_syevd.lower: `ffi-attr:legacy_syevd.lower` is removed, but golden h100/handwritten/v5 (created 2026-11-20) uses it and today's runtime must load artifacts for 6 months",
            "error backward-window ffi-attr:legacy_syevd.lower:bool: `ffi-attr:legacy_syevd.lower:bool` is removed, but golden h100/handwritten/v5 (created 2026-11-20) uses it and today's runtime must load artifacts for 6 months",
        ]
    );
}

fn limit_extras(name: &str, default: &str, limit: bool) -> Extras {
    Extras {
        runtime_flags: vec![RuntimeFlag {
            name: name.into(),
            default: default.into(),
            limit,
        }],
        ..Extras::default()
    }
}

/// `severity rule construct: message` of each finding.
fn shown(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| format!("{} {} {}: {}", f.severity, f.rule, f.construct, f.message))
        .collect()
}

#[test]
fn lowered_limit_is_enforced_and_a_raised_one_is_compatible() {
    let mut c = Case::new(BEFORE_C, BEFORE_C);
    c.base_extras = limit_extras("max_while_iterations", "100000000", true);
    c.head_extras = limit_extras("max_while_iterations", "100000", true);
    c.census.goldens = vec![golden(
        "h100",
        4,
        "2026-11-02",
        &["flag:max_while_iterations"],
    )];
    let found = c.findings();
    assert_eq!(
        shown(&found),
        ["error limit-tightened flag:max_while_iterations: runtime limit `max_while_iterations` is lowered from 100000000 to 100000, but golden h100/v4 (created 2026-11-02) depends on it: artifacts that ran under 100000000 would be refused; no waiver silences this"]
    );
    assert_eq!(
        found[0].hint,
        "keep the default at 100000000 (a deployment may set a lower value itself) until 2027-05-02, or raise it instead"
    );
    assert!(found[0].rule.is_enforced());

    // Unmarking the limit in the same change does not hide it: either side's mark counts.
    c.head_extras = limit_extras("max_while_iterations", "100000", false);
    assert_eq!(c.findings()[0].rule, Rule::LimitTightened);

    c.head_extras = limit_extras("max_while_iterations", "200000000", true);
    assert_eq!(shown(&c.findings()), Vec::<String>::new());

    // A flag that is not a limit: any changed default is the backward window's.
    c.base_extras = limit_extras("max_while_iterations", "100000000", false);
    c.head_extras = limit_extras("max_while_iterations", "200000000", false);
    assert_eq!(c.findings()[0].rule, Rule::BackwardWindow);
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

// ---------------------------------------------------------------------------------------------
// Identity by number: renumberings, renames and the age of a construct

/// Every finding of `rule`, as `severity construct: message`.
fn said(findings: &[Finding], rule: &str) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.rule.id() == rule)
        .map(|f| format!("{} {}: {}", f.severity, f.construct, f.message))
        .collect()
}

/// Every rule that fired, as `severity rule construct`, in report order.
fn fired(findings: Vec<Finding>) -> Vec<String> {
    report(findings, Vec::new(), date("2026-11-29"))
        .findings
        .iter()
        .map(|f| format!("{} {} {}", f.severity, f.rule, f.construct))
        .collect()
}

#[test]
fn renumbered_field_is_an_error_even_with_the_old_number_reserved() {
    // Blind spot 1: `size` moves from 2 to 3 and 2 is reserved, so no field is deleted without
    // a reservation; old artifacts still carry the size as field 2.
    let c = Case::new(
        "message Root { int32 a = 1; int64 size = 2; }",
        "message Root { reserved 2; int32 a = 1; int64 size = 3; }",
    );
    let f = c.findings();
    assert_eq!(
        said(&f, "renumbered"),
        vec![
            "error t.Root.size: field `size` of `t.Root` renumbered from 2 to 3: old artifacts \
             carry it as 2, which the new reader no longer reads as `size`"
        ]
    );
    assert_eq!(c.report().exit_code(), 1);
}

#[test]
fn renumbered_enum_value_is_an_error_even_with_the_old_number_reserved() {
    let c = Case::new(
        "enum K { K0 = 0; K_GEMM = 1; } message Root { K k = 1; }",
        "enum K { reserved 1; K0 = 0; K_GEMM = 2; } message Root { K k = 1; }",
    );
    assert_eq!(
        said(&c.findings(), "renumbered"),
        vec![
            "error t.K.K_GEMM: enum value `K_GEMM` of `t.K` renumbered from 1 to 2: old \
             artifacts decode as another value"
        ]
    );
}

#[test]
fn rename_keeps_the_age_of_a_field_after_regeneration() {
    // Blind spot 7: `c` (in the baseline) was renamed in a change recorded 5 days ago; the
    // goldens were then regenerated, so the newest golden names `c_count`. Field 2 is as old
    // as the baseline: no forward-window error.
    let old = "message Root { int32 a = 1; int32 c = 2; }";
    let renamed = "message Root { int32 a = 1; int32 c_count = 2; }";
    let mut c = Case::new(renamed, renamed);
    c.history = history(&[("2026-10-01", old), ("2026-11-24", renamed)]);
    c.census.goldens = vec![golden(
        "h100",
        2,
        "2026-11-29",
        &["t.Root.a", "t.Root.c_count"],
    )];
    assert_eq!(fired(c.findings()), Vec::<String>::new(), "{}", c.text());
    // The rename itself, regenerated in the same change: a warning, no window finding.
    let mut c = Case::new(old, renamed);
    c.history = history(&[("2026-10-01", old), ("2026-11-29", renamed)]);
    c.census.goldens = vec![golden("h100", 2, "2026-11-29", &["t.Root.c_count"])];
    assert_eq!(fired(c.findings()), vec!["warning renamed t.Root.c"]);
}

#[test]
fn renumbered_field_is_new_for_the_forward_window() {
    // The same name under a new number is a construct no older runtime reads.
    let old = "message Root { int32 a = 1; int32 c = 2; }";
    let moved = "message Root { reserved 2; int32 a = 1; int32 c = 3; }";
    let mut c = Case::new(moved, moved);
    c.history = history(&[("2026-10-01", old), ("2026-11-24", moved)]);
    c.census.goldens = vec![golden("h100", 2, "2026-11-29", &["t.Root.c"])];
    assert_eq!(
        said(&c.findings(), "forward-window"),
        vec![
            "error t.Root.c: `t.Root.c` is emitted by default (golden h100/v2 uses it) but has \
             been in the schema only since 2026-11-24 (5 days); runtimes up to 14 days old \
             cannot read it"
        ]
    );
}

#[test]
fn renamed_enum_value_keeps_its_age() {
    let old = "enum K { K0 = 0; K_START = 1; } message Root { K k = 1; }";
    let renamed = "enum K { K0 = 0; K_BEGIN = 1; } message Root { K k = 1; }";
    let mut c = Case::new(renamed, renamed);
    c.history = history(&[("2026-10-01", old), ("2026-11-27", renamed)]);
    c.census.goldens = vec![golden("h100", 2, "2026-11-29", &["t.K.K_BEGIN"])];
    assert_eq!(fired(c.findings()), Vec::<String>::new());
}

#[test]
fn renumbered_field_is_a_removal_for_the_backward_window() {
    // By name `legacy` survives; by number field 2, which a golden carries, is gone.
    let mut c = Case::new(
        "message Root { int32 a = 1; int32 legacy = 2; }",
        "message Root { reserved 2; int32 a = 1; int32 legacy = 3; }",
    );
    c.census.goldens = vec![golden("h100", 2, "2026-11-01", &["t.Root.legacy"])];
    assert_eq!(
        said(&c.findings(), "backward-window"),
        vec![
            "error t.Root.legacy: `t.Root.legacy` is removed, but golden h100/v2 (created \
             2026-11-01) uses it and today's runtime must load artifacts for 6 months"
        ]
    );
}

#[test]
fn restoring_a_deleted_field_identically_is_not_a_reuse_but_with_another_type_it_is() {
    let mut c = Case::new(
        "message Root { int32 a = 1; }",
        "message Root { int32 a = 1; int32 old = 3; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    assert_eq!(said(&c.findings(), "number-reused"), Vec::<String>::new());
    c.head = "message Root { int32 a = 1; string old = 3; }";
    assert_eq!(
        said(&c.findings(), "number-reused"),
        vec![
            "error t.Root.old: field `old` reuses number 3 of `t.Root`: snapshot 2026-01-01-s1 \
             used it for `old` as `int32`; old artifacts decode as the wrong field"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Type changes by what a reader sees

/// The findings of the wire rules on a retype of field `v` from `old` to `new`, as
/// `severity rule: message` (the staged-rollout note a new encoding gets left out).
fn retype(old: &str, new: &str) -> Vec<String> {
    let base = format!("enum E {{ E0 = 0; }} enum F {{ F0 = 0; }} message M {{ int32 x = 1; }} message Root {{ {old} v = 1; M keep = 2; E e = 3; F f = 4; }}");
    let head = format!("enum E {{ E0 = 0; }} enum F {{ F0 = 0; }} message M {{ int32 x = 1; }} message Root {{ {new} v = 1; M keep = 2; E e = 3; F f = 4; }}");
    let c = Case::new(&base, &head);
    c.findings()
        .iter()
        .filter(|f| f.rule.id() != "staged-rollout")
        .map(|f| format!("{} {}: {}", f.severity, f.rule, f.message))
        .collect()
}

#[test]
fn retype_bytes_to_string_is_an_error() {
    assert_eq!(
        retype("bytes", "string"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `bytes` to \
             `string`: string readers validate UTF-8: old artifacts whose payload is not UTF-8 \
             stop decoding"
        ]
    );
}

#[test]
fn retype_string_to_bytes_is_an_error() {
    assert_eq!(
        retype("string", "bytes"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `string` to \
             `bytes`: runtimes up to 14 days old read it as a string and validate UTF-8: new \
             payloads that are not UTF-8 fail to decode there"
        ]
    );
}

#[test]
fn retype_fixed64_to_double_is_an_error() {
    assert_eq!(
        retype("fixed64", "double"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `fixed64` to \
             `double`: the same fixed-width bytes read as `fixed64` and as `double` are \
             different numbers: every value changes"
        ]
    );
}

#[test]
fn retype_float_to_fixed32_is_an_error() {
    assert_eq!(
        retype("float", "fixed32"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `float` to \
             `fixed32`: the same fixed-width bytes read as `float` and as `fixed32` are \
             different numbers: every value changes"
        ]
    );
}

#[test]
fn retype_string_to_message_is_an_error() {
    assert_eq!(
        retype("string", "M"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `string` to \
             `.t.M`: a message reader parses the payload as fields and a `string` reader takes \
             it as data: one side misreads the other"
        ]
    );
}

#[test]
fn retype_message_to_bytes_is_an_error() {
    assert_eq!(
        retype("M", "bytes"),
        vec![
            "error type-incompatible: field `v` = 1 of `t.Root` changed from `.t.M` to `bytes`: \
             a message reader parses the payload as fields and a `bytes` reader takes it as \
             data: one side misreads the other",
            "warning presence-changed: field `v` = 1 of `t.Root` lost explicit presence: \
             readers may tell unset from default differently"
        ]
    );
}

#[test]
fn retype_scalar_to_message_is_a_wire_type_change() {
    assert_eq!(
        retype("int64", "M"),
        vec![
            "error wire-type-changed: field `v` = 1 of `t.Root` changed from `int64` (varint) \
             to `.t.M` (length-delimited): old and new readers misparse each other"
        ]
    );
}

#[test]
fn retype_within_the_int32_family_is_a_warning() {
    assert_eq!(
        retype("int32", "uint64"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `int32` to \
             `uint64` (same wire type): `int32` and `uint64` share the varint encoding: values \
             that do not fit the new type are truncated as a C++ cast would, and signs may be \
             reinterpreted"
        ]
    );
}

#[test]
fn retype_bool_to_int32_is_a_warning() {
    assert_eq!(
        retype("bool", "int32"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `bool` to \
             `int32` (same wire type): `bool` and `int32` share the varint encoding: values \
             that do not fit the new type are truncated as a C++ cast would, and signs may be \
             reinterpreted"
        ]
    );
}

#[test]
fn retype_sint32_to_sint64_is_a_warning() {
    assert_eq!(
        retype("sint32", "sint64"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `sint32` to \
             `sint64` (same wire type): `sint32` and `sint64` share the zigzag encoding: 64-bit \
             values are truncated by 32-bit readers"
        ]
    );
}

#[test]
fn retype_fixed32_to_sfixed32_is_a_warning() {
    assert_eq!(
        retype("fixed32", "sfixed32"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `fixed32` to \
             `sfixed32` (same wire type): `fixed32` and `sfixed32` share the fixed-width \
             encoding: values with the top bit set change sign"
        ]
    );
}

#[test]
fn retype_enum_to_int32_is_a_warning() {
    assert_eq!(
        retype("E", "int32"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `.t.E` to \
             `int32` (same wire type): enums and the int32 family share the varint encoding: \
             numbers the enum does not define read as unknown values, 64-bit values are \
             truncated"
        ]
    );
}

#[test]
fn retype_enum_to_another_enum_is_a_warning() {
    assert_eq!(
        retype("E", "F"),
        vec![
            "warning type-changed: field `v` = 1 of `t.Root` changed type from `.t.E` to \
             `.t.F` (same wire type): both enums are varints read by number: a number `.t.F` \
             does not define reads as an unknown value"
        ]
    );
}

#[test]
fn retype_sint64_to_int64_is_a_wire_type_change() {
    assert_eq!(
        retype("sint64", "int64"),
        vec![
            "error wire-type-changed: field `v` = 1 of `t.Root` changed from `sint64` (zigzag \
             varint) to `int64` (varint): old and new readers misparse each other"
        ]
    );
}

#[test]
fn packed_to_expanded_is_a_note() {
    assert_eq!(
        retype("repeated int32", "repeated int32").len(),
        0,
        "unchanged"
    );
    let c = Case::new(
        "message Root { repeated int32 dims = 1; }",
        "message Root { repeated int32 dims = 1 [packed = false]; }",
    );
    assert_eq!(
        said(&c.findings(), "packed-changed"),
        vec![
            "note t.Root.dims: field `dims` = 1 of `t.Root` changed from packed to expanded \
             encoding: protobuf parsers (prost included) accept both for repeated numbers"
        ]
    );
    assert_eq!(c.report().exit_code(), 0);
}

#[test]
fn singular_to_repeated_string_is_an_error_without_the_packed_reason() {
    let c = Case::new(
        "message Root { string name = 1; }",
        "message Root { repeated string name = 1; }",
    );
    assert_eq!(
        said(&c.findings(), "cardinality-changed"),
        vec!["error t.Root.name: field `name` = 1 of `t.Root` changed from singular to repeated"]
    );
}

#[test]
fn repeated_packed_to_singular_names_the_packed_encoding() {
    let c = Case::new(
        "message Root { repeated int64 dims = 1; }",
        "message Root { int64 dims = 1; }",
    );
    assert_eq!(
        said(&c.findings(), "cardinality-changed"),
        vec![
            "error t.Root.dims: field `dims` = 1 of `t.Root` changed from repeated to \
             singular: a singular reader cannot parse the packed encoding"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Message retypes compared by structure; types renamed or moved

const SLICE: &str = "message BufferAllocationSliceProto { int64 buffer_allocation_index = 1; \
                     int64 offset = 2; int64 size = 3; }";

#[test]
fn retype_to_a_structurally_different_message_names_the_first_incompatible_path() {
    // A thunk's payload replaced in place by another message whose field 3 is a string.
    let base = "message KernelThunkProto { string kernel_name = 1; int32 shmem = 2; int64 size = 3; } \
                message OtherProto { string kernel_name = 1; int32 shmem = 2; string size = 3; } \
                message Root { oneof impl { KernelThunkProto kernel_thunk = 8; OtherProto other = 9; } }";
    let head =
        "message KernelThunkProto { string kernel_name = 1; int32 shmem = 2; int64 size = 3; } \
                message OtherProto { string kernel_name = 1; int32 shmem = 2; string size = 3; } \
                message Root { oneof impl { OtherProto kernel_thunk = 8; OtherProto other = 9; } }";
    let c = Case::new(base, head);
    let f = c.findings();
    assert_eq!(
        said(&f, "type-incompatible"),
        vec![
            "error t.Root.kernel_thunk: `t.Root.kernel_thunk` (t.KernelThunkProto -> \
             t.OtherProto): field 3 `size` int64 -> string"
        ]
    );
    assert_eq!(said(&f, "type-changed"), Vec::<String>::new());
}

#[test]
fn slice_replaced_in_place_by_a_different_message_is_an_error() {
    // Issue 12: the argument slices of a kernel replaced by shaped slices, same number.
    let base = format!(
        "{SLICE} message ShapedSliceProto {{ BufferAllocationSliceProto slice = 1; int64 rank = 2; }} \
         message Root {{ repeated BufferAllocationSliceProto args = 2; ShapedSliceProto out = 3; }}"
    );
    let head = format!(
        "{SLICE} message ShapedSliceProto {{ BufferAllocationSliceProto slice = 1; int64 rank = 2; }} \
         message Root {{ repeated ShapedSliceProto args = 2; ShapedSliceProto out = 3; }}"
    );
    let c = Case::new(&base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        vec![
            "error t.Root.args: `t.Root.args` (t.BufferAllocationSliceProto -> \
             t.ShapedSliceProto): field 1 `buffer_allocation_index` int64 -> \
             .t.BufferAllocationSliceProto"
        ]
    );
    assert_eq!(c.report().exit_code(), 1);
}

#[test]
fn oneof_member_inserted_before_the_last_shifts_numbers() {
    // Issue 12: a new collective inserted at 39 pushes all_reduce from 39 to 40.
    let thunks = "message AllGatherThunkProto { repeated int64 replica_groups = 1; int64 dim = 2; } \
                  message AllReduceThunkProto { repeated int64 replica_groups = 1; int32 reduction = 2; } \
                  message ReduceScatterThunkProto { repeated int64 replica_groups = 1; string scatter = 2; }";
    let base = format!(
        "{thunks} message Root {{ ReduceScatterThunkProto rs = 1; oneof impl {{ \
         AllGatherThunkProto all_gather_thunk = 38; AllReduceThunkProto all_reduce_thunk = 39; }} }}"
    );
    let head = format!(
        "{thunks} message Root {{ ReduceScatterThunkProto rs = 1; oneof impl {{ \
         AllGatherThunkProto all_gather_thunk = 38; ReduceScatterThunkProto reduce_scatter_thunk = 39; \
         AllReduceThunkProto all_reduce_thunk = 40; }} }}"
    );
    let c = Case::new(&base, &head);
    let f = c.findings();
    assert_eq!(
        fired(f.clone()),
        vec![
            "error type-incompatible t.Root.all_reduce_thunk",
            "error renumbered t.Root.all_reduce_thunk",
            "warning renamed t.Root.all_reduce_thunk",
            // Number 39 under a new name and type is a new field (fields age by meaning).
            "note staged-rollout t.Root.reduce_scatter_thunk",
            "note staged-rollout t.Root.all_reduce_thunk",
        ]
    );
    assert_eq!(
        said(&f, "type-incompatible"),
        vec![
            "error t.Root.all_reduce_thunk: `t.Root.reduce_scatter_thunk` \
             (t.AllReduceThunkProto -> t.ReduceScatterThunkProto): field 2 `reduction` int32 \
             -> string"
        ]
    );
}

#[test]
fn retype_to_a_compatible_structure_is_a_warning() {
    let base = format!(
        "{SLICE} message SliceV2 {{ int64 buffer_allocation_index = 1; int64 offset = 2; \
         int64 size = 3; int64 stride = 4; }} message Root {{ BufferAllocationSliceProto s = 1; \
         SliceV2 keep = 2; }}"
    );
    let head = base.replace("BufferAllocationSliceProto s = 1", "SliceV2 s = 1");
    let c = Case::new(&base, &head);
    assert_eq!(
        said(&c.findings(), "type-changed"),
        vec![
            "warning t.Root.s: field `s` = 1 of `t.Root` changed type from \
             `.t.BufferAllocationSliceProto` to `.t.SliceV2` (same wire type): the structure is \
             compatible (same numbers, wire types, labels and oneofs), but the meaning may differ"
        ]
    );
    assert_eq!(c.report().exit_code(), 0);
}

#[test]
fn retype_dropping_a_field_is_an_error_unless_the_new_type_reserves_it() {
    let base = "message A { int64 x = 1; int64 y = 2; } message B { int64 x = 1; } \
                message C { reserved 2; int64 x = 1; } \
                message Root { A a = 1; B b = 2; C c = 3; }";
    let head = base.replace("A a = 1", "B a = 1");
    let c = Case::new(base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        vec!["error t.Root.a: `t.Root.a` (t.A -> t.B): field 2 `y` (int64) is missing: the new reader drops it"]
    );
    let head = base.replace("A a = 1", "C a = 1");
    let c = Case::new(base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        Vec::<String>::new()
    );
    assert_eq!(said(&c.findings(), "type-changed").len(), 1);
}

#[test]
fn retype_changing_oneof_grouping_is_an_error() {
    let base = "message A { oneof k { int64 x = 1; int64 y = 2; } } \
                message B { oneof k { int64 x = 1; } oneof l { int64 y = 2; } } \
                message Root { A a = 1; B b = 2; }";
    let head = base.replace("A a = 1", "B a = 1");
    let c = Case::new(base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        vec!["error t.Root.a: `t.Root.a` (t.A -> t.B): field 2 `y` changes oneof grouping (oneof `k` -> `l`)"]
    );
}

#[test]
fn structural_comparison_follows_nested_messages_and_ends_on_cycles() {
    // Both trees are recursive; the difference is two levels down.
    let base = "message Leaf { fixed64 bits = 1; } message LeafD { double bits = 1; } \
                message Node { repeated Node children = 1; Leaf leaf = 2; } \
                message Tree { repeated Tree children = 1; LeafD leaf = 2; } \
                message Same { repeated Same children = 1; Leaf leaf = 2; } \
                message Root { Node n = 1; Tree t = 2; Same s = 3; Node m = 4; }";
    let head = base.replace("Node n = 1", "Tree n = 1");
    let c = Case::new(base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        vec!["error t.Root.n: `t.Root.n` (t.Node -> t.Tree): field 2 `leaf` (.t.Leaf -> .t.LeafD): field 1 `bits` fixed64 -> double"]
    );
    // Same structure through the cycle: compatible.
    let head = base.replace("Node m = 4", "Same m = 4");
    let c = Case::new(base, &head);
    assert_eq!(
        said(&c.findings(), "type-incompatible"),
        Vec::<String>::new()
    );
    assert_eq!(said(&c.findings(), "type-changed").len(), 1);
}

#[test]
fn structural_comparison_stops_at_its_depth_bound() {
    // Two distinct chains of 40 messages: deeper than the bound, compared no further.
    let mut body = String::new();
    for i in 0..40 {
        body.push_str(&format!(
            "message A{i} {{ A{} next = 1; }} message B{i} {{ B{} next = 1; }} ",
            i + 1,
            i + 1
        ));
    }
    body.push_str("message A40 { int64 v = 1; } message B40 { int64 v = 1; } ");
    let base = format!("{body} message Root {{ A0 x = 1; B0 y = 2; }}");
    let head = format!("{body} message Root {{ B0 x = 1; B0 y = 2; }}");
    let c = Case::new(&base, &head);
    let f = said(&c.findings(), "type-incompatible");
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].ends_with(": field 1 `next` (.t.A31 -> .t.B31): field 1 `next` (.t.A32 -> .t.B32): nested deeper than 32 messages: not compared further"),
        "{f:?}"
    );
}

#[test]
fn types_renamed_with_their_fields_are_a_rename_not_a_deletion() {
    // Issue 12: `*_start_thunk` -> `*_thunk`, types and the fields using them renamed
    // together, same numbers and structure.
    let base = "message AllReduceStartThunkProto { repeated int64 replica_groups = 1; } \
                message CollectiveStartConfig { int32 op = 1; AllReduceStartThunkProto inner = 2; } \
                message Root { oneof impl { AllReduceStartThunkProto all_reduce_start_thunk = 39; \
                CollectiveStartConfig collective_start_config = 40; } }";
    let head = "message AllReduceThunkProto { repeated int64 replica_groups = 1; } \
                message CollectiveConfig { int32 op = 1; AllReduceThunkProto inner = 2; } \
                message Root { oneof impl { AllReduceThunkProto all_reduce_thunk = 39; \
                CollectiveConfig collective_config = 40; } }";
    let c = Case::new(base, head);
    let f = c.findings();
    assert_eq!(
        fired(f.clone()),
        vec![
            "warning renamed t.AllReduceStartThunkProto",
            "warning renamed t.CollectiveStartConfig",
            "warning renamed t.Root.all_reduce_start_thunk",
            "warning renamed t.Root.collective_start_config",
        ]
    );
    assert_eq!(
        said(&f, "renamed").first().map(String::as_str),
        Some(
            "warning t.AllReduceStartThunkProto: message `t.AllReduceStartThunkProto` renamed \
             or moved to `t.AllReduceThunkProto` with a compatible structure: binary artifacts \
             still load, but whatever names the type (`Any` type URLs, reflection by name) breaks"
        )
    );
    assert_eq!(c.report().exit_code(), 0);
}

#[test]
fn type_renamed_to_an_incompatible_structure_is_still_a_deletion() {
    let base = "message StartThunk { int64 id = 1; } message Root { StartThunk start_thunk = 1; }";
    let head = "message Thunk { string id = 1; } message Root { Thunk thunk = 1; }";
    let c = Case::new(base, head);
    assert_eq!(
        fired(c.findings()),
        vec![
            "error type-incompatible t.Root.start_thunk",
            "error type-deleted t.StartThunk",
            "warning renamed t.Root.start_thunk",
            "note staged-rollout t.Thunk",
            // Renamed and retyped: number 1 is a new field.
            "note staged-rollout t.Root.thunk",
        ]
    );
}

fn model_of(files: &[(&str, &str)]) -> Model {
    let compiled: Compiled = ProtoSources::from_texts(files.iter().map(|(n, t)| (*n, *t)))
        .compile(&[], "fixture")
        .expect("fixture compiles");
    Model::extract(&compiled, "t.Root", "t.ignorable").expect("fixture has t.Root")
}

#[test]
fn message_moved_to_another_package_is_a_rename() {
    // Issue 12: a message moved to another package with identical fields.
    let base = model_of(&[
        (
            "t.proto",
            "syntax = \"proto3\"; package t; import \"old.proto\"; \
             message Root { xla.old.Slice slice = 1; }",
        ),
        (
            "old.proto",
            "syntax = \"proto3\"; package xla.old; message Slice { int64 offset = 1; int64 size = 2; }",
        ),
    ]);
    let head = model_of(&[
        (
            "t.proto",
            "syntax = \"proto3\"; package t; import \"new.proto\"; \
             message Root { xla.gpu.Slice slice = 1; }",
        ),
        (
            "new.proto",
            "syntax = \"proto3\"; package xla.gpu; message Slice { int64 offset = 1; int64 size = 2; }",
        ),
    ]);
    let f = wire(&base, &head, &History::default());
    assert_eq!(
        said(&f, "renamed"),
        vec![
            "warning xla.old.Slice: message `xla.old.Slice` renamed or moved to `xla.gpu.Slice` \
             with a compatible structure: binary artifacts still load, but whatever names the \
             type (`Any` type URLs, reflection by name) breaks"
        ]
    );
    assert_eq!(fired(f), vec!["warning renamed xla.old.Slice"]);
}

#[test]
fn renamed_type_keeps_the_age_of_its_fields() {
    let old = "message StartThunk { int64 id = 1; } message Root { StartThunk start_thunk = 1; }";
    let new = "message Thunk { int64 id = 1; } message Root { Thunk thunk = 1; }";
    let mut c = Case::new(new, new);
    c.history = history(&[("2026-10-01", old), ("2026-11-26", new)]);
    c.census.goldens = vec![golden(
        "h100",
        3,
        "2026-11-29",
        &["t.Thunk", "t.Thunk.id", "t.Root.thunk"],
    )];
    assert_eq!(fired(c.findings()), Vec::<String>::new());
    // A golden younger than 6 months uses the old names: the rename is not a removal.
    let mut c = Case::new(old, new);
    c.census.goldens = vec![golden(
        "h100",
        2,
        "2026-10-01",
        &["t.StartThunk", "t.StartThunk.id", "t.Root.start_thunk"],
    )];
    assert_eq!(
        fired(c.findings()),
        vec![
            "warning renamed t.StartThunk",
            "warning renamed t.Root.start_thunk"
        ]
    );
}

#[test]
fn enum_value_deleted_asks_only_for_the_missing_reservation() {
    // Issue 12: `reserved 2; // Was K_B.` reserves the number; the hint must not ask for it again.
    let c = Case::new(
        "enum Kind { K_UNSET = 0; K_A = 1; K_B = 2; } message Root { Kind kind = 1; }",
        "enum Kind { reserved 2; K_UNSET = 0; K_A = 1; } message Root { Kind kind = 1; }",
    );
    let hints: Vec<String> = c
        .findings()
        .iter()
        .filter(|f| f.rule.id() == "enum-value-deleted")
        .map(|f| f.hint.clone())
        .collect();
    assert_eq!(hints, vec!["add `reserved \"K_B\";` to `t.Kind`"]);
}

#[test]
fn nested_types_moving_with_a_renamed_parent_are_one_rename() {
    let base = "message StartThunk { map<string, int64> attrs = 1; message Inner { int32 v = 1; } \
                Inner inner = 2; } message Root { StartThunk start_thunk = 1; }";
    let head = "message Thunk { map<string, int64> attrs = 1; message Inner { int32 v = 1; } \
                Inner inner = 2; } message Root { Thunk thunk = 1; }";
    let c = Case::new(base, head);
    assert_eq!(
        fired(c.findings()),
        vec![
            "warning renamed t.StartThunk",
            "warning renamed t.Root.start_thunk"
        ]
    );
}

#[test]
fn map_entries_of_unrelated_messages_are_not_paired_as_a_move() {
    // `Foo` goes away (its field reserved) and `Bar` arrives: both have an `AttrsEntry`, which
    // is no package move.
    let base = "message Foo { map<string, int64> attrs = 1; } message Root { Foo foo = 1; }";
    let head = "message Bar { map<string, int64> attrs = 1; } \
                message Root { reserved 1; reserved \"foo\"; Bar bar = 2; }";
    let c = Case::new(base, head);
    assert_eq!(said(&c.findings(), "renamed"), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Issue 35: the bot's history findings (restores, what a deletion reserved), fields age by
// meaning.

fn messages_of(c: &Case<'_>, rule: &str) -> Vec<String> {
    c.findings()
        .into_iter()
        .filter(|f| f.rule.id() == rule)
        .map(|f| f.message)
        .collect()
}

#[test]
fn a_deletion_says_exactly_what_it_reserved() {
    let base = "message Root { int32 a = 1; int32 b = 2; }";
    let cases = [
        (
            "message Root { int32 a = 1; }",
            "field `b` = 2 deleted from `t.Root`: the deletion reserves neither its number 2 nor its name `b`",
        ),
        (
            "message Root { reserved \"b\"; int32 a = 1; }",
            "field `b` = 2 deleted from `t.Root`: the deletion reserves its name but not its number 2",
        ),
        (
            "message Root { reserved 2; int32 a = 1; }",
            "field `b` = 2 deleted from `t.Root`: the deletion reserves its number 2 but not its name `b`",
        ),
        (
            "message Root { int32 a = 1; int32 b = 3; }",
            "field `b` = 2 deleted from `t.Root`: the deletion reserves neither its number 2 nor its name `b` (now field 3's)",
        ),
    ];
    for (head, want) in cases {
        assert_eq!(
            messages_of(&Case::new(base, head), "field-deleted"),
            [want],
            "{head}"
        );
    }
    let base = "enum Kind { K_UNSET = 0; K_B = 2; } message Root { Kind kind = 1; }";
    let cases = [
        (
            "enum Kind { K_UNSET = 0; } message Root { Kind kind = 1; }",
            "enum value `K_B` = 2 deleted from `t.Kind`: the deletion reserves neither its number 2 nor its name `K_B`",
        ),
        (
            "enum Kind { reserved \"K_B\"; K_UNSET = 0; } message Root { Kind kind = 1; }",
            "enum value `K_B` = 2 deleted from `t.Kind`: the deletion reserves its name but not its number 2",
        ),
        (
            "enum Kind { reserved 2; K_UNSET = 0; } message Root { Kind kind = 1; }",
            "enum value `K_B` = 2 deleted from `t.Kind`: the deletion reserves its number 2 but not its name `K_B`",
        ),
    ];
    for (head, want) in cases {
        assert_eq!(
            messages_of(&Case::new(base, head), "enum-value-deleted"),
            [want],
            "{head}"
        );
    }
}

#[test]
fn a_field_restored_exactly_is_no_reuse_even_through_a_reservation() {
    // January: `old = 3`; the base deleted it reserving both; the head restores it as it was.
    let mut c = Case::new(
        "message Root { reserved 3; reserved \"old\"; int32 a = 1; }",
        "message Root { int32 a = 1; int32 old = 3; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    assert!(messages_of(&c, "number-reused").is_empty());
    assert!(messages_of(&c, "name-reused").is_empty());
    // The same name under another type within the encoding is a reuse: old values mean other
    // things.
    let mut c = Case::new(
        "message Root { reserved 3; reserved \"old\"; int32 a = 1; }",
        "message Root { int32 a = 1; uint64 old = 3; }",
    );
    c.history = history(&[("2026-01-01", "message Root { int32 a = 1; int32 old = 3; }")]);
    assert_eq!(
        messages_of(&c, "number-reused"),
        ["field `old` reuses number 3 of `t.Root`: snapshot 2026-01-01-s1 used it for `old` as `int32`; old artifacts decode as the wrong field"]
    );
    // Enum values alike.
    let mut c = Case::new(
        "enum Kind { reserved 2; reserved \"K_B\"; K_UNSET = 0; } message Root { Kind kind = 1; }",
        "enum Kind { K_UNSET = 0; K_B = 2; } message Root { Kind kind = 1; }",
    );
    c.history = history(&[(
        "2026-01-01",
        "enum Kind { K_UNSET = 0; K_B = 2; } message Root { Kind kind = 1; }",
    )]);
    assert!(messages_of(&c, "number-reused").is_empty());
    assert!(messages_of(&c, "name-reused").is_empty());
    // A reservation before any user in sight is a reuse, even when a later snapshot (the head's
    // own, recorded with the change) has the field: what 3 meant is unknown.
    let mut c = Case::new(
        "message Root { reserved 3; int32 a = 1; }",
        "message Root { int32 a = 1; int32 old = 3; }",
    );
    c.history = history(&[
        ("2026-01-01", "message Root { reserved 3; int32 a = 1; }"),
        ("2026-02-01", "message Root { int32 a = 1; int32 old = 3; }"),
    ]);
    assert_eq!(
        messages_of(&c, "number-reused"),
        ["field `old` reuses number 3 of `t.Root`: snapshot 2026-01-01-s1 reserved it; old artifacts decode as the wrong field"]
    );
    // A reservation with no user in sight still is a reuse: what 3 meant is unknown.
    let c = Case::new(
        "message Root { reserved 3; int32 a = 1; }",
        "message Root { int32 a = 1; int32 old = 3; }",
    );
    assert_eq!(
        messages_of(&c, "number-reused"),
        ["field `old` reuses number 3 of `t.Root`: the base reserved it; old artifacts decode as the wrong field"]
    );
}

/// The project's real case: `ThunkInfoProto` field 4 was `execution_stream_id` (baseline); on
/// 2026-12-01 the stream id moved to 1000 and XLA's `concurrent_region_id` took 4. Runtimes
/// before 2026-12-01 read 4 as the stream id, so emitting the new field is a forward-window
/// error until 14 days after its first appearance under the new name, although number 4 (same
/// wire class) is in the baseline.
#[test]
fn a_number_with_a_new_meaning_ages_from_the_rename() {
    const BEFORE: &str = "message Info { int64 thunk_id = 3; int64 execution_stream_id = 4; } message Root { Info info = 1; }";
    const AFTER: &str = "message Info { int64 thunk_id = 3; optional int64 concurrent_region_id = 4; int64 execution_stream_id = 1000; } message Root { Info info = 1; }";
    // The head (and base) is the newer schema, recorded on 2026-12-01 after the older one.
    let forward = |today: &str, before: &str, after: &str| {
        let mut c = Case::new(after, after);
        c.history = history(&[("2026-11-29", before), ("2026-12-01", after)]);
        c.today = date(today);
        c.census = Census {
            goldens: vec![golden(
                "h100",
                2,
                today,
                &["t.Root.info", "t.Info.concurrent_region_id"],
            )],
        };
        messages_of(&c, "forward-window")
    };
    assert_eq!(
        forward("2026-12-05", BEFORE, AFTER),
        ["`t.Info.concurrent_region_id` is emitted by default (golden h100/v2 uses it) but has been in the schema only since 2026-12-01 (4 days); runtimes up to 14 days old cannot read it"]
    );
    assert!(forward("2026-12-15", BEFORE, AFTER).is_empty());

    // Each sign alone breaks identity: a rename with a type change, or with a presence change.
    // A pure rename keeps the age.
    let cases = [
        (
            "int64 execution_stream_id = 4;",
            "uint64 concurrent_region_id = 4;",
            true,
        ),
        (
            "int64 execution_stream_id = 4;",
            "optional int64 concurrent_region_id = 4;",
            true,
        ),
        // The old name moved elsewhere is no sign by itself (it may carry only the name).
        (
            "int64 execution_stream_id = 4;",
            "int64 concurrent_region_id = 4; int64 execution_stream_id = 1000;",
            false,
        ),
        (
            "int64 execution_stream_id = 4;",
            "int64 concurrent_region_id = 4;",
            false,
        ),
        // No rename: a type change alone keeps identity (a `type-changed` warning).
        (
            "int64 concurrent_region_id = 4;",
            "uint64 concurrent_region_id = 4;",
            false,
        ),
    ];
    for (old, new, new_field) in cases {
        let before = format!("message Info {{ {old} }} message Root {{ Info info = 1; }}");
        let after = format!("message Info {{ {new} }} message Root {{ Info info = 1; }}");
        let got = forward("2026-12-05", &before, &after);
        assert_eq!(!got.is_empty(), new_field, "{old} -> {new}: {got:?}");
    }
}

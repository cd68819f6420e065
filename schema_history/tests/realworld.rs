//! The bot on real-world schema histories (issue 12), each fixture modelled on an event seen in
//! a public schema's history (the schemas are this file's own): Editions files exercising each
//! feature, a deletion reserving only the number (with and without a policy that accepts it),
//! a number reused a year after it was freed in a repository without snapshots, a rollback
//! restoring a field, the creation of the compared file and root, images against sources, and
//! output that fits where it goes.
//!
//! Each fixture is a temporary git repository with dated commits; its verdict is snapshotted in
//! every format (text, markdown, json, github) with insta, commit hashes redacted. To bless:
//! `INSTA_UPDATE=always cargo test -p schema_history --test realworld`, then read the `.snap`
//! diffs. Each test also asserts its verdict directly.
mod common;

use common::{date, TempRepo};
use std::path::{Path, PathBuf};

use prost::Message as _;
use schema_history::{
    diff, render_error, DiffOptions, Error, Finding, Format, GitHistoryBound, Location,
    ProtoSources, Report, Revision, Rule, SchemaSpec, Severity, GITHUB_ANNOTATIONS, MARKDOWN_LIMIT,
};

const TODAY: &str = "2026-12-01";

fn spec(root: &str) -> SchemaSpec {
    SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: Vec::new(),
        root: root.into(),
        ignorable: "rw.ignorable".into(),
    }
}

impl TempRepo {
    fn options(&self, root: &str, base: &str) -> DiffOptions {
        let mut opts = DiffOptions::project(
            &self.dir,
            Revision::Git(base.into()),
            Revision::WorkTree,
            date(TODAY),
        );
        opts.spec = spec(root);
        opts
    }

    fn bot(&self, root: &str, base: &str) -> Report {
        diff(&self.options(root, base)).expect("the bot runs")
    }

    /// Commits `text` as the policy on top of the base, leaving the rest of the working tree's
    /// change uncommitted: the bot reads its policy from the base (a policy the change itself
    /// writes would be a loosening of its trusted inputs).
    fn commit_policy(&self, text: &str) {
        const POLICY: &str = "schema_history/policy.toml";
        self.write(POLICY, text);
        self.git(&["add", POLICY]);
        self.git_env(
            &["commit", "-q", "-m", "policy", "--", POLICY],
            &[
                ("GIT_AUTHOR_DATE", "2026-11-02T12:00:00Z"),
                ("GIT_COMMITTER_DATE", "2026-11-02T12:00:00Z"),
            ],
        );
    }
}

/// `severity rule construct` of each finding.
fn rules(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|f| format!("{} {} {}", f.severity, f.rule, f.construct))
        .collect()
}

/// Hex runs of 10 or more characters (commit hashes) replaced, so that snapshots do not depend
/// on git's hashing of the fixture commits.
fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() && c.is_ascii_lowercase() || c.is_ascii_digit() {
            run.push(c);
            continue;
        }
        if run.len() >= 10 && run.chars().any(|c| c.is_ascii_alphabetic()) {
            out.push_str("<hash>");
        } else {
            out.push_str(&run);
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// The verdict in every format: exit status, text, markdown, the json findings, github.
fn every_format(report: &Report) -> String {
    let json: serde_json::Value =
        serde_json::from_str(&report.render(Format::Json)).expect("json report parses");
    let findings: Vec<String> = json["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    format!(
                        "{} {} {} @ {}",
                        f["severity"].as_str().unwrap_or("?"),
                        f["rule"].as_str().unwrap_or("?"),
                        f["construct"].as_str().unwrap_or("?"),
                        f["location"]["line"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    redact(&format!(
        "exit {}\n--- text\n{}--- markdown\n{}--- json findings\n{}\n--- github\n{}",
        report.exit_code(),
        report.render(Format::Text),
        report.render(Format::Markdown),
        findings.join("\n"),
        report.render(Format::Github),
    ))
}

// ---------------------------------------------------------------------------------------------
// Editions.

const PROTO3_THUNK: &str = r#"syntax = "proto3";
package rw;

enum Kind {
  KIND_UNSPECIFIED = 0;
  KIND_KERNEL = 1;
}

message Slice {
  int64 offset = 1;
  int64 size = 2;
}

message ThunkProto {
  int64 id = 1;
  optional string name = 2;
  repeated int64 dims = 3;
  Kind kind = 4;
  Slice slice = 5;
  oneof impl {
    string kernel = 6;
    int64 memset = 7;
  }
}
"#;

/// `PROTO3_THUNK` migrated to edition 2023 as `prototiller` writes it: the same reader view.
const EDITION_THUNK: &str = r#"edition = "2023";
package rw;

option features.field_presence = IMPLICIT;

enum Kind {
  KIND_UNSPECIFIED = 0;
  KIND_KERNEL = 1;
}

message Slice {
  int64 offset = 1;
  int64 size = 2;
}

message ThunkProto {
  int64 id = 1;
  string name = 2 [features.field_presence = EXPLICIT];
  repeated int64 dims = 3;
  Kind kind = 4;
  Slice slice = 5;
  oneof impl {
    string kernel = 6;
    int64 memset = 7;
  }
}
"#;

fn editions_repo(name: &str, base: &str) -> TempRepo {
    let repo = TempRepo::new("realworld", name);
    repo.write("proto/rw/thunk.proto", base);
    repo.commit("base", "2026-11-01");
    repo
}

#[test]
fn proto3_to_edition_2023_keeps_the_reader_view() {
    let repo = editions_repo("migrate", PROTO3_THUNK);
    repo.write("proto/rw/thunk.proto", EDITION_THUNK);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), Vec::<String>::new());
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn edition_2024_with_visibility_and_language_features_compiles() {
    let repo = editions_repo("e2024", EDITION_THUNK);
    let text = EDITION_THUNK
        .replace(
            "edition = \"2023\";",
            "edition = \"2024\";\nimport \"google/protobuf/cpp_features.proto\";",
        )
        .replace(
            "message Slice {",
            "export message Slice {\n  option features.(pb.cpp).string_type = VIEW;",
        )
        .replace(
            "int64 id = 1;",
            "int64 id = 1 [features.(pb.cpp).legacy_closed_enum = false];",
        );
    repo.write("proto/rw/thunk.proto", &text);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), Vec::<String>::new());
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn field_presence_explicit_to_implicit_is_a_presence_warning() {
    let repo = editions_repo("presence", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "string name = 2 [features.field_presence = EXPLICIT];",
            "string name = 2;",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        ["warning presence-changed rw.ThunkProto.name"]
    );
    assert_eq!(report.exit_code(), 0);
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn field_presence_legacy_required_is_a_break() {
    let repo = editions_repo("required", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "int64 id = 1;",
            "int64 id = 1 [features.field_presence = LEGACY_REQUIRED];",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(report.exit_code(), 1);
    let f = &report.findings[0];
    assert_eq!(
        f.message,
        "field `id` (1) changes field_presence from IMPLICIT to LEGACY_REQUIRED: a reader that requires the field rejects messages without it"
    );
    assert_eq!(
        f.location,
        Some(Location {
            file: "proto/rw/thunk.proto".into(),
            line: 17,
            column: 3
        })
    );
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn enum_type_closed_at_file_level_is_a_break_for_every_enum() {
    let repo = editions_repo("closed", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "option features.field_presence = IMPLICIT;",
            "option features.field_presence = IMPLICIT;\noption features.enum_type = CLOSED;",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), ["error feature-changed rw.Kind"]);
    assert_eq!(
        report.findings[0].message,
        "enum `rw.Kind` changes enum_type from OPEN to CLOSED: an open enum keeps unknown values in the field, a closed one moves them to the unknown fields, so old and new readers see different values"
    );
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn utf8_validation_none_is_a_break() {
    let repo = editions_repo("utf8", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "string kernel = 6;",
            "string kernel = 6 [features.utf8_validation = NONE];",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        ["error feature-changed rw.ThunkProto.kernel"]
    );
    assert_eq!(
        report.findings[0].message,
        "field `kernel` (6) changes utf8_validation from VERIFY to NONE: a reader that verifies rejects strings the other side accepts"
    );
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn message_encoding_delimited_changes_the_wire_type() {
    let repo = editions_repo("delimited", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "Slice slice = 5;",
            "Slice slice = 5 [features.message_encoding = DELIMITED];",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        [
            "error wire-type-changed rw.ThunkProto.slice",
            // A field is its number and wire class: the delimited one is a new construct.
            "note staged-rollout rw.ThunkProto.slice"
        ]
    );
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn repeated_field_encoding_expanded_is_a_note() {
    let repo = editions_repo("expanded", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace(
            "message ThunkProto {",
            "message ThunkProto {\n  option features.repeated_field_encoding = EXPANDED;",
        ),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), ["note packed-changed rw.ThunkProto.dims"]);
    assert_eq!(report.exit_code(), 0);
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn features_are_in_the_listing() {
    let sources = ProtoSources::from_texts([(
        "rw/thunk.proto",
        EDITION_THUNK
            .replace(
                "option features.field_presence = IMPLICIT;",
                "option features.enum_type = CLOSED;",
            )
            .replace(
                "int64 id = 1;",
                "int64 id = 1 [features.field_presence = LEGACY_REQUIRED];",
            )
            .replace(
                "repeated int64 dims = 3;",
                "repeated int64 dims = 3 [features.repeated_field_encoding = EXPANDED];",
            )
            .replace(
                "string kernel = 6;",
                "string kernel = 6 [features.utf8_validation = NONE];",
            )
            .replace(
                "Slice slice = 5;",
                "Slice slice = 5 [features.message_encoding = DELIMITED];",
            ),
    )]);
    let compiled = sources.compile(&[], "test").expect("compiles");
    let model =
        schema_history::Model::extract(&compiled, "rw.ThunkProto", "rw.ignorable").expect("model");
    insta::assert_snapshot!(model.listing().join("\n"));
}

#[test]
fn unsupported_edition_names_file_line_and_import_chain() {
    let repo = editions_repo("unsupported", EDITION_THUNK);
    repo.write(
        "proto/rw/future.proto",
        "// A file from the future.\nedition = \"2025\";\npackage rw;\nmessage Future {}\n",
    );
    repo.write(
        "proto/rw/mid.proto",
        "syntax = \"proto3\";\npackage rw;\nimport \"rw/future.proto\";\nmessage Mid { Future f = 1; }\n",
    );
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace("package rw;", "package rw;\nimport \"rw/mid.proto\";"),
    );
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.spec.files = vec!["rw/thunk.proto".into()];
    let err = diff(&opts).expect_err("no verdict");
    assert_eq!(
        err.to_string(),
        "compiling the protos of working tree: proto/rw/future.proto:2:1: unsupported Protobuf Editions construct: edition \"2025\" (this bot reads editions 2023 and 2024) (imported by rw/mid.proto <- rw/thunk.proto)"
    );
    insta::assert_snapshot!(format!(
        "--- json\n{}--- github\n{}",
        render_error(Format::Json, &err.to_string()),
        render_error(Format::Github, &err.to_string())
    ));
}

#[test]
fn protox_errors_in_editions_files_name_the_line() {
    let repo = editions_repo("badline", EDITION_THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &EDITION_THUNK.replace("int64 size = 2;", "int64 size = 2 [features.no_such = 1];"),
    );
    let err = diff(&repo.options("rw.ThunkProto", "HEAD")).expect_err("no verdict");
    let text = err.to_string();
    assert!(
        text.starts_with("compiling the protos of working tree: proto/rw/thunk.proto:13:"),
        "{text}"
    );
    assert!(
        text.contains("(edition 2023, read as its proto2 rewrite)"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Images.

/// The image `protoc --include_imports --include_source_info --descriptor_set_out` would write
/// for `text`, made in-process: protox compiles the proto2 rewrite, and an editions file is
/// marked as such again (syntax "editions", edition 2023), as protoc writes it.
fn image_of(name: &str, text: &str) -> Vec<u8> {
    let sources = ProtoSources::from_texts([(name, text)]);
    let compiled = sources.compile(&[], "image").expect("compiles");
    let bytes = compiled.pool.encode_to_vec();
    if !text.starts_with("edition") {
        return bytes;
    }
    // prost-types 0.14 has no `edition` field: set it (EDITION_2023 = 1000) and the syntax
    // through the global descriptor of FileDescriptorSet.
    let desc = prost_reflect::DescriptorPool::global()
        .get_message_by_name("google.protobuf.FileDescriptorSet")
        .expect("descriptor.proto");
    let mut dynamic =
        prost_reflect::DynamicMessage::decode(desc, bytes.as_slice()).expect("set decodes");
    if let Some(prost_reflect::Value::List(files)) = dynamic.get_field_by_name_mut("file") {
        for f in files {
            if let prost_reflect::Value::Message(f) = f {
                if f.get_field_by_name("name").as_deref()
                    == Some(&prost_reflect::Value::String(name.into()))
                {
                    f.set_field_by_name("syntax", prost_reflect::Value::String("editions".into()));
                    f.set_field_by_name("edition", prost_reflect::Value::EnumNumber(1000));
                }
            }
        }
    }
    dynamic.encode_to_vec()
}

#[test]
fn an_image_and_the_sources_give_the_same_verdict() {
    for (label, head) in [
        (
            "proto3",
            PROTO3_THUNK.replace("int64 size = 2;", "int32 size = 2;"),
        ),
        (
            "editions",
            EDITION_THUNK.replace(
                "string kernel = 6;",
                "string kernel = 6 [features.utf8_validation = NONE];",
            ),
        ),
    ] {
        let base = if label == "proto3" {
            PROTO3_THUNK
        } else {
            EDITION_THUNK
        };
        let repo = editions_repo(&format!("image-{label}"), base);
        repo.write("proto/rw/thunk.proto", &head);
        let from_sources = repo.bot("rw.ThunkProto", "HEAD");
        repo.write("head.binpb", "");
        std::fs::write(
            repo.dir.join("head.binpb"),
            image_of("rw/thunk.proto", &head),
        )
        .expect("image written");
        std::fs::write(
            repo.dir.join("base.binpb"),
            image_of("rw/thunk.proto", base),
        )
        .expect("image written");
        let mut opts = repo.options("rw.ThunkProto", "HEAD");
        opts.head_image = Some(PathBuf::from("head.binpb"));
        let head_image = diff(&opts).expect("the bot runs on the head image");
        opts.base_image = Some(PathBuf::from("base.binpb"));
        let both_images = diff(&opts).expect("the bot runs on two images");
        assert!(
            !rules(&from_sources).is_empty(),
            "{label}: the fixture has findings"
        );
        assert_eq!(rules(&head_image), rules(&from_sources), "{label}");
        assert_eq!(rules(&both_images), rules(&from_sources), "{label}");
        assert_eq!(head_image.exit_code(), from_sources.exit_code(), "{label}");
    }
}

#[test]
fn a_malformed_image_is_a_typed_error() {
    let repo = editions_repo("badimage", PROTO3_THUNK);
    std::fs::write(repo.dir.join("head.binpb"), b"\x0a\xff\xff").expect("written");
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.head_image = Some(PathBuf::from("head.binpb"));
    let err = diff(&opts).expect_err("no verdict");
    assert!(matches!(err, Error::Descriptors { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("descriptor set of head.binpb does not decode: "),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Deletions reserving only the number, and the policy.

const KINDS: &str = r#"syntax = "proto3";
package rw;

enum Kind {
  KIND_UNSPECIFIED = 0;
  KIND_KERNEL = 1;
  KIND_GEMM = 2;
}

message ThunkProto {
  int64 id = 1;
  string foo = 11;
  Kind kind = 4;
}
"#;

/// The practice of the repository of issue 12: `reserved 11; // Was foo.`
fn number_only_repo(name: &str) -> TempRepo {
    let repo = TempRepo::new("realworld", name);
    repo.write("proto/rw/thunk.proto", KINDS);
    repo.commit("base", "2026-11-01");
    repo.write(
        "proto/rw/thunk.proto",
        &KINDS
            .replace("  string foo = 11;\n", "  reserved 11; // Was foo.\n")
            .replace("  KIND_GEMM = 2;\n", "  reserved 2; // Was KIND_GEMM.\n"),
    );
    repo
}

#[test]
fn deletion_reserving_only_the_number_is_an_error_by_default() {
    let repo = number_only_repo("number-only");
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        [
            "error enum-value-deleted rw.Kind.KIND_GEMM",
            "error field-deleted rw.ThunkProto.foo"
        ]
    );
    // The enum hint asks only for what is missing.
    assert_eq!(
        report.findings[0].hint,
        "add `reserved \"KIND_GEMM\";` to `rw.Kind`"
    );
    assert_eq!(
        report.findings[1].hint,
        "add `reserved \"foo\";` to `rw.ThunkProto` so that no later change reuses them"
    );
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn a_policy_can_accept_reserving_only_the_number() {
    let repo = number_only_repo("number-only-policy");
    repo.commit_policy(
        "[breaking]\n# Our practice: `reserved 11; // Was foo.`\nname_only_reservation = \"warning\"\n",
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        [
            "warning enum-value-deleted rw.Kind.KIND_GEMM",
            "warning field-deleted rw.ThunkProto.foo"
        ]
    );
    assert_eq!(report.exit_code(), 0);
    insta::assert_snapshot!(every_format(&report));
}

#[test]
fn a_policy_name_only_setting_leaves_unreserved_deletions_errors() {
    let repo = TempRepo::new("realworld", "policy-unreserved");
    repo.write("proto/rw/thunk.proto", KINDS);
    repo.commit("base", "2026-11-01");
    repo.write(
        "proto/rw/thunk.proto",
        &KINDS.replace("  string foo = 11;\n", ""),
    );
    repo.commit_policy("[breaking]\nname_only_reservation = \"off\"\n");
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), ["error field-deleted rw.ThunkProto.foo"]);
}

#[test]
fn policy_rules_and_path_exceptions() {
    let repo = TempRepo::new("realworld", "policy-paths");
    let with_old = KINDS
        .replace("package rw;", "package rw;\nimport \"legacy/old.proto\";")
        .replace("Kind kind = 4;", "Kind kind = 4;\n  legacy.Old old = 5;");
    repo.write("proto/rw/thunk.proto", &with_old);
    repo.write(
        "proto/legacy/old.proto",
        "syntax = \"proto3\";\npackage legacy;\nmessage Old { int32 a = 1; }\n",
    );
    repo.commit("base", "2026-11-01");
    repo.write(
        "proto/rw/thunk.proto",
        &with_old.replace("int64 id = 1;", "int64 ident = 1;"),
    );
    repo.write(
        "proto/legacy/old.proto",
        "syntax = \"proto3\";\npackage legacy;\nmessage Old { int32 b = 1; }\n",
    );
    let strict = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&strict),
        [
            "warning renamed legacy.Old.a",
            "warning renamed rw.ThunkProto.id",
        ]
    );
    repo.commit_policy(
        "[breaking.rules]\nrenamed = \"error\"\nstaged-rollout = \"off\"\n\n[[breaking.except]]\npath = \"proto/legacy/**\"\nrules = [\"renamed\"]\nseverity = \"note\"\n",
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        [
            "error renamed rw.ThunkProto.id",
            "note renamed legacy.Old.a"
        ]
    );
}

#[test]
fn a_malformed_policy_names_file_line_and_key() {
    let repo = number_only_repo("policy-bad");
    repo.write(
        "schema_history/policy.toml",
        "[breaking.rules]\nfield-deleted = \"error\"\nnumber-reused = \"loud\"\n",
    );
    let err = diff(&repo.options("rw.ThunkProto", "HEAD")).expect_err("no verdict");
    assert_eq!(
        err.to_string(),
        "schema_history/policy.toml:3: breaking.rules.number-reused: unknown severity \"loud\" (error, warning, note, off)"
    );
}

#[test]
fn this_repositorys_policy_is_the_strict_default() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("policy.toml");
    let text = std::fs::read_to_string(&path).expect("schema_history/policy.toml");
    let policy = schema_history::Policy::parse(&text, "policy.toml").expect("parses");
    for rule in Rule::ALL {
        assert_eq!(
            policy
                .rules
                .iter()
                .filter(|(r, _)| r == rule)
                .collect::<Vec<_>>(),
            [&(*rule, schema_history::Level::At(rule.severity()))],
            "{rule} is listed once, at its default severity"
        );
    }
    assert_eq!(
        policy.name_only_reservation,
        Some(schema_history::Level::At(Severity::Error))
    );
    assert!(policy.exceptions.is_empty());
}

// ---------------------------------------------------------------------------------------------
// History without snapshots.

const OLD_FIELD: &str = r#"syntax = "proto3";
package rw;

message ThunkProto {
  int64 id = 1;
  int64 legacy_offset = 3;
  string name = 2;
}
"#;

/// A repository without snapshots: field 3 used in January 2025, deleted unreserved in
/// February 2025, other changes in July 2025 (the base: its backward window reaches back to
/// January 2025).
fn long_ago_repo(name: &str) -> TempRepo {
    let repo = TempRepo::new("realworld", name);
    repo.write("proto/rw/thunk.proto", OLD_FIELD);
    repo.commit("add legacy_offset", "2025-01-10");
    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace("  int64 legacy_offset = 3;\n", ""),
    );
    repo.commit("drop legacy_offset", "2025-02-03");
    repo.write("README.md", "unrelated\n");
    repo.commit("docs", "2025-07-20");
    repo
}

#[test]
fn a_number_freed_a_year_ago_is_reused_without_snapshots() {
    let repo = long_ago_repo("reuse");
    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace("int64 legacy_offset = 3;", "string label = 3;"),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        [
            "error number-reused rw.ThunkProto.label",
            "note staged-rollout rw.ThunkProto.label"
        ]
    );
    assert!(
        redact(&report.findings[0].message)
            .contains("snapshot git <hash> (2025-01-10) used it for `legacy_offset`"),
        "{}",
        report.findings[0].message
    );
    insta::assert_snapshot!(every_format(&report));

    // The git history is what saw it: bounded before the deletion, the reuse goes unseen.
    let bounded = |depth: Option<usize>, since: Option<&str>| {
        let mut opts = repo.options("rw.ThunkProto", "HEAD");
        opts.git_history = GitHistoryBound {
            depth,
            since: since.map(date),
        };
        rules(&diff(&opts).expect("runs"))
    };
    let unseen = ["note staged-rollout rw.ThunkProto.label"];
    assert_eq!(bounded(Some(0), None), unseen);
    // The state in effect on the first day is read: on 2025-02-01 field 3 was still there.
    assert_eq!(
        bounded(None, Some("2025-02-01"))[0],
        "error number-reused rw.ThunkProto.label"
    );
    assert_eq!(bounded(None, Some("2025-02-04")), unseen);
    assert_eq!(bounded(Some(2), None), unseen);
    assert_eq!(
        bounded(Some(3), None)[0],
        "error number-reused rw.ThunkProto.label"
    );
}

/// The default reach is the backward window back from the base's commit date: a number freed
/// longer ago than that is in no artifact today's runtime loads, so its reuse is not seen
/// (an explicit `since` still reaches it).
#[test]
fn the_default_reach_is_the_backward_window_from_the_base() {
    let repo = long_ago_repo("window");
    repo.write("README.md", "unrelated, later\n");
    repo.commit("more docs", "2025-11-20");
    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace("int64 legacy_offset = 3;", "string label = 3;"),
    );
    // 2025-11-20 - 6 months = 2025-05-20: the state then (since 2025-02-03) lacks field 3.
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(rules(&report), ["note staged-rollout rw.ThunkProto.label"]);
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.git_history.since = Some(date("2025-01-01"));
    assert_eq!(
        rules(&diff(&opts).expect("runs"))[0],
        "error number-reused rw.ThunkProto.label"
    );
    // A `today` earlier than the base's date moves the window with it.
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.today = date("2025-07-25");
    assert_eq!(
        rules(&diff(&opts).expect("runs"))[0],
        "error number-reused rw.ThunkProto.label"
    );
}

/// A reuse inside the window is seen however many commits lie between: the reach is by date,
/// not by commit count (the old default, 1000 commits, about five weeks of XLA, hid it).
#[test]
fn a_reuse_behind_many_commits_inside_the_window_is_seen() {
    let repo = long_ago_repo("many");
    // 1200 commits that touch no proto, 2025-07-21 .. 2025-07-23 (one process: fast-import).
    let head = repo.git(&["rev-parse", "HEAD"]);
    let mut stream = String::new();
    for i in 0..1200u32 {
        let stamp = 1_753_099_200 + i64::from(i) * 120; // 2025-07-21T12:00Z, every 2 minutes
        let body = format!("note {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter Bot <bot@example.invalid> {stamp} +0000\ndata 4\nnote\n{}M 100644 inline README.md\ndata {}\n{body}\n",
            if i == 0 { format!("from {head}\n") } else { String::new() },
            body.len()
        ));
    }
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo.dir)
        .args(["fast-import", "--quiet", "--force"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stream.as_bytes())
        .expect("stream");
    assert!(child.wait().expect("fast-import").success());
    repo.git(&["reset", "-q", "--hard", "main"]);
    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace("int64 legacy_offset = 3;", "string label = 3;"),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report)[0],
        "error number-reused rw.ThunkProto.label",
        "{:?}",
        rules(&report)
    );
    // `--history-depth` stays an extra cap when given.
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.git_history.depth = Some(1000);
    assert_eq!(
        rules(&diff(&opts).expect("runs")),
        ["note staged-rollout rw.ThunkProto.label"]
    );
}

/// A field deleted with its number and name reserved, then restored exactly (a rollback of the
/// deletion): old artifacts decode it as exactly that field, so it is no reuse, although a state
/// in between reserved both. A restore under another type, or a number reserved with no user
/// in sight, is.
#[test]
fn a_field_restored_through_its_reservation_is_not_a_reuse() {
    let repo = TempRepo::new("realworld", "restore-reserved");
    repo.write("proto/rw/thunk.proto", OLD_FIELD);
    repo.commit("add legacy_offset", "2025-06-10");
    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace(
            "  int64 legacy_offset = 3;\n",
            "  reserved 3;\n  reserved \"legacy_offset\";\n",
        ),
    );
    repo.commit("drop legacy_offset, reserved", "2025-07-03");
    repo.write("proto/rw/thunk.proto", OLD_FIELD);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        ["note staged-rollout rw.ThunkProto.legacy_offset"]
    );

    repo.write(
        "proto/rw/thunk.proto",
        &OLD_FIELD.replace("int64 legacy_offset = 3;", "uint64 legacy_offset = 3;"),
    );
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report)[0],
        "error number-reused rw.ThunkProto.legacy_offset"
    );
    assert!(
        redact(&report.findings[0].message)
            .contains("snapshot git <hash> (2025-06-10) used it for `legacy_offset` as `int64`"),
        "{}",
        report.findings[0].message
    );

    // Bounded after the deletion, only the reservation is in sight: what 3 meant is unknown.
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.git_history.since = Some(date("2025-07-04"));
    repo.write("proto/rw/thunk.proto", OLD_FIELD);
    let found = rules(&diff(&opts).expect("runs"));
    assert_eq!(
        found[..2],
        [
            "error number-reused rw.ThunkProto.legacy_offset",
            "error name-reused rw.ThunkProto.legacy_offset"
        ],
        "{found:?}"
    );
}

#[test]
fn a_rollback_restoring_a_field_is_not_a_reuse() {
    let repo = long_ago_repo("rollback");
    repo.write("proto/rw/thunk.proto", OLD_FIELD);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(
        rules(&report),
        ["note staged-rollout rw.ThunkProto.legacy_offset"]
    );
    assert_eq!(report.exit_code(), 0);
    insta::assert_snapshot!(every_format(&report));
}

// ---------------------------------------------------------------------------------------------
// Creation.

/// The one `schema-created` note of a report.
fn created_note(report: &Report) -> &Finding {
    let notes: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::SchemaCreated)
        .collect();
    assert_eq!(notes.len(), 1, "{:?}", rules(report));
    assert_eq!(notes[0].severity, Severity::Note);
    notes[0]
}

#[test]
fn creating_the_compared_file_is_a_note() {
    let repo = TempRepo::new("realworld", "create-file");
    repo.write("README.md", "no protos yet\n");
    repo.commit("start", "2026-11-01");
    repo.write("proto/rw/thunk.proto", PROTO3_THUNK);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(report.exit_code(), 0);
    let created = created_note(&report);
    assert_eq!(
        redact(&created.message),
        "`rw.ThunkProto` is created by this change: at the base (HEAD (<hash>)) proto has no protos"
    );
    insta::assert_snapshot!(every_format(&report));

    // Other protos at the base, not the compared file.
    let repo = TempRepo::new("realworld", "create-named");
    repo.write(
        "proto/rw/other.proto",
        "syntax = \"proto3\";\npackage rw;\nmessage Other {}\n",
    );
    repo.commit("start", "2026-11-01");
    repo.write("proto/rw/thunk.proto", PROTO3_THUNK);
    let mut opts = repo.options("rw.ThunkProto", "HEAD");
    opts.spec.files = vec!["proto/rw/thunk.proto".into()];
    let report = diff(&opts).expect("runs");
    assert_eq!(report.exit_code(), 0);
    assert_eq!(
        redact(&created_note(&report).message),
        "`rw.ThunkProto` is created by this change: at the base (HEAD (<hash>)) proto/rw/thunk.proto has no protos"
    );
}

#[test]
fn creating_the_root_message_is_a_note() {
    let repo = TempRepo::new("realworld", "create-root");
    repo.write(
        "proto/rw/thunk.proto",
        "syntax = \"proto3\";\npackage rw;\nmessage Slice { int64 offset = 1; }\n",
    );
    repo.commit("start", "2026-11-01");
    repo.write("proto/rw/thunk.proto", PROTO3_THUNK);
    let report = repo.bot("rw.ThunkProto", "HEAD");
    assert_eq!(report.exit_code(), 0);
    assert_eq!(
        redact(&created_note(&report).message),
        "`rw.ThunkProto` is created by this change: at the base (HEAD (<hash>)) `rw.ThunkProto` is not defined"
    );
    insta::assert_snapshot!(every_format(&report));
}

// ---------------------------------------------------------------------------------------------
// Output that fits.

fn big_report() -> Report {
    let mut findings = Vec::new();
    for i in 0..40 {
        findings.push(Finding::new(
            Rule::FieldDeleted,
            format!("rw.ThunkProto.f{i}"),
            format!("field `f{i}` = {i} deleted from `rw.ThunkProto` without reserving its number and name"),
            Some(Location { file: "proto/rw/thunk.proto".into(), line: i + 1, column: 3 }),
            format!("add `reserved {i};` and `reserved \"f{i}\";` to `rw.ThunkProto`"),
        ));
    }
    for i in 0..1500 {
        findings.push(Finding::new(
            Rule::StagedRollout,
            format!("rw.ThunkProto.new_field_with_a_long_name_{i}"),
            format!("new construct `rw.ThunkProto.new_field_with_a_long_name_{i}`: keep compiler emission off by default until 2026-12-15"),
            Some(Location { file: "proto/rw/thunk.proto".into(), line: 100 + i, column: 3 }),
            "emit it by default from 2026-12-15 (14 days after it lands), or mark it ignorable",
        ));
    }
    let mut report = Report {
        base: "main".into(),
        head: "working tree".into(),
        today: date(TODAY),
        findings,
        waived: Vec::new(),
    };
    report.sort();
    report
}

#[test]
fn the_markdown_comment_fits_githubs_limit() {
    let report = big_report();
    let md = report.render(Format::Markdown);
    assert!(
        md.chars().count() <= MARKDOWN_LIMIT,
        "{} characters",
        md.chars().count()
    );
    // Verdict and the error table first, every error shown, the notes collapsed and counted.
    assert!(md.starts_with("## Schema compatibility bot\n\n❌ **Schema compatibility: this change breaks the contract.**"));
    assert!(md.contains("| `field-deleted` | error | 40 |\n| `staged-rollout` | note | 1500 |"));
    assert_eq!(md.matches("- **error** `field-deleted`").count(), 40);
    assert!(md.contains("<details><summary>Notes</summary>"));
    let shown = md.matches("- **note** `staged-rollout`").count();
    assert!(shown > 100 && shown < 1500, "{shown} notes shown");
    assert!(
        md.contains(&format!(
            "*Not shown, to fit the comment limit: 0 error(s), 0 warning(s), {} note(s) or waived finding(s). `aot schema diff --format text` with the same options prints every finding.*",
            1500 - shown
        )),
        "{}",
        &md[md.len() - 600..]
    );
}

#[test]
fn github_annotations_are_capped_with_a_summary() {
    let report = big_report();
    let out = report.render(Format::Github);
    let annotations = out.lines().filter(|l| l.starts_with("::")).count();
    assert_eq!(annotations, GITHUB_ANNOTATIONS + 1);
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("::error file="))
            .count(),
        40
    );
    assert!(out.contains(
        "::notice title=schema-bot::1490 more finding(s) not annotated (0 error(s), 0 warning(s), 1490 note(s)); `aot schema diff --format text` prints every finding\n"
    ));
}

#[test]
fn no_verdict_still_writes_each_format() {
    let message = "compiling the protos of main: proto/a.proto:3:1: expected ';'";
    assert_eq!(
        render_error(Format::Github, message),
        "::error title=schema-bot::the schema bot could not run: compiling the protos of main: proto/a.proto:3:1: expected ';'\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render_error(Format::Json, message)).expect("json");
    assert_eq!(json["error"]["message"], message);
    assert_eq!(json["error"]["exit_code"], 2);
    assert!(
        render_error(Format::Markdown, message).contains("**No verdict: the bot could not run.**")
    );
}

#[test]
fn proto2_and_proto3_features_are_what_the_syntax_means() {
    let sources = ProtoSources::from_texts([
        (
            "rw/two.proto",
            "syntax = \"proto2\";\npackage rw;\nimport \"rw/three.proto\";\nenum E { A = 1; }\nmessage Two {\n  required int32 r = 1;\n  repeated int32 x = 2;\n  repeated int32 p = 3 [packed = true];\n  optional string s = 4;\n  optional group G = 5 { optional int32 a = 1; }\n  optional E e = 6;\n  repeated Two more = 7;\n  optional Three three = 8;\n}\n",
        ),
        (
            "rw/three.proto",
            "syntax = \"proto3\";\npackage rw;\nenum F { F0 = 0; }\nmessage Three {\n  int32 a = 1;\n  repeated int32 b = 2;\n  repeated int32 c = 3 [packed = false];\n  string s = 4;\n  repeated Three t = 5;\n  F f = 6;\n}\n",
        ),
    ]);
    let compiled = sources.compile(&[], "test").expect("compiles");
    let model = schema_history::Model::extract(&compiled, "rw.Two", "rw.ignorable").expect("model");
    insta::assert_snapshot!(model.listing().join("\n"));
}

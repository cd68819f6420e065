//! `sharding={...}`: every form XLA prints parses and prints back byte for byte, converts to
//! `OpSharding` and back unchanged, and each malformed form is refused with XLA's message.
use hlo::{from_proto, to_proto};
use hlo_text::parse_sharding;

/// Shardings as XLA prints them (jax 0.10.2's HLO and XLA's own tests).
const FORMS: &[&str] = &[
    "{replicated}",
    "{manual}",
    "{unknown}",
    "{unreduced}",
    "{maximal device=3}",
    "{devices=[2,1]<=[2]}",
    "{devices=[2]<=[2]}",
    "{devices=[2,1,1]<=[2]}",
    "{devices=[2,1]1,0}",
    "{devices=[2,2]<=[2,2]T(1,0)}",
    "{devices=[2,2]0,2,1,3}",
    "{devices=[1,2,2]<=[4] last_tile_dim_replicate}",
    "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
    "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}",
    "{devices=[2,2]<=[4] last_tile_dims={manual}}",
    "{replicated shard_as 1}",
    "{devices=[2]<=[2] shard_like 7}",
    "{manual metadata={op_name=\"a\"}}",
    "{{devices=[2,1]<=[2]}, {replicated}}",
    "{}",
    "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, /*index=5*/{manual}}",
];

#[test]
fn every_form_prints_back_as_written() {
    for text in FORMS {
        let s = parse_sharding(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&s.to_string(), text);
    }
}

#[test]
fn last_tile_dims_replicated_alone_is_the_short_form() {
    let s = parse_sharding("{devices=[1,2]<=[2] last_tile_dims={replicated}}").unwrap();
    assert_eq!(
        s.to_string(),
        "{devices=[1,2]<=[2] last_tile_dim_replicate}"
    );
    assert!(s.is_replicated());
}

#[test]
fn tile_assignments_expand_to_devices() {
    let s = parse_sharding("{devices=[2,2]<=[2,2]T(1,0)}").unwrap();
    let t = s.tiling().unwrap();
    assert_eq!(t.assignment.devices(), vec![0, 2, 1, 3]);
    assert_eq!(t.data_dims(), &[2, 2]);
    let r = parse_sharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").unwrap();
    assert_eq!(r.tiling().unwrap().data_dims(), &[2, 1]);
    assert!(!r.is_replicated());
    assert_eq!(r.device_span(), 4);
}

#[test]
fn malformed_shardings_are_refused_with_xla_messages() {
    let cases: &[(&str, &str)] = &[
        (
            "{replicated device=1}",
            "replicated shardings should not have any devices assigned",
        ),
        (
            "{maximal}",
            "maximal shardings should have exactly one device assigned",
        ),
        (
            "{devices=[2]0}",
            "non-maximal shardings must have more than one device assigned",
        ),
        (
            "{last_tile_dim_replicate}",
            "non-maximal shardings must have a tile assignment list including dimensions",
        ),
        (
            "{devices=[2,2]<=[4]T(1,0)}",
            "iota_transpose_perm should have the same rank as iota_reshape_dims : expected 1, saw 2.",
        ),
        (
            "{devices=[2,2]<=[2]}",
            "sharding: iota of 2 devices for a tile array of 4",
        ),
        (
            "{devices=[3]0,1}",
            "sharding: 2 devices listed for a tile array of 3",
        ),
        (
            "{devices=[2]<=[2] last_tile_dims={tiled}}",
            "unknown sharding type 'tiled' in last_tile_dims",
        ),
        ("{sharded}", "unknown word 'sharded' in sharding"),
        (
            "{manual devices=[2]0,1}",
            "manual shardings should not have any devices assigned",
        ),
        (
            "{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}",
            "last_tile_dim_replicate and last_tile_dims together",
        ),
        (
            "{devices=[65536,2]<=[131072]}",
            "sharding: tile dimensions [65536, 2] are not positive or too many devices (at most 65536)",
        ),
    ];
    for (text, message) in cases {
        let e = parse_sharding(text).expect_err(text);
        assert!(
            e.message.contains(message),
            "{text}: got `{}`, want `{message}`",
            e.message
        );
    }
}

#[test]
fn shardings_survive_the_proto() {
    let mut body = String::from("HloModule m\n\nENTRY e {\n");
    for (i, text) in FORMS.iter().enumerate() {
        let tuple = text.starts_with("{{") || *text == "{}";
        let shape = if tuple {
            "(f32[4,4], f32[4,4])"
        } else {
            "f32[4,4]"
        };
        if tuple && *text != "{}" && text.matches("{replicated}").count() > 2 {
            continue; // six elements: covered by the printer test
        }
        let shape = if *text == "{}" { "()" } else { shape };
        body.push_str(&format!(
            "  p{i} = {shape} parameter({i}), sharding={text}\n"
        ));
    }
    body.push_str("  ROOT t = () tuple()\n}\n");
    let m = hlo_text::parse_module(&body).unwrap();
    let p = to_proto(&m).unwrap();
    let back = from_proto(&p).unwrap();
    assert_eq!(hlo_text::print_module(&back), hlo_text::print_module(&m));
    // The iota form stays an iota on the wire (XLA's fields 9 and 10).
    let ops = &p.hlo_module.as_ref().unwrap().computations[0].instructions;
    let iota = ops
        .iter()
        .find_map(|i| {
            i.sharding
                .as_ref()
                .filter(|s| s.iota_transpose_perm == [1, 0])
        })
        .unwrap();
    assert_eq!(iota.iota_reshape_dims, vec![2, 2]);
    assert!(iota.tile_assignment_devices.is_empty());
}

#[test]
fn malformed_op_shardings_are_refused() {
    use proto::xla::op_sharding::Type;
    use proto::xla::OpSharding;
    let m = hlo_text::parse_module(
        "HloModule m\nENTRY e {\n ROOT p = f32[4] parameter(0), sharding={replicated}\n}\n",
    )
    .unwrap();
    let cases: Vec<(OpSharding, &str)> = vec![
        (
            OpSharding {
                r#type: Type::Other as i32,
                tile_assignment_dimensions: vec![2],
                tile_assignment_devices: vec![0, 1, 2],
                ..Default::default()
            },
            "sharding: 3 devices listed for a tile array of 2",
        ),
        (
            OpSharding {
                r#type: Type::Other as i32,
                tile_assignment_dimensions: vec![4],
                iota_reshape_dims: vec![4],
                iota_transpose_perm: vec![0, 1],
                ..Default::default()
            },
            "iota reshape dimensions and transpose of different ranks",
        ),
        (
            OpSharding {
                r#type: Type::Maximal as i32,
                tile_assignment_devices: vec![0, 1],
                ..Default::default()
            },
            "maximal sharding with devices [0, 1]",
        ),
        (
            OpSharding {
                r#type: 17,
                ..Default::default()
            },
            "sharding type 17",
        ),
    ];
    for (sharding, message) in cases {
        let mut p = to_proto(&m).unwrap();
        let module = p.hlo_module.as_mut().unwrap();
        module.computations[0].instructions[0].sharding = Some(sharding);
        let e = from_proto(&p).expect_err(message).to_string();
        assert!(e.contains(message), "got `{e}`, want `{message}`");
    }
}

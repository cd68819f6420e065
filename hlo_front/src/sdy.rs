//! Shardy's attribute text (`#sdy.mesh<["x"=2]>`, `#sdy.sharding<@mesh, [{"x"}, {}]>`,
//! `#sdy.sharding_per_value<[...]>`, `#sdy<manual_axes{"x"}>`) and its conversion to
//! [`HloSharding`], as XLA's Shardy export does (`convertToHloSharding` in
//! `xla/service/spmd/shardy/stablehlo_round_trip/export_shardings.cc`): the tile array is the
//! mesh's device iota with the sharded axes first (in dimension order), then the manual axes,
//! then the replicated ones, canonicalized as XLA's `TileAssignment` and `HloSharding::Subgroup`
//! do, so the text printed is the text XLA prints.
//!
//! Both front ends use it: StableHLO's `sdy.sharding` / `sdy.sharding_constraint` /
//! `sdy.manual_computation`, and the `xla.sdy.*` frontend attributes of JAX's HLO text.

use hlo::*;

/// What is wrong with a Shardy attribute, or with converting its sharding to an HLO sharding.
/// Each variant's text is the message; the front ends prefix the attribute it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SdyError {
    /// A token other than the syntax's: `expected '{token}' at `{at}``.
    #[error("expected '{token}' at `{at}`")]
    Expected {
        /// The token the syntax needs.
        token: String,
        /// Up to 40 bytes of what follows instead.
        at: String,
    },
    /// A `"` with no closing one.
    #[error("unterminated string")]
    UnterminatedString,
    /// A word where an integer goes.
    #[error("expected an integer, found `{found}`")]
    NotAnInteger {
        /// The word.
        found: String,
    },
    /// Text after a complete attribute.
    #[error("unexpected `{at}`")]
    Trailing {
        /// Up to 40 bytes of it.
        at: String,
    },
    /// A mesh axis of size 0, negative, or over `MAX_SHARDING_DEVICES`.
    #[error("axis \"{name}\" has size {size}")]
    AxisSize {
        /// The axis.
        name: String,
        /// Its size.
        size: i64,
    },
    /// Something other than `device_ids=` after a mesh's axes.
    #[error("expected device_ids= in the mesh")]
    ExpectedDeviceIds,
    /// A mesh whose axes multiply to more than `MAX_SHARDING_DEVICES`.
    #[error("a mesh of more than {MAX_SHARDING_DEVICES} devices")]
    TooManyDevices,
    /// `device_ids` of another length than the mesh has devices.
    #[error("{ids} device ids for a mesh of {devices} devices")]
    DeviceIdCount {
        /// How many ids are listed.
        ids: usize,
        /// The product of the axis sizes.
        devices: i64,
    },
    /// A sub-axis (`"x":(1)2`), which XLA's export splits and this reader does not.
    #[error("sub-axis \"{name}\":(...) is not supported")]
    SubAxis {
        /// The axis.
        name: String,
    },
    /// `@name` of a mesh the module does not define.
    #[error("mesh @{name} is not defined")]
    UndefinedMesh {
        /// The name.
        name: String,
    },
    /// Neither `@name` nor an inline mesh where a sharding's mesh goes.
    #[error("expected a mesh at `{at}`")]
    ExpectedMesh {
        /// Up to 40 bytes of what is there.
        at: String,
    },
    /// A sharding field other than `replicated` and `unreduced`.
    #[error("unknown sharding field `{key}`")]
    UnknownField {
        /// The field.
        key: String,
    },
    /// A sharding naming an axis its mesh does not have.
    #[error("axis \"{name}\" is not in the mesh")]
    AxisNotInMesh {
        /// The axis.
        name: String,
    },
    /// A sharding using one axis twice.
    #[error("axis \"{name}\" is used twice")]
    AxisUsedTwice {
        /// The axis.
        name: String,
    },
    /// Unreduced axes inside a manual computation, which HLO shardings cannot say.
    #[error("both unreduced and manual axes")]
    UnreducedAndManual,
}

type Result<T> = std::result::Result<T, SdyError>;

/// A mesh: named axes with sizes, and optionally an explicit device order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mesh {
    /// `("x", 2)`, in mesh order.
    pub axes: Vec<(String, i64)>,
    /// `device_ids=[...]` (empty: the iota).
    pub device_ids: Vec<i64>,
}

impl Mesh {
    /// The number of devices.
    pub fn devices(&self) -> i64 {
        self.axes.iter().map(|(_, s)| *s).product::<i64>().max(1)
    }

    fn axis(&self, name: &str) -> Result<(usize, i64)> {
        self.axes
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| (i, self.axes[i].1))
            .ok_or_else(|| SdyError::AxisNotInMesh {
                name: name.to_owned(),
            })
    }
}

/// Named meshes of a module (`sdy.mesh @name = <...>`).
pub type Meshes = Vec<(String, Mesh)>;

/// A tensor sharding as written: the mesh (by name or inline), and per dimension the axes that
/// split it; the `replicated={...}` and `unreduced={...}` axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSharding {
    /// The mesh.
    pub mesh: Mesh,
    /// One list of axis names per dimension, major first.
    pub dims: Vec<Vec<String>>,
    /// `unreduced={...}`.
    pub unreduced: Vec<String>,
}

/// A tiny reader over Shardy's attribute syntax.
struct Reader<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(s: &'a str) -> Self {
        Reader { s, pos: 0 }
    }

    fn ws(&mut self) {
        while self.s[self.pos..].starts_with(|c: char| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(SdyError::Expected {
                token: t.to_owned(),
                at: self.rest().to_owned(),
            })
        }
    }

    fn rest(&self) -> &str {
        let r = &self.s[self.pos..];
        &r[..r.len().min(40)]
    }

    fn string(&mut self) -> Result<String> {
        self.expect("\"")?;
        let end = self.s[self.pos..]
            .find('"')
            .ok_or(SdyError::UnterminatedString)?;
        let v = self.s[self.pos..self.pos + end].to_string();
        self.pos += end + 1;
        Ok(v)
    }

    fn word(&mut self) -> String {
        self.ws();
        let n = self.s[self.pos..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(self.s.len() - self.pos);
        let w = self.s[self.pos..self.pos + n].to_string();
        self.pos += n;
        w
    }

    fn int(&mut self) -> Result<i64> {
        let w = self.word();
        w.parse().map_err(|_| SdyError::NotAnInteger { found: w })
    }

    fn end(&mut self) -> Result<()> {
        self.ws();
        if self.pos == self.s.len() {
            Ok(())
        } else {
            Err(SdyError::Trailing {
                at: self.rest().to_owned(),
            })
        }
    }

    /// `["x"=2, "y"=4]` then optionally `, device_ids=[...]`, inside `<...>`.
    fn mesh_body(&mut self) -> Result<Mesh> {
        self.expect("[")?;
        let mut axes = Vec::new();
        if !self.eat("]") {
            loop {
                let name = self.string()?;
                self.expect("=")?;
                let size = self.int()?;
                if size <= 0 || size > MAX_SHARDING_DEVICES {
                    return Err(SdyError::AxisSize { name, size });
                }
                axes.push((name, size));
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut device_ids = Vec::new();
        if self.eat(",") {
            if self.word() != "device_ids" {
                return Err(SdyError::ExpectedDeviceIds);
            }
            self.expect("=")?;
            self.expect("[")?;
            loop {
                device_ids.push(self.int()?);
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mesh = Mesh { axes, device_ids };
        if mesh
            .axes
            .iter()
            .try_fold(1i64, |acc, (_, s)| {
                acc.checked_mul(*s).filter(|&p| p <= MAX_SHARDING_DEVICES)
            })
            .is_none()
        {
            return Err(SdyError::TooManyDevices);
        }
        if !mesh.device_ids.is_empty()
            && mesh.device_ids.len() as i64 != mesh.devices()
            && !mesh.axes.is_empty()
        {
            return Err(SdyError::DeviceIdCount {
                ids: mesh.device_ids.len(),
                devices: mesh.devices(),
            });
        }
        Ok(mesh)
    }

    /// `{"x", "y"}` (with `?` for an open dimension and a `p1` priority after it).
    fn axis_list(&mut self) -> Result<Vec<String>> {
        self.expect("{")?;
        let mut axes = Vec::new();
        loop {
            self.ws();
            if self.eat("}") {
                break;
            }
            if self.eat("?") {
            } else {
                let name = self.string()?;
                if self.eat(":") {
                    return Err(SdyError::SubAxis { name });
                }
                axes.push(name);
            }
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        // A priority (`p0`) follows the braces without a comma.
        if self.s[self.pos..].starts_with('p') {
            self.word();
        }
        Ok(axes)
    }

    /// `<@mesh, [{"x"}, {}]>` or `<mesh<[...]>, [...], replicated={...}, unreduced={...}>`.
    fn tensor_sharding(&mut self, meshes: &Meshes) -> Result<TensorSharding> {
        self.expect("<")?;
        let mesh = if self.eat("@") {
            let name = self.word();
            meshes
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, m)| m.clone())
                .ok_or(SdyError::UndefinedMesh { name })?
        } else if self.eat("#sdy.mesh<") || self.eat("mesh<") {
            let m = self.mesh_body()?;
            self.expect(">")?;
            m
        } else {
            return Err(SdyError::ExpectedMesh {
                at: self.rest().to_owned(),
            });
        };
        self.expect(",")?;
        self.expect("[")?;
        let mut dims = Vec::new();
        if !self.eat("]") {
            loop {
                dims.push(self.axis_list()?);
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut unreduced = Vec::new();
        while self.eat(",") {
            let key = self.word();
            self.expect("=")?;
            let axes = self.axis_list()?;
            match key.as_str() {
                "replicated" => {}
                "unreduced" => unreduced = axes,
                _ => return Err(SdyError::UnknownField { key }),
            }
        }
        self.expect(">")?;
        Ok(TensorSharding {
            mesh,
            dims,
            unreduced,
        })
    }
}

/// Parses a mesh: `#sdy.mesh<["x"=2]>` or `<["x"=2]>`.
pub fn parse_mesh(text: &str) -> Result<Mesh> {
    let mut r = Reader::new(text.trim());
    let _ = r.eat("#sdy.mesh");
    r.expect("<")?;
    let m = r.mesh_body()?;
    r.expect(">")?;
    r.end()?;
    Ok(m)
}

/// Parses a tensor sharding: `#sdy.sharding<@mesh, [...]>` or `<@mesh, [...]>`.
pub fn parse_tensor_sharding(text: &str, meshes: &Meshes) -> Result<TensorSharding> {
    let mut r = Reader::new(text.trim());
    let _ = r.eat("#sdy.sharding");
    let t = r.tensor_sharding(meshes)?;
    r.end()?;
    Ok(t)
}

/// Parses a list of tensor shardings: `#sdy.sharding_per_value<[<...>, ...]>` or
/// `[<...>, ...]`.
pub fn parse_per_value(text: &str, meshes: &Meshes) -> Result<Vec<TensorSharding>> {
    let mut r = Reader::new(text.trim());
    let wrapped = r.eat("#sdy.sharding_per_value<");
    r.expect("[")?;
    let mut out = Vec::new();
    if !r.eat("]") {
        loop {
            out.push(r.tensor_sharding(meshes)?);
            if r.eat("]") {
                break;
            }
            r.expect(",")?;
        }
    }
    if wrapped {
        r.expect(">")?;
    }
    r.end()?;
    Ok(out)
}

/// Parses manual axes: `#sdy<manual_axes{"x"}>` or `{"x", "y"}`.
pub fn parse_manual_axes(text: &str) -> Result<Vec<String>> {
    let mut r = Reader::new(text.trim());
    let wrapped = r.eat("#sdy<manual_axes");
    let axes = r.axis_list()?;
    if wrapped {
        r.expect(">")?;
    }
    r.end()?;
    Ok(axes)
}

/// XLA's `CanonicalizeIotaDims`: drop size-1 dimensions and merge runs that the transpose
/// keeps in order; an empty result is `[1]`.
pub fn canonical_iota(dims: &[i64], perm: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut dims = dims.to_vec();
    let mut perm = perm.to_vec();
    loop {
        // Remove size-1 dimensions, renumbering the permutation.
        let mut new_index = vec![-1i64; dims.len()];
        let mut kept = Vec::new();
        for (i, &d) in dims.iter().enumerate() {
            if d != 1 {
                new_index[i] = kept.len() as i64;
                kept.push(d);
            }
        }
        perm = perm
            .iter()
            .filter_map(|&p| (new_index[p as usize] >= 0).then_some(new_index[p as usize]))
            .collect();
        dims = kept;
        // Merge consecutive output dimensions that read consecutive input dimensions.
        let mut changed = false;
        let mut base = 0usize;
        for i in 1..perm.len() {
            let (b, d) = (perm[base] as usize, perm[i] as usize);
            if b + (i - base) == d {
                dims[b] *= dims[d];
                dims[d] = 1;
                changed = true;
            } else {
                base = i;
            }
        }
        if !changed {
            break;
        }
    }
    if dims.is_empty() {
        return (vec![1], vec![0]);
    }
    (dims, perm)
}

/// Converts a Shardy tensor sharding to an HLO sharding, with `manual_axes` manual (XLA's
/// `convertToHloSharding`).
pub fn to_hlo_sharding(t: &TensorSharding, manual_axes: &[String]) -> Result<HloSharding> {
    let mesh = &t.mesh;
    if mesh.axes.is_empty() {
        return Ok(match mesh.device_ids.first() {
            Some(&d) => ShardingKind::Maximal(d).into(),
            None => HloSharding::replicated(),
        });
    }
    if mesh.axes.len() == manual_axes.len() {
        return Ok(HloSharding::manual());
    }
    if !t.unreduced.is_empty() && !manual_axes.is_empty() {
        return Err(SdyError::UnreducedAndManual);
    }
    let mut tile_dims = vec![1i64; t.dims.len()];
    let mut position: Vec<Option<usize>> = vec![None; mesh.axes.len()];
    let mut next = 0usize;
    let mut place = |axis: &str, position: &mut Vec<Option<usize>>| -> Result<i64> {
        let (i, size) = mesh.axis(axis)?;
        if position[i].is_some() {
            return Err(SdyError::AxisUsedTwice {
                name: axis.to_owned(),
            });
        }
        position[i] = Some(next);
        next += 1;
        Ok(size)
    };
    for (d, axes) in t.dims.iter().enumerate() {
        for a in axes {
            tile_dims[d] *= place(a, &mut position)?;
        }
    }
    let mut kinds = Vec::new();
    for (group, kind) in [
        (manual_axes, SubgroupKind::Manual),
        (&t.unreduced[..], SubgroupKind::Unreduced),
    ] {
        if !group.is_empty() {
            let mut size = 1;
            for a in group {
                size *= place(a, &mut position)?;
            }
            tile_dims.push(size);
            kinds.push(kind);
        }
    }
    let mut perm = vec![0i64; mesh.axes.len()];
    let mut replicated = 1;
    let mut replicated_pos = next;
    for (i, (_, size)) in mesh.axes.iter().enumerate() {
        match position[i] {
            Some(p) => perm[p] = i as i64,
            None => {
                perm[replicated_pos] = i as i64;
                replicated_pos += 1;
                replicated *= size;
            }
        }
    }
    if replicated > 1 {
        tile_dims.push(replicated);
        kinds.push(SubgroupKind::Replicated);
    }
    let reshape: Vec<i64> = mesh.axes.iter().map(|(_, s)| *s).collect();
    let assignment = if mesh.device_ids.is_empty() {
        let (r, p) = canonical_iota(&reshape, &perm);
        TileAssignment::Iota {
            dims: tile_dims,
            reshape_dims: r,
            transpose_perm: p,
        }
    } else {
        let order = TileAssignment::Iota {
            dims: tile_dims.clone(),
            reshape_dims: reshape,
            transpose_perm: perm,
        }
        .devices();
        let devices = order
            .iter()
            .map(|&i| mesh.device_ids.get(i as usize).copied().unwrap_or(i))
            .collect();
        TileAssignment::Devices {
            dims: tile_dims,
            devices,
        }
    };
    Ok(subgroup(assignment, kinds))
}

/// XLA's `HloSharding::Subgroup` for what [`to_hlo_sharding`] builds (kinds already in XLA's
/// order, manual, unreduced, replicated): size-1 subgroup dimensions are dropped, a tiling of
/// one kind with no data split is that kind, a replicated subgroup as large as the tile array
/// is `{replicated}`.
fn subgroup(assignment: TileAssignment, kinds: Vec<SubgroupKind>) -> HloSharding {
    let dims = assignment.dims().to_vec();
    let data = dims.len() - kinds.len();
    let data_tiles: i64 = dims[..data].iter().product();
    let mut kept_dims = dims[..data].to_vec();
    let mut kept_kinds = Vec::new();
    for (k, &d) in kinds.iter().zip(&dims[data..]) {
        if d != 1 {
            kept_dims.push(d);
            kept_kinds.push(*k);
        }
    }
    if data_tiles == 1 && kept_kinds.len() == 1 {
        match kept_kinds[0] {
            SubgroupKind::Manual => return HloSharding::manual(),
            SubgroupKind::Replicated => return HloSharding::replicated(),
            SubgroupKind::Unreduced => return ShardingKind::Unreduced.into(),
            SubgroupKind::Maximal => {}
        }
    }
    if data_tiles == 1 && kept_kinds.is_empty() {
        return HloSharding::replicated();
    }
    let assignment = match assignment {
        TileAssignment::Iota {
            reshape_dims,
            transpose_perm,
            ..
        } => TileAssignment::Iota {
            dims: kept_dims,
            reshape_dims,
            transpose_perm,
        },
        TileAssignment::Devices { devices, .. } => TileAssignment::Devices {
            dims: kept_dims,
            devices,
        },
    };
    ShardingKind::Tiled(Tiling {
        assignment,
        subgroups: kept_kinds,
    })
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meshes() -> Meshes {
        vec![
            ("mesh".into(), parse_mesh(r#"<["x"=2]>"#).unwrap()),
            (
                "m2".into(),
                parse_mesh(r#"#sdy.mesh<["x"=2, "y"=2]>"#).unwrap(),
            ),
        ]
    }

    fn hlo(text: &str, manual: &[&str]) -> String {
        let t = parse_tensor_sharding(text, &meshes()).unwrap();
        let manual: Vec<String> = manual.iter().map(|s| s.to_string()).collect();
        to_hlo_sharding(&t, &manual).unwrap().to_string()
    }

    #[test]
    fn converts_as_xla_prints() {
        // What jax 0.10.2 prints next to each sdy sharding in its HLO.
        assert_eq!(
            hlo(r#"#sdy.sharding<@mesh, [{"x"}, {}]>"#, &[]),
            "{devices=[2,1]<=[2]}"
        );
        assert_eq!(hlo(r#"<@mesh, [{}, {}]>"#, &[]), "{replicated}");
        assert_eq!(hlo(r#"<@mesh, [{"x"}, {}]>"#, &["x"]), "{manual}");
        assert_eq!(
            hlo(r#"<@m2, [{"x"}, {}]>"#, &[]),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
        );
        assert_eq!(
            hlo(r#"<@m2, [{"y"}, {"x"}]>"#, &[]),
            "{devices=[2,2]<=[2,2]T(1,0)}"
        );
        assert_eq!(hlo(r#"<@m2, [{"x", "y"}]>"#, &[]), "{devices=[4]<=[4]}");
        assert_eq!(
            hlo(r#"<@m2, [{"y"}, {?}]>"#, &[]),
            "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"
        );
        assert_eq!(
            hlo(r#"<@m2, [{}, {}]>"#, &["x"]),
            "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}"
        );
        assert_eq!(
            hlo(r#"<@m2, [{"y"}, {}]>"#, &["x"]),
            "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}"
        );
    }

    #[test]
    fn reads_lists_and_axes() {
        let v = parse_per_value(
            r#"#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>"#,
            &meshes(),
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            parse_manual_axes(r#"#sdy<manual_axes{"x"}>"#).unwrap(),
            vec!["x"]
        );
        assert_eq!(parse_manual_axes(r#"{"x", "y"}"#).unwrap(), vec!["x", "y"]);
        assert_eq!(
            parse_tensor_sharding(r#"<@nope, []>"#, &meshes())
                .unwrap_err()
                .to_string(),
            "mesh @nope is not defined"
        );
        let t = parse_tensor_sharding(r#"<@mesh, [{"z"}]>"#, &meshes()).unwrap();
        assert_eq!(
            to_hlo_sharding(&t, &[]).unwrap_err().to_string(),
            "axis \"z\" is not in the mesh"
        );
        assert!(parse_mesh(r#"<["x"=0]>"#).is_err());
    }

    /// One exact message per `SdyError` variant, each from the input that raises it.
    #[test]
    fn each_error_names_its_problem() {
        let meshes = meshes();
        let sharding = |text: &str| parse_tensor_sharding(text, &meshes).map(|_| ());
        let to_hlo = |text: &str, manual: &[&str]| {
            let t = parse_tensor_sharding(text, &meshes).expect("parses");
            let manual: Vec<String> = manual.iter().map(|s| s.to_string()).collect();
            to_hlo_sharding(&t, &manual).map(|_| ())
        };
        let cases: Vec<(Result<()>, String)> = vec![
            (
                parse_mesh("[\"x\"=2]").map(|_| ()),
                "expected '<' at `[\"x\"=2]`".into(),
            ),
            (
                parse_mesh("<[\"x=2]>").map(|_| ()),
                "unterminated string".into(),
            ),
            (
                parse_mesh("<[\"x\"=two]>").map(|_| ()),
                "expected an integer, found `two`".into(),
            ),
            (
                parse_mesh("<[\"x\"=2]> extra").map(|_| ()),
                "unexpected `extra`".into(),
            ),
            (
                parse_mesh("<[\"x\"=0]>").map(|_| ()),
                "axis \"x\" has size 0".into(),
            ),
            (
                parse_mesh("<[\"x\"=2], ids=[0]>").map(|_| ()),
                "expected device_ids= in the mesh".into(),
            ),
            (
                parse_mesh("<[\"x\"=65536, \"y\"=65536]>").map(|_| ()),
                format!("a mesh of more than {MAX_SHARDING_DEVICES} devices"),
            ),
            (
                parse_mesh("<[\"x\"=2], device_ids=[0]>").map(|_| ()),
                "1 device ids for a mesh of 2 devices".into(),
            ),
            (
                sharding("<@mesh, [{\"x\":(1)2}]>"),
                "sub-axis \"x\":(...) is not supported".into(),
            ),
            (sharding("<@nope, []>"), "mesh @nope is not defined".into()),
            (sharding("<[], []>"), "expected a mesh at `[], []>`".into()),
            (
                sharding("<@mesh, [], sideways={}>"),
                "unknown sharding field `sideways`".into(),
            ),
            (
                to_hlo("<@mesh, [{\"z\"}]>", &[]),
                "axis \"z\" is not in the mesh".into(),
            ),
            (
                to_hlo("<@m2, [{\"x\", \"x\"}]>", &[]),
                "axis \"x\" is used twice".into(),
            ),
            (
                to_hlo("<@m2, [{}], unreduced={\"y\"}>", &["x"]),
                "both unreduced and manual axes".into(),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got.expect_err(&want).to_string(), want);
        }
    }
}

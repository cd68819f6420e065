//! Operands: registers, special registers, immediates, addresses and symbols.
use std::fmt;

/// A (non-special) register name, `%`-prefixed or a plain identifier declared with `.reg`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Register(pub String);

impl Register {
    /// The name as written (`%r12`).
    pub fn name(&self) -> &str {
        &self.0
    }

    /// Splits a parameterized register name into prefix and index: `%r12` → `("%r", 12)`.
    /// `None` when the name does not end in digits.
    pub fn split_index(&self) -> Option<(&str, u32)> {
        let s = self.0.as_str();
        let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits == s.len() {
            return None;
        }
        let (p, n) = s.split_at(s.len() - digits);
        n.parse().ok().map(|n| (p, n))
    }
}

/// A component `.x` / `.y` / `.z` of a vector special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }

    /// `x`, `y` or `z`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// A special (read-only, hardware) register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// `%tid.d`: thread index in the CTA.
    Tid(Dim),
    /// `%ntid.d`: CTA dimensions.
    Ntid(Dim),
    /// `%ctaid.d`: CTA index in the grid.
    Ctaid(Dim),
    /// `%nctaid.d`: grid dimensions.
    Nctaid(Dim),
    /// `%clusterid.d`
    Clusterid(Dim),
    /// `%nclusterid.d`
    Nclusterid(Dim),
    /// `%cluster_ctaid.d`
    ClusterCtaid(Dim),
    /// `%cluster_nctaid.d`
    ClusterNctaid(Dim),
    /// `%cluster_ctarank`
    ClusterCtarank,
    /// `%cluster_nctarank`
    ClusterNctarank,
    /// `%is_explicit_cluster`
    IsExplicitCluster,
    /// `%laneid`
    Laneid,
    /// `%warpid`
    Warpid,
    /// `%nwarpid`
    Nwarpid,
    /// `%smid`
    Smid,
    /// `%nsmid`
    Nsmid,
    /// `%gridid`
    Gridid,
    /// `%lanemask_eq`
    LanemaskEq,
    /// `%lanemask_le`
    LanemaskLe,
    /// `%lanemask_lt`
    LanemaskLt,
    /// `%lanemask_ge`
    LanemaskGe,
    /// `%lanemask_gt`
    LanemaskGt,
    /// `%clock`
    Clock,
    /// `%clock_hi`
    ClockHi,
    /// `%clock64`
    Clock64,
    /// `%globaltimer`
    Globaltimer,
    /// `%globaltimer_lo`
    GlobaltimerLo,
    /// `%globaltimer_hi`
    GlobaltimerHi,
    /// `%dynamic_smem_size`
    DynamicSmemSize,
    /// `%total_smem_size`
    TotalSmemSize,
    /// `%aggr_smem_size`
    AggrSmemSize,
    /// `%envregN` (0..=31)
    Envreg(u8),
    /// `%pmN` (0..=7)
    Pm(u8),
    /// `%pmN_64` (0..=7)
    Pm64(u8),
}

impl SpecialReg {
    /// Parses a special register name including `%` and component (`%tid.x`).
    pub fn parse(s: &str) -> Option<SpecialReg> {
        use SpecialReg as S;
        let body = s.strip_prefix('%')?;
        if let Some((base, comp)) = body.split_once('.') {
            let d = match comp {
                "x" => Dim::X,
                "y" => Dim::Y,
                "z" => Dim::Z,
                _ => return None,
            };
            return Some(match base {
                "tid" => S::Tid(d),
                "ntid" => S::Ntid(d),
                "ctaid" => S::Ctaid(d),
                "nctaid" => S::Nctaid(d),
                "clusterid" => S::Clusterid(d),
                "nclusterid" => S::Nclusterid(d),
                "cluster_ctaid" => S::ClusterCtaid(d),
                "cluster_nctaid" => S::ClusterNctaid(d),
                _ => return None,
            });
        }
        let num = |prefix: &str, max: u8| -> Option<u8> {
            let n: u8 = body.strip_prefix(prefix)?.parse().ok()?;
            (n <= max && !body[prefix.len()..].starts_with('+')).then_some(n)
        };
        Some(match body {
            "cluster_ctarank" => S::ClusterCtarank,
            "cluster_nctarank" => S::ClusterNctarank,
            "is_explicit_cluster" => S::IsExplicitCluster,
            "laneid" => S::Laneid,
            "warpid" => S::Warpid,
            "nwarpid" => S::Nwarpid,
            "smid" => S::Smid,
            "nsmid" => S::Nsmid,
            "gridid" => S::Gridid,
            "lanemask_eq" => S::LanemaskEq,
            "lanemask_le" => S::LanemaskLe,
            "lanemask_lt" => S::LanemaskLt,
            "lanemask_ge" => S::LanemaskGe,
            "lanemask_gt" => S::LanemaskGt,
            "clock" => S::Clock,
            "clock_hi" => S::ClockHi,
            "clock64" => S::Clock64,
            "globaltimer" => S::Globaltimer,
            "globaltimer_lo" => S::GlobaltimerLo,
            "globaltimer_hi" => S::GlobaltimerHi,
            "dynamic_smem_size" => S::DynamicSmemSize,
            "total_smem_size" => S::TotalSmemSize,
            "aggr_smem_size" => S::AggrSmemSize,
            _ => {
                if let Some(n) = body.strip_suffix("_64").and_then(|b| {
                    let n: u8 = b.strip_prefix("pm")?.parse().ok()?;
                    (n <= 7).then_some(n)
                }) {
                    S::Pm64(n)
                } else if let Some(n) = num("envreg", 31) {
                    S::Envreg(n)
                } else if let Some(n) = num("pm", 7) {
                    S::Pm(n)
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecialReg as S;
        let dim = |f: &mut fmt::Formatter<'_>, n: &str, d: &Dim| write!(f, "%{n}.{}", d.as_str());
        match self {
            S::Tid(d) => dim(f, "tid", d),
            S::Ntid(d) => dim(f, "ntid", d),
            S::Ctaid(d) => dim(f, "ctaid", d),
            S::Nctaid(d) => dim(f, "nctaid", d),
            S::Clusterid(d) => dim(f, "clusterid", d),
            S::Nclusterid(d) => dim(f, "nclusterid", d),
            S::ClusterCtaid(d) => dim(f, "cluster_ctaid", d),
            S::ClusterNctaid(d) => dim(f, "cluster_nctaid", d),
            S::ClusterCtarank => f.write_str("%cluster_ctarank"),
            S::ClusterNctarank => f.write_str("%cluster_nctarank"),
            S::IsExplicitCluster => f.write_str("%is_explicit_cluster"),
            S::Laneid => f.write_str("%laneid"),
            S::Warpid => f.write_str("%warpid"),
            S::Nwarpid => f.write_str("%nwarpid"),
            S::Smid => f.write_str("%smid"),
            S::Nsmid => f.write_str("%nsmid"),
            S::Gridid => f.write_str("%gridid"),
            S::LanemaskEq => f.write_str("%lanemask_eq"),
            S::LanemaskLe => f.write_str("%lanemask_le"),
            S::LanemaskLt => f.write_str("%lanemask_lt"),
            S::LanemaskGe => f.write_str("%lanemask_ge"),
            S::LanemaskGt => f.write_str("%lanemask_gt"),
            S::Clock => f.write_str("%clock"),
            S::ClockHi => f.write_str("%clock_hi"),
            S::Clock64 => f.write_str("%clock64"),
            S::Globaltimer => f.write_str("%globaltimer"),
            S::GlobaltimerLo => f.write_str("%globaltimer_lo"),
            S::GlobaltimerHi => f.write_str("%globaltimer_hi"),
            S::DynamicSmemSize => f.write_str("%dynamic_smem_size"),
            S::TotalSmemSize => f.write_str("%total_smem_size"),
            S::AggrSmemSize => f.write_str("%aggr_smem_size"),
            S::Envreg(n) => write!(f, "%envreg{n}"),
            S::Pm(n) => write!(f, "%pm{n}"),
            S::Pm64(n) => write!(f, "%pm{n}_64"),
        }
    }
}

/// An immediate constant.
///
/// Integer literals are 64-bit: `Int` holds signed values (decimal, hex, octal, binary, with or
/// without a leading `-`), `UInt` holds literals with the `U` suffix or too large for `i64`.
/// `0fXXXXXXXX` is `F32` (raw bits) and `0dXXXXXXXXXXXXXXXX` / decimal floats are `F64` (raw
/// bits; PTX decimal float literals are double precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Immediate {
    /// A signed 64-bit integer literal.
    Int(i64),
    /// An unsigned 64-bit integer literal (`U` suffix, or above `i64::MAX`).
    UInt(u64),
    /// Single-precision float, raw IEEE bits (`0f3F800000`).
    F32(u32),
    /// Double-precision float, raw IEEE bits (`0d3FF0000000000000`, `1.0`).
    F64(u64),
}

impl Immediate {
    /// The literal's 64 raw bits (sign-extended for `Int`, zero-extended for `F32`).
    pub fn bits(self) -> u64 {
        match self {
            Immediate::Int(v) => v as u64,
            Immediate::UInt(v) => v,
            Immediate::F32(b) => b as u64,
            Immediate::F64(b) => b,
        }
    }

    /// The value as an f64 (integers converted, floats widened).
    pub fn as_f64(self) -> f64 {
        match self {
            Immediate::Int(v) => v as f64,
            Immediate::UInt(v) => v as f64,
            Immediate::F32(b) => f32::from_bits(b) as f64,
            Immediate::F64(b) => f64::from_bits(b),
        }
    }
}

/// The base of an address operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AddressBase {
    /// `[%rd1]`
    Reg(Register),
    /// `[sym]`: a variable or parameter.
    Symbol(String),
    /// `[1024]`: an absolute address.
    Imm(u64),
}

/// An address operand `[base]`, `[base+off]`, `[base+-off]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// What the offset is added to: a register, a variable or parameter, or an absolute address.
    pub base: AddressBase,
    /// Byte offset (0 when absent).
    pub offset: i64,
}

/// One instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(Register),
    /// A special register (`%tid.x`, `%laneid`, ...).
    Special(SpecialReg),
    /// An immediate.
    Imm(Immediate),
    /// A symbol: label, variable, parameter or function name. With an offset (`sym+4`) when
    /// used as a value, e.g. `mov.u64 %rd1, sym+4;`.
    Symbol {
        /// The symbol.
        name: String,
        /// Byte offset (0 when absent).
        offset: i64,
    },
    /// An address `[...]`.
    Address(Address),
    /// A vector `{a, b, ...}` (elements are registers, immediates or [`Operand::Sink`]).
    Vector(Vec<Operand>),
    /// `_`: a discarded destination.
    Sink,
    /// `!%p`: a negated predicate source.
    Not(Register),
    /// `a|b`: a destination with a predicate output (`shfl ... %r1|%p1`, `setp ... %p|%q`).
    Pair(Box<Operand>, Register),
    /// `(a, b, ...)`: a parenthesised list (call return values and arguments).
    List(Vec<Operand>),
}

impl Operand {
    /// A register operand from a name.
    pub fn reg(name: &str) -> Operand {
        Operand::Reg(Register(name.to_string()))
    }

    /// A symbol operand without offset.
    pub fn symbol(name: &str) -> Operand {
        Operand::Symbol {
            name: name.to_string(),
            offset: 0,
        }
    }

    /// A signed integer immediate.
    pub fn int(v: i64) -> Operand {
        Operand::Imm(Immediate::Int(v))
    }

    /// An f32 immediate (printed as `0fXXXXXXXX`).
    pub fn f32(v: f32) -> Operand {
        Operand::Imm(Immediate::F32(v.to_bits()))
    }

    /// An f64 immediate (printed as `0dXXXXXXXXXXXXXXXX`).
    pub fn f64(v: f64) -> Operand {
        Operand::Imm(Immediate::F64(v.to_bits()))
    }

    /// An address `[reg+offset]`.
    pub fn addr_reg(reg: &str, offset: i64) -> Operand {
        Operand::Address(Address {
            base: AddressBase::Reg(Register(reg.to_string())),
            offset,
        })
    }

    /// An address `[symbol+offset]`.
    pub fn addr_symbol(symbol: &str, offset: i64) -> Operand {
        Operand::Address(Address {
            base: AddressBase::Symbol(symbol.to_string()),
            offset,
        })
    }

    /// The register, if this is [`Operand::Reg`].
    pub fn as_reg(&self) -> Option<&Register> {
        match self {
            Operand::Reg(r) => Some(r),
            _ => None,
        }
    }

    /// The symbol name, if this is [`Operand::Symbol`].
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            Operand::Symbol { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The address, if this is [`Operand::Address`].
    pub fn as_address(&self) -> Option<&Address> {
        match self {
            Operand::Address(a) => Some(a),
            _ => None,
        }
    }

    /// The immediate, if this is [`Operand::Imm`].
    pub fn as_imm(&self) -> Option<Immediate> {
        match self {
            Operand::Imm(i) => Some(*i),
            _ => None,
        }
    }
}

//! `sharding={...}`: XLA's `HloParserImpl::ParseSharding`, into [`HloSharding`].
use super::{Parser, Result};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::TokenKind;
use hlo::*;

/// Why the parts of one `{...}` do not make a sharding: XLA's parser's checks, with its
/// messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum PartsError {
    /// `replicated`, `manual`, `unknown` or `unreduced` with a device or tile assignment.
    #[error("{0} shardings should not have any devices assigned")]
    DevicesAssigned(&'static str),
    /// `maximal` without exactly one device.
    #[error("maximal shardings should have exactly one device assigned")]
    MaximalDevice,
    /// A tiled sharding without `devices=`.
    #[error("non-maximal shardings must have a tile assignment list including dimensions")]
    NoAssignment,
    /// A tiled sharding over one device.
    #[error("non-maximal shardings must have more than one device assigned")]
    OneDevice,
    /// Both ways of naming subgroups.
    #[error("last_tile_dim_replicate and last_tile_dims together")]
    SubgroupsTwice,
}

/// What one `{...}` of a single sharding said, before it is checked.
#[derive(Default)]
struct Parts {
    replicated: bool,
    maximal: bool,
    manual: bool,
    unknown: bool,
    unreduced: bool,
    device: Option<i64>,
    assignment: Option<TileAssignment>,
    last_tile_dim_replicate: bool,
    last_tile_dims: Option<Vec<SubgroupKind>>,
    shard_group: Option<ShardGroup>,
    metadata: Vec<OpMetadata>,
}

impl Parser<'_> {
    /// A sharding: `{replicated}`, `{maximal device=1}`, `{devices=[2,1]<=[2]}`, ... or a
    /// tuple of them, `{{replicated}, {manual}}` (`{}` is the empty tuple).
    pub(super) fn sharding(&mut self) -> Result<HloSharding> {
        let loc = self.loc();
        self.expect(&TokenKind::LBrace, "'{' starting a sharding")?;
        let sharding = if *self.peek() == TokenKind::LBrace || *self.peek() == TokenKind::RBrace {
            let mut elems = Vec::new();
            while *self.peek() == TokenKind::LBrace {
                self.enter()?;
                elems.push(self.sharding()?);
                self.leave();
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RBrace, "'}' closing a tuple sharding")?;
            HloSharding::from(ShardingKind::Tuple(elems))
        } else {
            let parts = self.sharding_parts()?;
            self.expect(&TokenKind::RBrace, "'}' closing a sharding")?;
            assemble(parts)
                .map_err(|e| ParseError::new(loc, ParseErrorKind::BadAttribute, e.to_string()))?
        };
        sharding.check().map_err(|m| {
            ParseError::new(loc, ParseErrorKind::BadAttribute, format!("sharding: {m}"))
        })?;
        Ok(sharding)
    }

    fn sharding_parts(&mut self) -> Result<Parts> {
        let mut p = Parts::default();
        while *self.peek() != TokenKind::RBrace {
            let (word, wloc) = self.expect_word("a sharding keyword or '}'")?;
            match word.as_str() {
                "replicated" => p.replicated = true,
                "maximal" => p.maximal = true,
                "manual" => p.manual = true,
                "unknown" => p.unknown = true,
                "unreduced" => p.unreduced = true,
                "last_tile_dim_replicate" => p.last_tile_dim_replicate = true,
                "shard_as" => p.shard_group = Some(ShardGroup::As(self.int("a shard group id")?)),
                "shard_like" => {
                    p.shard_group = Some(ShardGroup::Like(self.int("a shard group id")?))
                }
                "device" => {
                    self.expect(&TokenKind::Equal, "'=' after device")?;
                    p.device = Some(self.int("device= attribute must be an integer")?);
                }
                "devices" => {
                    self.expect(&TokenKind::Equal, "'=' after devices")?;
                    p.assignment = Some(self.tile_assignment()?);
                }
                "last_tile_dims" => {
                    self.expect(&TokenKind::Equal, "'=' after last_tile_dims")?;
                    let kinds = self.braced_list("last_tile_dims", |q| {
                        let (w, l) = q.expect_word("a sharding type")?;
                        SubgroupKind::from_name(&w).ok_or_else(|| {
                            ParseError::new(
                                l,
                                ParseErrorKind::BadAttribute,
                                format!("unknown sharding type '{w}' in last_tile_dims"),
                            )
                        })
                    })?;
                    p.last_tile_dims = Some(kinds);
                }
                "metadata" => {
                    self.expect(&TokenKind::Equal, "'=' after metadata")?;
                    p.metadata = self.sharding_metadata()?;
                }
                _ => {
                    return Err(ParseError::new(
                        wloc,
                        ParseErrorKind::BadAttribute,
                        format!("unknown word '{word}' in sharding: expected replicated, maximal, manual, unknown, unreduced, device=, devices=, last_tile_dim_replicate, last_tile_dims=, shard_as, shard_like or metadata="),
                    ))
                }
            }
        }
        Ok(p)
    }

    /// After `devices=`: `[2,2]0,1,2,3` or `[2,2]<=[4]` or `[2,2]<=[2,2]T(1,0)`.
    fn tile_assignment(&mut self) -> Result<TileAssignment> {
        let dims = self.bracket_ints("tile assignment dimensions")?;
        if self.eat(&TokenKind::LessEq) {
            let reshape_dims = self.bracket_ints("iota reshape dimensions")?;
            let transpose_perm = if self.is_word("T") {
                self.bump();
                self.expect(&TokenKind::LParen, "'(' after T")?;
                let mut perm = vec![self.int("a transpose dimension")?];
                while self.eat(&TokenKind::Comma) {
                    perm.push(self.int("a transpose dimension")?);
                }
                self.expect(&TokenKind::RParen, "')' closing the transpose")?;
                perm
            } else {
                (0..reshape_dims.len() as i64).collect()
            };
            if transpose_perm.len() != reshape_dims.len() {
                return self.err(
                    ParseErrorKind::BadAttribute,
                    format!(
                        "iota_transpose_perm should have the same rank as iota_reshape_dims : expected {}, saw {}.",
                        reshape_dims.len(),
                        transpose_perm.len()
                    ),
                );
            }
            return Ok(TileAssignment::Iota {
                dims,
                reshape_dims,
                transpose_perm,
            });
        }
        let mut devices = vec![self.int("a device id")?];
        while *self.peek() == TokenKind::Comma
            && matches!(self.peek_at(1), TokenKind::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()))
        {
            self.bump();
            devices.push(self.int("a device id")?);
        }
        Ok(TileAssignment::Devices { dims, devices })
    }

    /// `[1,2,3]` (at least one entry).
    fn bracket_ints(&mut self, what: &str) -> Result<Vec<i64>> {
        self.expect(&TokenKind::LBracket, &format!("'[' starting {what}"))?;
        let mut out = vec![self.int(what)?];
        while self.eat(&TokenKind::Comma) {
            out.push(self.int(what)?);
        }
        self.expect(&TokenKind::RBracket, &format!("']' closing {what}"))?;
        Ok(out)
    }

    /// `{op_name="a"}` or `{{op_name="a"}, {op_name="b"}}`.
    fn sharding_metadata(&mut self) -> Result<Vec<OpMetadata>> {
        if *self.peek_at(1) == TokenKind::LBrace {
            self.braced_list("sharding metadata", |p| p.metadata())
        } else {
            Ok(vec![self.metadata()?])
        }
    }
}

/// XLA's checks after reading one sharding, in its order and with its messages.
fn assemble(p: Parts) -> std::result::Result<HloSharding, PartsError> {
    let no_devices = |what: &'static str| -> std::result::Result<(), PartsError> {
        if p.device.is_some() || p.assignment.is_some() {
            return Err(PartsError::DevicesAssigned(what));
        }
        Ok(())
    };
    let kind = if p.replicated {
        no_devices("replicated")?;
        ShardingKind::Replicated
    } else if p.maximal {
        match (p.device, &p.assignment) {
            (Some(d), None) => ShardingKind::Maximal(d),
            _ => return Err(PartsError::MaximalDevice),
        }
    } else if p.manual {
        no_devices("manual")?;
        ShardingKind::Manual
    } else if p.unknown {
        no_devices("unknown")?;
        ShardingKind::Unknown
    } else if p.unreduced {
        no_devices("unreduced")?;
        ShardingKind::Unreduced
    } else {
        let Some(assignment) = p.assignment else {
            return Err(PartsError::NoAssignment);
        };
        if let TileAssignment::Devices { devices, .. } = &assignment {
            if devices.len() <= 1 {
                return Err(PartsError::OneDevice);
            }
        }
        let subgroups = match (p.last_tile_dim_replicate, p.last_tile_dims) {
            (true, Some(_)) => return Err(PartsError::SubgroupsTwice),
            (true, None) => vec![SubgroupKind::Replicated],
            (false, kinds) => kinds.unwrap_or_default(),
        };
        ShardingKind::Tiled(Tiling {
            assignment,
            subgroups,
        })
    };
    Ok(HloSharding {
        kind,
        shard_group: p.shard_group,
        metadata: p.metadata,
    })
}

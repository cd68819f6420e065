//! `stablehlo.custom_call`: the target, its API version and backend config (a string for the
//! legacy APIs, the typed-FFI attribute dictionary for `api_version = 4`), and the layouts the
//! target reads and writes (`operand_layouts` / `result_layouts`: cuSOLVER's handlers take
//! column-major matrices) with the outputs that may reuse an operand's buffer.
//!
//! Layouts become XLA's HLO form: `operand_layout_constraints` (each operand's shape with its
//! layout) and layouts on the custom call's own result shape. The compiler moves the bytes
//! (docs/custom_calls.md); this front end only records what the module says.

use super::*;
use hlo::Layout;

impl Front<'_> {
    pub(super) fn lower_custom_call(&mut self, op: &Op) -> Result<Lowered> {
        let mut a = Attrs::default();
        let Some(Attr::Str(target)) = op.get(&["call_target_name"]) else {
            return Err(self.bad(op, "custom_call needs a call target"));
        };
        if target == "ApproxTopK" {
            return self.lower_approx_top_k(op);
        }
        a.custom_call_target = Some(target.clone());
        a.api_version = self.api_version(op)?;
        // JAX writes its FFI calls' attributes as a dictionary `mhlo.backend_config` and leaves
        // `api_version` at its default; a dictionary has no meaning for the legacy APIs, so
        // (as XLA's StableHLO import does) it makes the call a typed-FFI one.
        let dictionary = matches!(
            op.get(&["mhlo.backend_config", "backend_config"]),
            Some(Attr::Dict(..))
        );
        if dictionary && op.get(&["api_version"]).is_none() {
            a.api_version = Some("API_VERSION_TYPED_FFI".into());
        }
        let typed_ffi = a.api_version.as_deref() == Some("API_VERSION_TYPED_FFI");
        a.backend_config = self.backend_config(op, typed_ffi)?;
        if let Some(b) = self.bool_attr(op, &["has_side_effect"])? {
            if b {
                a.custom_call_has_side_effect = Some(true);
            }
        }
        if let Some(Attr::List(calls)) = op.get(&["called_computations"]) {
            let mut ids = Vec::new();
            for c in calls {
                let Attr::Symbol(f) = c else {
                    return Err(self.bad(op, "called_computations must be @functions"));
                };
                ids.push(self.func_id(&f.clone(), op.loc));
            }
            if !ids.is_empty() {
                a.called_computations = Some(ids);
            }
        }
        a.output_to_operand_aliasing = self.output_operand_aliases(op)?;
        let mut shape = self.result_shape(op);
        if let Some(layouts) = self.layouts(op, "operand_layouts")? {
            a.operand_layout_constraints = Some(self.operand_constraints(op, &layouts)?);
            let results = self.layouts(op, "result_layouts")?.ok_or_else(|| {
                self.bad(op, "custom_call has operand_layouts but no result_layouts")
            })?;
            shape = self.laid_out_results(op, shape, &results)?;
        } else if self.layouts(op, "result_layouts")?.is_some() {
            return Err(self.bad(op, "custom_call has result_layouts but no operand_layouts"));
        }
        let id = self.add(Opcode::CustomCall, shape, op.operands.clone(), a, op.loc);
        Ok(if op.result_types.len() == 1 {
            Lowered::One(id)
        } else {
            Lowered::Tuple(id, op.result_types.len())
        })
    }

    /// `api_version`: an integer or an enum name; absent means the original API.
    fn api_version(&self, op: &Op) -> Result<Option<String>> {
        let version = match op.get(&["api_version"]) {
            None => 1,
            Some(Attr::Int(i)) => *i,
            Some(Attr::Enum(e)) => match e.as_str() {
                "API_VERSION_ORIGINAL" => 1,
                "API_VERSION_STATUS_RETURNING" => 2,
                "API_VERSION_STATUS_RETURNING_UNIFIED" => 3,
                "API_VERSION_TYPED_FFI" => 4,
                _ => 0,
            },
            Some(_) => 0,
        };
        Ok(match version {
            1 => None,
            2 => Some("API_VERSION_STATUS_RETURNING".into()),
            3 => Some("API_VERSION_STATUS_RETURNING_UNIFIED".into()),
            4 => Some("API_VERSION_TYPED_FFI".into()),
            other => return Err(self.bad(op, format!("unknown api_version {other}"))),
        })
    }

    /// The backend config: a string for the legacy APIs; for the typed FFI the attribute
    /// dictionary, kept as its source text (`{algorithm = 0 : ui8, lower = true}`), which is
    /// what XLA's HLO holds. JAX writes it as `mhlo.backend_config` (a discardable attribute)
    /// or `backend_config` (the op's own, StableHLO >= 1.3).
    fn backend_config(&self, op: &Op, typed_ffi: bool) -> Result<Option<String>> {
        match op.get(&["mhlo.backend_config", "backend_config"]) {
            None => Ok(None),
            Some(Attr::Str(s)) if s.is_empty() => Ok(None),
            Some(Attr::Str(s)) if !typed_ffi => Ok(Some(s.clone())),
            Some(Attr::Dict(d, _)) if d.is_empty() && typed_ffi => Ok(None),
            Some(Attr::Dict(_, text)) if typed_ffi => Ok(Some(text.clone())),
            Some(Attr::Str(_)) => Err(self.bad(
                op,
                "backend_config of a typed-FFI custom call (api_version = 4) must be a dictionary",
            )),
            Some(Attr::Dict(..)) => Err(self.bad(
                op,
                "a backend_config dictionary needs api_version = 4 (the typed FFI)",
            )),
            Some(_) => Err(self.bad(op, "backend_config must be a string or a dictionary")),
        }
    }

    /// `operand_layouts` / `result_layouts`: one minor-to-major list per operand or result
    /// (`dense<[0, 1]> : tensor<2xindex>`); `None` when absent or empty.
    fn layouts(&self, op: &Op, name: &str) -> Result<Option<Vec<Vec<i64>>>> {
        let Some(v) = op.get(&[name]) else {
            return Ok(None);
        };
        let Attr::List(items) = v else {
            return Err(self.bad(op, format!("custom_call {name} must be a list of layouts")));
        };
        if items.is_empty() {
            return Ok(None);
        }
        items
            .iter()
            .map(|l| match l {
                // `dense<> : tensor<0xindex>`: the layout of a scalar.
                Attr::Dense(Dense::Elems(e), _) if e.is_empty() => Some(Vec::new()),
                other => ints(other),
            })
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| self.bad(op, format!("custom_call {name} must hold integer lists")))
    }

    /// Each operand's shape with the layout `operand_layouts` gives it.
    fn operand_constraints(&self, op: &Op, layouts: &[Vec<i64>]) -> Result<Vec<Shape>> {
        if layouts.len() != op.operands.len() {
            return Err(self.bad(
                op,
                format!(
                    "custom_call has {} operand(s) but {} operand_layouts",
                    op.operands.len(),
                    layouts.len()
                ),
            ));
        }
        op.operands
            .iter()
            .zip(layouts)
            .enumerate()
            .map(|(i, (&o, l))| self.with_layout(op, self.shape_of(o).clone(), l, "operand", i))
            .collect()
    }

    /// The result shape with the layouts of `result_layouts` (one per result, in order).
    fn laid_out_results(&self, op: &Op, shape: Shape, layouts: &[Vec<i64>]) -> Result<Shape> {
        if layouts.len() != op.result_types.len() {
            return Err(self.bad(
                op,
                format!(
                    "custom_call has {} result(s) but {} result_layouts",
                    op.result_types.len(),
                    layouts.len()
                ),
            ));
        }
        match shape {
            Shape::Tuple(elems) if op.result_types.len() != 1 => Ok(Shape::Tuple(
                elems
                    .into_iter()
                    .zip(layouts)
                    .enumerate()
                    .map(|(i, (s, l))| self.with_layout(op, s, l, "result", i))
                    .collect::<Result<_>>()?,
            )),
            one => self.with_layout(op, one, &layouts[0], "result", 0),
        }
    }

    /// `shape` with the minor-to-major order `l`, which must be a permutation of its
    /// dimensions.
    fn with_layout(&self, op: &Op, shape: Shape, l: &[i64], what: &str, i: usize) -> Result<Shape> {
        let Shape::Array(mut a) = shape else {
            return Err(self.bad(
                op,
                format!("custom_call {what} {i} has a layout but is not an array"),
            ));
        };
        let mut seen = vec![false; a.dims.len()];
        let is_permutation = l.len() == a.dims.len()
            && l.iter().all(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| seen.get_mut(d))
                    .is_some_and(|s| !std::mem::replace(s, true))
            });
        if !is_permutation {
            return Err(self.bad(
                op,
                format!(
                    "custom_call {what} {i} layout {l:?} is not a permutation of its {} dimension(s)",
                    a.dims.len()
                ),
            ));
        }
        // A scalar has no layout to state (XLA prints `s32[]`).
        if !a.dims.is_empty() {
            a.layout = Some(Layout::from_minor_to_major(l.to_vec()));
        }
        Ok(Shape::Array(a))
    }

    /// `output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0],
    /// operand_index = 0, operand_tuple_indices = []>]`.
    fn output_operand_aliases(&self, op: &Op) -> Result<Option<Vec<OutputOperandAlias>>> {
        let Some(v) = op.get(&["output_operand_aliases"]) else {
            return Ok(None);
        };
        let Attr::List(items) = v else {
            return Err(self.bad(op, "output_operand_aliases must be a list"));
        };
        if items.is_empty() {
            return Ok(None);
        }
        let bad = || {
            self.bad(
                op,
                "output_operand_aliases entries must be #stablehlo.output_operand_alias<...>",
            )
        };
        let list = |f: &[(String, Attr)], name: &str| -> Result<Vec<i64>> {
            match field(f, name) {
                None => Ok(Vec::new()),
                Some(a) => ints(a).ok_or_else(bad),
            }
        };
        items
            .iter()
            .map(|item| {
                let Attr::Struct(_, f) = item else {
                    return Err(bad());
                };
                let operand = match field(f, "operand_index") {
                    Some(Attr::Int(i)) => i64::try_from(*i).map_err(|_| bad())?,
                    _ => return Err(bad()),
                };
                Ok(OutputOperandAlias {
                    output_index: list(f, "output_tuple_indices")?,
                    operand,
                    operand_index: list(f, "operand_tuple_indices")?,
                })
            })
            .collect::<Result<_>>()
            .map(Some)
    }
}

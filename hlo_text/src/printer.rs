//! HLO text printer: writes an [`HloModule`] in XLA's text form. The output re-parses to an equal
//! module (`parse_module(&print_module(&m)) == m`).

use std::fmt::{self, Write};

use crate::lexer::{tokenize, TokenKind};
use hlo::Shape;
use hlo::*;

/// Printing options.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrintOptions {
    /// Prefix instruction and computation names with `%` (XLA's default).
    pub sigils: bool,
    /// Print each operand's shape before its name (`add(f32[4] %a, f32[4] %b)`).
    pub operand_shapes: bool,
    /// Print `(p: shape, ...) -> shape` signatures after computation names.
    pub signatures: bool,
    /// Print `metadata={...}`.
    pub metadata: bool,
    /// Mark operands 5, 10, ... with `/*index=N*/` comments, as XLA does.
    pub operand_index_comments: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            sigils: true,
            operand_shapes: false,
            signatures: true,
            metadata: true,
            operand_index_comments: true,
        }
    }
}

impl PrintOptions {
    /// Options without `%` sigils.
    pub fn without_sigils() -> Self {
        PrintOptions {
            sigils: false,
            ..PrintOptions::default()
        }
    }

    /// The style of JAX's unoptimized HLO dumps: no sigils, no computation signatures, no
    /// operand index comments.
    pub fn jax() -> Self {
        PrintOptions {
            sigils: false,
            signatures: false,
            operand_index_comments: false,
            ..PrintOptions::default()
        }
    }
}

/// Prints a module with default options.
pub fn print_module(m: &HloModule) -> String {
    print_module_with(m, &PrintOptions::default())
}

/// Prints a module with the given options.
pub fn print_module_with(m: &HloModule, opts: &PrintOptions) -> String {
    let mut out = String::new();
    // Writing to a String never fails.
    let _ = Printer {
        m,
        opts,
        out: &mut out,
    }
    .module();
    out
}

/// Formats a float so that the parser reads back the identical bits.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        let bits = v.to_bits();
        let sign = if bits >> 63 == 1 { "-" } else { "" };
        let mant = bits & 0xf_ffff_ffff_ffff;
        if mant == 0x8_0000_0000_0000 {
            return format!("{sign}nan");
        }
        return format!("{sign}nan(0x{mant:x})");
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == v.trunc() && v.abs() < 1e15 {
        if v == 0.0 && v.is_sign_negative() {
            return "-0".into();
        }
        return format!("{}", v as i64);
    }
    let a = v.abs();
    if !(1e-4..1e15).contains(&a) {
        // C's %g style, as XLA prints: a signed exponent of at least two digits (`1e-05`).
        let s = format!("{v:e}");
        match s.split_once('e') {
            Some((mant, exp)) => {
                let (sign, digits) = match exp.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', exp),
                };
                format!("{mant}e{sign}{digits:0>2}")
            }
            None => s,
        }
    } else {
        format!("{v}")
    }
}

fn is_plain_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'))
}

/// True when `s` lexes as one balanced `{...}` group (so it can be printed unquoted).
fn is_braced_group(s: &str) -> bool {
    let Ok(toks) = tokenize(s) else {
        return false;
    };
    if toks.first().map(|t| &t.kind) != Some(&TokenKind::LBrace) {
        return false;
    }
    let mut depth = 0i64;
    let n = toks.len();
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            TokenKind::LBrace | TokenKind::LBracket | TokenKind::LParen => depth += 1,
            TokenKind::RBrace | TokenKind::RBracket | TokenKind::RParen => {
                depth -= 1;
                if depth == 0 && i + 2 != n {
                    return false;
                }
            }
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0 && s.trim() == s
}

fn int_list(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("{{{}}}", parts.join(","))
}

fn bool_list(v: &[bool]) -> String {
    let parts: Vec<&str> = v
        .iter()
        .map(|b| if *b { "true" } else { "false" })
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn string_map(v: &[(String, String)]) -> String {
    let parts: Vec<String> = v
        .iter()
        .map(|(k, val)| {
            let k = if is_plain_word(k) {
                k.clone()
            } else {
                quote(k)
            };
            format!("{k}={}", quote(val))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn x_join<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
    v.iter().map(f).collect::<Vec<_>>().join("x")
}

fn window_string(w: &Window) -> String {
    let d = &w.dims;
    let mut parts = Vec::new();
    if !d.is_empty() {
        parts.push(format!("size={}", x_join(d, |d| d.size.to_string())));
    }
    if d.iter().any(|d| d.stride != 1) {
        parts.push(format!("stride={}", x_join(d, |d| d.stride.to_string())));
    }
    if d.iter().any(|d| d.pad_low != 0 || d.pad_high != 0) {
        parts.push(format!(
            "pad={}",
            x_join(d, |d| format!("{}_{}", d.pad_low, d.pad_high))
        ));
    }
    if d.iter().any(|d| d.lhs_dilation != 1) {
        parts.push(format!(
            "lhs_dilate={}",
            x_join(d, |d| d.lhs_dilation.to_string())
        ));
    }
    if d.iter().any(|d| d.rhs_dilation != 1) {
        parts.push(format!(
            "rhs_dilate={}",
            x_join(d, |d| d.rhs_dilation.to_string())
        ));
    }
    if d.iter().any(|d| d.reversal) {
        parts.push(format!(
            "rhs_reversal={}",
            x_join(d, |d| u8::from(d.reversal).to_string())
        ));
    }
    format!("{{{}}}", parts.join(" "))
}

fn dim_labels_string(c: &ConvDimensionNumbers) -> String {
    fn labels(a: i64, ac: char, b: i64, bc: char, spatial: &[i64]) -> String {
        let rank = spatial.len() + 2;
        let mut v = vec!['?'; rank];
        let mut put = |i: i64, c: char| {
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
                *slot = c;
            }
        };
        put(a, ac);
        put(b, bc);
        for (s, &d) in spatial.iter().enumerate() {
            put(d, char::from_digit(s as u32 % 10, 10).unwrap_or('?'));
        }
        v.into_iter().collect()
    }
    format!(
        "{}_{}->{}",
        labels(
            c.input_batch_dimension,
            'b',
            c.input_feature_dimension,
            'f',
            &c.input_spatial_dimensions
        ),
        labels(
            c.kernel_input_feature_dimension,
            'i',
            c.kernel_output_feature_dimension,
            'o',
            &c.kernel_spatial_dimensions
        ),
        labels(
            c.output_batch_dimension,
            'b',
            c.output_feature_dimension,
            'f',
            &c.output_spatial_dimensions
        ),
    )
}

fn value_string(v: &LiteralValue) -> String {
    match v {
        LiteralValue::Bool(b) => b.to_string(),
        LiteralValue::Int(i) => i.to_string(),
        LiteralValue::Float(f) => format_float(*f),
        LiteralValue::Complex(r, i) => format!("({}, {})", format_float(*r), format_float(*i)),
    }
}

fn array_literal(out: &mut String, dims: &[i64], values: &[LiteralValue], pos: &mut usize) {
    let Some((&n, rest)) = dims.split_first() else {
        out.push_str(&values.get(*pos).map(value_string).unwrap_or_default());
        *pos += 1;
        return;
    };
    let nested = !rest.is_empty();
    out.push('{');
    for i in 0..n.max(0) {
        if i > 0 {
            out.push_str(", ");
        }
        if nested && i == 0 {
            out.push(' ');
        }
        array_literal(out, rest, values, pos);
    }
    if nested && n > 0 {
        out.push(' ');
    }
    out.push('}');
}

fn literal_string(l: &ConstantLiteral, shape: &Shape) -> String {
    match (l, shape) {
        (ConstantLiteral::Elided, _) => "{...}".into(),
        (ConstantLiteral::Tuple(elems), Shape::Tuple(shapes)) => {
            let parts: Vec<String> = elems
                .iter()
                .zip(shapes)
                .map(|(l, s)| literal_string(l, s))
                .collect();
            format!("({})", parts.join(", "))
        }
        (ConstantLiteral::Tuple(_), _) => String::new(),
        (ConstantLiteral::Array(a), s) => {
            let mut out = String::new();
            let mut pos = 0;
            array_literal(&mut out, s.dims(), &a.values, &mut pos);
            out
        }
    }
}

struct Printer<'a> {
    m: &'a HloModule,
    opts: &'a PrintOptions,
    out: &'a mut String,
}

impl Printer<'_> {
    fn name(&self, n: &str) -> String {
        if self.opts.sigils {
            format!("%{n}")
        } else {
            n.to_string()
        }
    }

    fn comp_name(&self, id: ComputationId) -> String {
        self.name(self.m.get(id).map_or("<invalid>", |c| c.name.as_str()))
    }

    fn comp_list(&self, ids: &[ComputationId]) -> String {
        let parts: Vec<String> = ids.iter().map(|&c| self.comp_name(c)).collect();
        format!("{{{}}}", parts.join(", "))
    }

    fn module(&mut self) -> fmt::Result {
        let m = self.m;
        write!(self.out, "HloModule {}", m.name)?;
        let c = &m.config;
        if let Some(b) = c.is_scheduled {
            write!(self.out, ", is_scheduled={b}")?;
        }
        if let Some(l) = &c.entry_computation_layout {
            let ps: Vec<String> = l.params.iter().map(Shape::to_string).collect();
            write!(
                self.out,
                ", entry_computation_layout={{({})->{}}}",
                ps.join(", "),
                l.result
            )?;
        }
        if let Some(a) = &c.input_output_alias {
            let parts: Vec<String> = a
                .iter()
                .map(|a| {
                    let kind = a
                        .kind
                        .as_ref()
                        .map(|k| format!(", {k}"))
                        .unwrap_or_default();
                    format!(
                        "{}: ({}, {}{kind})",
                        int_list(&a.output_index),
                        a.param_number,
                        int_list(&a.param_index)
                    )
                })
                .collect();
            write!(self.out, ", input_output_alias={{ {} }}", parts.join(", "))?;
        }
        if let Some(v) = &c.allow_spmd_sharding_propagation_to_parameters {
            write!(
                self.out,
                ", allow_spmd_sharding_propagation_to_parameters={}",
                bool_list(v)
            )?;
        }
        if let Some(v) = &c.allow_spmd_sharding_propagation_to_output {
            write!(
                self.out,
                ", allow_spmd_sharding_propagation_to_output={}",
                bool_list(v)
            )?;
        }
        if let Some(v) = c.replica_count {
            write!(self.out, ", replica_count={v}")?;
        }
        if let Some(v) = c.num_partitions {
            write!(self.out, ", num_partitions={v}")?;
        }
        if let Some(v) = &c.frontend_attributes {
            write!(self.out, ", frontend_attributes={}", string_map(v))?;
        }
        for (k, v) in &c.raw {
            write!(self.out, ", {k}={v}")?;
        }
        self.out.push_str("\n\n");
        let f = &m.stack_frames;
        if !f.is_empty() {
            self.out.push_str("FileNames\n");
            for (id, n) in &f.file_names {
                writeln!(self.out, "{id} {}", quote(n))?;
            }
            self.out.push_str("\nFunctionNames\n");
            for (id, n) in &f.function_names {
                writeln!(self.out, "{id} {}", quote(n))?;
            }
            self.out.push_str("\nFileLocations\n");
            for (id, l) in &f.file_locations {
                writeln!(
                    self.out,
                    "{id} {{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}",
                    l.file_name_id, l.function_name_id, l.line, l.end_line, l.column, l.end_column
                )?;
            }
            self.out.push_str("\nStackFrames\n");
            for (id, s) in &f.stack_frames {
                writeln!(
                    self.out,
                    "{id} {{file_location_id={} parent_frame_id={}}}",
                    s.file_location_id, s.parent_frame_id
                )?;
            }
            self.out.push_str("\n\n");
        }
        for (id, comp) in m.iter() {
            self.computation(comp, id == m.entry)?;
            self.out.push('\n');
        }
        Ok(())
    }

    fn computation(&mut self, c: &Computation, is_entry: bool) -> fmt::Result {
        if is_entry {
            self.out.push_str("ENTRY ");
        }
        self.out.push_str(&self.name(&c.name));
        if self.opts.signatures {
            let params: Vec<String> = c
                .params
                .iter()
                .filter_map(|&p| c.get(p))
                .map(|p| format!("{}: {}", p.name, p.shape.without_layout()))
                .collect();
            let root = c
                .root_instruction()
                .map(|r| r.shape.without_layout().to_string())
                .unwrap_or_default();
            write!(self.out, " ({}) -> {root}", params.join(", "))?;
        }
        self.out.push_str(" {\n");
        for (id, instr) in c.iter() {
            self.out.push_str("  ");
            if id == c.root {
                self.out.push_str("ROOT ");
            }
            self.instruction(c, instr)?;
            self.out.push('\n');
        }
        self.out.push('}');
        if let Some(t) = &c.execution_thread {
            write!(self.out, ", execution_thread={}", quote(t))?;
        }
        self.out.push('\n');
        Ok(())
    }

    fn instruction(&mut self, c: &Computation, i: &Instruction) -> fmt::Result {
        write!(
            self.out,
            "{} = {} {}(",
            self.name(&i.name),
            i.shape,
            i.opcode
        )?;
        let a = &i.attrs;
        match i.opcode {
            Opcode::Parameter => {
                write!(self.out, "{}", a.parameter_number.unwrap_or(0))?;
            }
            Opcode::Constant => {
                if let Some(l) = &a.literal {
                    self.out.push_str(&literal_string(l, &i.shape));
                }
            }
            _ => {
                let ops: Vec<String> = i
                    .operands
                    .iter()
                    .enumerate()
                    .map(|(k, &o)| {
                        let mark = if self.opts.operand_index_comments && k > 0 && k % 5 == 0 {
                            format!("/*index={k}*/")
                        } else {
                            String::new()
                        };
                        match c.get(o) {
                            Some(op) if self.opts.operand_shapes => {
                                format!("{mark}{} {}", op.shape, self.name(&op.name))
                            }
                            Some(op) => format!("{mark}{}", self.name(&op.name)),
                            None => "<invalid>".into(),
                        }
                    })
                    .collect();
                self.out.push_str(&ops.join(", "));
            }
        }
        self.out.push(')');
        for (k, v) in self.attrs(i) {
            write!(self.out, ", {k}={v}")?;
        }
        Ok(())
    }

    /// The attributes after the operands, in the order XLA prints them: each group below is
    /// one concern (shapes and windows, dimension numbers, op options, collectives, the custom
    /// call's own, called computations, then annotations and the backend config).
    fn attrs(&self, i: &Instruction) -> Vec<(String, String)> {
        let a = &i.attrs;
        let mut v: Vec<(String, String)> = Vec::new();
        let mut push = |k: &str, s: String| v.push((k.to_string(), s));
        shape_attrs(a, &mut push);
        dimension_number_attrs(a, &mut push);
        option_attrs(a, &mut push);
        collective_attrs(a, &mut push);
        custom_call_attrs(a, &mut push);
        if let Some(k) = a.fusion_kind {
            push("kind", k.name().to_string());
        }
        self.called_attrs(a, &mut push);
        self.annotation_attrs(i, &mut push);
        v
    }

    /// The computations an instruction calls, each under its attribute's name.
    fn called_attrs(&self, a: &Attrs, push: &mut impl FnMut(&str, String)) {
        if let Some(c) = &a.calls {
            match c.as_slice() {
                [one] => push("calls", self.comp_name(*one)),
                _ => push("calls", self.comp_list(c)),
            }
        }
        if let Some(c) = a.to_apply {
            push("to_apply", self.comp_name(c));
        }
        if let Some(c) = a.condition {
            push("condition", self.comp_name(c));
        }
        if let Some(c) = a.body {
            push("body", self.comp_name(c));
        }
        if let Some(c) = a.true_computation {
            push("true_computation", self.comp_name(c));
        }
        if let Some(c) = a.false_computation {
            push("false_computation", self.comp_name(c));
        }
        if let Some(c) = &a.branch_computations {
            push("branch_computations", self.comp_list(c));
        }
        if let Some(c) = &a.called_computations {
            push("called_computations", self.comp_list(c));
        }
        if let Some(c) = a.select {
            push("select", self.comp_name(c));
        }
        if let Some(c) = a.scatter {
            push("scatter", self.comp_name(c));
        }
    }

    /// Sharding, frontend attributes, what the parser kept verbatim, metadata (when printed) and
    /// the backend config, last as XLA prints it.
    fn annotation_attrs(&self, i: &Instruction, push: &mut impl FnMut(&str, String)) {
        let a = &i.attrs;
        if let Some(s) = &a.sharding {
            push("sharding", s.print(self.opts.metadata));
        }
        if let Some(f) = &a.frontend_attributes {
            push("frontend_attributes", string_map(f));
        }
        for (k, val) in &a.raw {
            push(k, val.clone());
        }
        if self.opts.metadata {
            if let Some(m) = &i.metadata {
                push("metadata", metadata_string(m));
            }
        }
        if let Some(b) = &a.backend_config {
            if is_braced_group(b) {
                push("backend_config", b.clone());
            } else {
                push("backend_config", quote(b));
            }
        }
    }
}

/// Dimensions, tuple and iota indices, slices, padding, windows and convolution labels.
fn shape_attrs(a: &Attrs, push: &mut impl FnMut(&str, String)) {
    if let Some(d) = &a.dimensions {
        push("dimensions", int_list(d));
    }
    if let Some(x) = a.tuple_index {
        push("index", x.to_string());
    }
    if let Some(x) = a.iota_dimension {
        push("iota_dimension", x.to_string());
    }
    if let Some(s) = &a.slice {
        let strided = s.iter().any(|d| d.stride != 1);
        let parts: Vec<String> = s
            .iter()
            .map(|d| {
                if strided {
                    format!("[{}:{}:{}]", d.start, d.limit, d.stride)
                } else {
                    format!("[{}:{}]", d.start, d.limit)
                }
            })
            .collect();
        push("slice", format!("{{{}}}", parts.join(", ")));
    }
    if let Some(p) = &a.padding {
        let interior = p.iter().any(|d| d.interior != 0);
        push(
            "padding",
            x_join(p, |d| {
                if interior {
                    format!("{}_{}_{}", d.low, d.high, d.interior)
                } else {
                    format!("{}_{}", d.low, d.high)
                }
            }),
        );
    }
    if let Some(w) = &a.window {
        push("window", window_string(w));
    }
    if let Some(c) = &a.conv_dimension_numbers {
        push("dim_labels", dim_labels_string(c));
    }
    if let Some(x) = a.feature_group_count {
        push("feature_group_count", x.to_string());
    }
    if let Some(x) = a.batch_group_count {
        push("batch_group_count", x.to_string());
    }
}

/// Dot dimension numbers and precision, comparisons, and gather/scatter dimension numbers.
fn dimension_number_attrs(a: &Attrs, push: &mut impl FnMut(&str, String)) {
    if let Some(d) = &a.dot_dimension_numbers {
        if !d.lhs_batch_dims.is_empty() {
            push("lhs_batch_dims", int_list(&d.lhs_batch_dims));
        }
        push("lhs_contracting_dims", int_list(&d.lhs_contracting_dims));
        if !d.rhs_batch_dims.is_empty() {
            push("rhs_batch_dims", int_list(&d.rhs_batch_dims));
        }
        push("rhs_contracting_dims", int_list(&d.rhs_contracting_dims));
    }
    if let Some(p) = &a.operand_precision {
        let parts: Vec<&str> = p.iter().map(|p| p.name()).collect();
        push("operand_precision", format!("{{{}}}", parts.join(",")));
    }
    if let Some(d) = a.dot_algorithm {
        push("algorithm", d.name().to_string());
    }
    if let Some(d) = a.comparison_direction {
        push("direction", d.name().to_string());
    }
    if let Some(t) = a.comparison_type {
        push("type", t.name().to_string());
    }
    if let Some(g) = &a.gather_dimension_numbers {
        push("offset_dims", int_list(&g.offset_dims));
        push("collapsed_slice_dims", int_list(&g.collapsed_slice_dims));
        push("start_index_map", int_list(&g.start_index_map));
        if !g.operand_batching_dims.is_empty() {
            push("operand_batching_dims", int_list(&g.operand_batching_dims));
        }
        if !g.start_indices_batching_dims.is_empty() {
            push(
                "start_indices_batching_dims",
                int_list(&g.start_indices_batching_dims),
            );
        }
        push("index_vector_dim", g.index_vector_dim.to_string());
    }
    if let Some(s) = &a.gather_slice_sizes {
        push("slice_sizes", int_list(s));
    }
    if let Some(s) = &a.scatter_dimension_numbers {
        push("update_window_dims", int_list(&s.update_window_dims));
        push("inserted_window_dims", int_list(&s.inserted_window_dims));
        push(
            "scatter_dims_to_operand_dims",
            int_list(&s.scatter_dims_to_operand_dims),
        );
        if !s.input_batching_dims.is_empty() {
            push("input_batching_dims", int_list(&s.input_batching_dims));
        }
        if !s.scatter_indices_batching_dims.is_empty() {
            push(
                "scatter_indices_batching_dims",
                int_list(&s.scatter_indices_batching_dims),
            );
        }
        push("index_vector_dim", s.index_vector_dim.to_string());
    }
    if let Some(b) = a.indices_are_sorted {
        push("indices_are_sorted", b.to_string());
    }
    if let Some(b) = a.unique_indices {
        push("unique_indices", b.to_string());
    }
    if let Some(s) = &a.dynamic_slice_sizes {
        push("dynamic_slice_sizes", int_list(s));
    }
}

/// The options of sort, top-k, triangular-solve, cholesky, fft, rng, reduce-precision and
/// batch-norm instructions.
fn option_attrs(a: &Attrs, push: &mut impl FnMut(&str, String)) {
    if let Some(b) = a.is_stable {
        push("is_stable", b.to_string());
    }
    if let Some(k) = a.k {
        push("k", k.to_string());
    }
    if let Some(b) = a.largest {
        push("largest", b.to_string());
    }
    if let Some(o) = &a.triangular_solve {
        // XLA prints the options' set fields in field order: false booleans are omitted.
        for (name, set) in [
            ("left_side", o.left_side),
            ("lower", o.lower),
            ("unit_diagonal", o.unit_diagonal),
        ] {
            if set {
                push(name, "true".to_string());
            }
        }
        if let Some(t) = o.transpose_a {
            push("transpose_a", t.name().to_string());
        }
    }
    // XLA prints `cholesky_options`' set fields: `lower=false` is omitted.
    if a.cholesky.is_some_and(|o| o.lower) {
        push("lower", "true".to_string());
    }
    if let Some(t) = a.fft_type {
        push("fft_type", t.name().to_string());
    }
    if let Some(l) = &a.fft_length {
        push("fft_length", int_list(l));
    }
    if let Some(r) = a.rng_algorithm {
        push("algorithm", r.name().to_string());
    }
    if let Some(d) = a.distribution {
        push("distribution", d.name().to_string());
    }
    if let Some(x) = a.exponent_bits {
        push("exponent_bits", x.to_string());
    }
    if let Some(x) = a.mantissa_bits {
        push("mantissa_bits", x.to_string());
    }
    if let Some(x) = a.delta {
        push("delta", x.to_string());
    }
    if let Some(e) = a.epsilon {
        push("epsilon", value_string(&e));
    }
    if let Some(x) = a.feature_index {
        push("feature_index", x.to_string());
    }
}

/// Channel, replica groups and global device ids of collectives.
fn collective_attrs(a: &Attrs, push: &mut impl FnMut(&str, String)) {
    if let Some(x) = a.channel_id {
        push("channel_id", x.to_string());
    }
    if let Some(r) = &a.replica_groups {
        push(
            "replica_groups",
            match r {
                ReplicaGroups::List(g) => {
                    let parts: Vec<String> = g.iter().map(|g| int_list(g)).collect();
                    format!("{{{}}}", parts.join(","))
                }
                ReplicaGroups::Iota(s) => s.clone(),
            },
        );
    }
    if let Some(b) = a.use_global_device_ids {
        push("use_global_device_ids", b.to_string());
    }
}

/// A custom call's own attributes, in XLA's order: target, operand layout constraints, side
/// effect, output-to-operand aliasing, API version (its backend config is printed last, with
/// every instruction's).
fn custom_call_attrs(a: &Attrs, push: &mut impl FnMut(&str, String)) {
    if let Some(t) = &a.custom_call_target {
        push("custom_call_target", quote(t));
    }
    if let Some(shapes) = &a.operand_layout_constraints {
        let items: Vec<String> = shapes.iter().map(|s| s.to_string()).collect();
        push(
            "operand_layout_constraints",
            format!("{{{}}}", items.join(", ")),
        );
    }
    if let Some(b) = a.custom_call_has_side_effect {
        push("custom_call_has_side_effect", b.to_string());
    }
    if let Some(aliases) = &a.output_to_operand_aliasing {
        let path = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("{{{}}}", items.join(","))
        };
        let items: Vec<String> = aliases
            .iter()
            .map(|x| {
                format!(
                    "{}: ({}, {})",
                    path(&x.output_index),
                    x.operand,
                    path(&x.operand_index)
                )
            })
            .collect();
        push(
            "output_to_operand_aliasing",
            format!("{{{}}}", items.join(", ")),
        );
    }
    if let Some(t) = &a.api_version {
        push("api_version", t.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip() {
        for v in [
            f64::from(0.17677669_f32),
            1.0,
            -0.0,
            1e-30,
            3.4e38,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.1,
        ] {
            let s = format_float(v);
            let mut p = crate::parser::parse_module(&format!(
                "HloModule m\nENTRY e {{\n ROOT c = f64[] constant({s})\n}}\n"
            ))
            .unwrap();
            let c = p.computations.remove(0);
            match &c.instructions[0].attrs.literal {
                Some(ConstantLiteral::Array(a)) => {
                    assert_eq!(a.values, vec![LiteralValue::Float(v)], "{s}")
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

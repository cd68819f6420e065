//! The PTX printer: the typed model back to PTX text.
//!
//! [`print()`] renders a whole [`Module`]; every model node also implements `Display`
//! (an [`Instruction`] prints as `@%p1 add.s32 %r1, %r2, 1;`). Parsing the printed text gives
//! back an equal model, and printing is a fixpoint (`print(parse(print(m))) == print(m)`).
//! Floating-point immediates print as exact hex bit patterns (`0f3F800000`, `0d...`).
//!
//! Building a kernel programmatically and printing it:
//!
//! ```
//! use ptx::*;
//!
//! let mut m = Module::new(8, 0, "sm_90");
//! let body = vec![
//!     Statement::Decl(VarDecl::regs(Type::B64, "%rd", 3)),
//!     Statement::Decl(VarDecl::regs(Type::F32, "%f", 2)),
//!     Statement::Instruction(Instruction::new(
//!         Opcode::Ld,
//!         vec![Modifier::Space(StateSpace::Param), Modifier::Type(Type::U64)],
//!         vec![Operand::reg("%rd1"), Operand::addr_symbol("k_param_0", 0)],
//!     )),
//!     Statement::Instruction(Instruction::new(
//!         Opcode::Cvta,
//!         vec![Modifier::To, Modifier::Space(StateSpace::Global), Modifier::Type(Type::U64)],
//!         vec![Operand::reg("%rd2"), Operand::reg("%rd1")],
//!     )),
//!     Statement::Instruction(Instruction::new(
//!         Opcode::St,
//!         vec![Modifier::Space(StateSpace::Global), Modifier::Type(Type::F32)],
//!         vec![Operand::addr_reg("%rd2", 0), Operand::f32(1.0)],
//!     )),
//!     Statement::Instruction(Instruction::new(Opcode::Ret, vec![], vec![])),
//! ];
//! m.directives.push(Directive::Function(Function {
//!     linkage: Some(Linkage::Visible),
//!     kind: FunctionKind::Entry,
//!     return_params: None,
//!     name: "k".into(),
//!     params: Some(vec![Param {
//!         space: StateSpace::Param,
//!         align: None,
//!         vector: None,
//!         ty: Type::U64,
//!         ptr: None,
//!         name: "k_param_0".into(),
//!         array: vec![],
//!     }]),
//!     perf: vec![PerfDirective::MaxNtid(vec![128])],
//!     body: Some(body),
//! }));
//! let text = print(&m);
//! assert!(text.contains("st.global.f32\t[%rd2], 0f3F800000;"));
//! assert_eq!(parse(&text).unwrap(), m);
//! ```

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;

/// Renders a module as PTX text.
pub fn print(module: &Module) -> String {
    module.to_string()
}

fn indent(f: &mut Formatter<'_>, depth: usize) -> fmt::Result {
    for _ in 0..depth {
        f.write_char('\t')?;
    }
    Ok(())
}

fn write_str_lit(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

fn write_list<T: Display>(f: &mut Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

fn write_offset(f: &mut Formatter<'_>, offset: i64) -> fmt::Result {
    if offset != 0 {
        write!(f, "+{offset}")?;
    }
    Ok(())
}

fn write_dims(f: &mut Formatter<'_>, dims: &[Option<u64>]) -> fmt::Result {
    for d in dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    Ok(())
}

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "//")?;
        writeln!(f, "// Printed by the ptx crate")?;
        writeln!(f, "//")?;
        writeln!(f)?;
        writeln!(f, ".version {}.{}", self.version.major, self.version.minor)?;
        write!(f, ".target {}", self.target.arch)?;
        for o in &self.target.options {
            write!(f, ", {o}")?;
        }
        writeln!(f)?;
        if let Some(a) = self.address_size {
            writeln!(f, ".address_size {a}")?;
        }
        for d in &self.directives {
            writeln!(f)?;
            match d {
                Directive::Function(func) => write!(f, "{func}")?,
                Directive::Variable(v) => writeln!(f, "{v}")?,
                Directive::File(file) => writeln!(f, "{file}")?,
                Directive::Section(sec) => write!(f, "{sec}")?,
                Directive::Pragma(v) => {
                    write_pragma(f, v)?;
                    f.write_char('\n')?;
                }
            }
        }
        Ok(())
    }
}

impl Display for FileDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".file {} ", self.index)?;
        write_str_lit(f, &self.path)?;
        if let Some((ts, size)) = self.timestamp_size {
            write!(f, ", {ts}, {size}")?;
        }
        Ok(())
    }
}

fn write_params_inline(f: &mut Formatter<'_>, params: &[Param]) -> fmt::Result {
    f.write_char('(')?;
    write_list(f, params, ", ")?;
    f.write_char(')')
}

/// Prints the function with its body; ends with a newline.
impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, ".{} ", l.as_str())?;
        }
        f.write_str(match self.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        })?;
        if let Some(r) = &self.return_params {
            write_params_inline(f, r)?;
            f.write_char(' ')?;
        }
        f.write_str(&self.name)?;
        if let Some(params) = &self.params {
            if params.is_empty() {
                f.write_str("()")?;
            } else {
                f.write_str("(\n")?;
                for (i, p) in params.iter().enumerate() {
                    write!(f, "\t{p}")?;
                    f.write_str(if i + 1 < params.len() { ",\n" } else { "\n" })?;
                }
                f.write_char(')')?;
            }
        }
        f.write_char('\n')?;
        for p in &self.perf {
            writeln!(f, "{p}")?;
        }
        match &self.body {
            None => f.write_str(";\n"),
            Some(body) => {
                f.write_str("{\n")?;
                for s in body {
                    write_stmt(f, s, 1)?;
                }
                f.write_str("}\n")
            }
        }
    }
}

impl Display for Param {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.space)?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .{v}")?;
        }
        write!(f, " .{}", self.ty)?;
        if let Some(p) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(s) = p.space {
                write!(f, " .{s}")?;
            }
            if let Some(a) = p.align {
                write!(f, " .align {a}")?;
            }
        }
        write!(f, " {}", self.name)?;
        write_dims(f, &self.array)
    }
}

impl Display for PerfDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let dims = |f: &mut Formatter<'_>, name: &str, v: &[u32]| {
            write!(f, ".{name} ")?;
            write_list(f, v, ", ")
        };
        match self {
            PerfDirective::MaxNtid(v) => dims(f, "maxntid", v),
            PerfDirective::ReqNtid(v) => dims(f, "reqntid", v),
            PerfDirective::ReqNctaPerCluster(v) => dims(f, "reqnctapercluster", v),
            PerfDirective::MinNctaPerSm(n) => write!(f, ".minnctapersm {n}"),
            PerfDirective::MaxNctaPerSm(n) => write!(f, ".maxnctapersm {n}"),
            PerfDirective::MaxNreg(n) => write!(f, ".maxnreg {n}"),
            PerfDirective::MaxClusterRank(n) => write!(f, ".maxclusterrank {n}"),
            PerfDirective::ExplicitCluster => f.write_str(".explicitcluster"),
            PerfDirective::NoReturn => f.write_str(".noreturn"),
            PerfDirective::Pragma(v) => write_pragma(f, v),
        }
    }
}

fn write_pragma(f: &mut Formatter<'_>, v: &[String]) -> fmt::Result {
    f.write_str(".pragma ")?;
    for (i, s) in v.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_str_lit(f, s)?;
    }
    f.write_char(';')
}

impl Display for VarDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, ".{} ", l.as_str())?;
        }
        write!(f, ".{}", self.space)?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .{v}")?;
        }
        write!(f, " .{} ", self.ty)?;
        write_list(f, &self.declarators, ", ")?;
        f.write_char(';')
    }
}

impl Display for Declarator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(n) = self.range {
            write!(f, "<{n}>")?;
        }
        write_dims(f, &self.array)?;
        if let Some(i) = &self.init {
            write!(f, " = {i}")?;
        }
        Ok(())
    }
}

impl Display for Initializer {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Initializer::Imm(i) => write!(f, "{i}"),
            Initializer::Symbol { name, offset } => {
                f.write_str(name)?;
                write_offset(f, *offset)
            }
            Initializer::Generic { name, offset } => {
                write!(f, "generic({name})")?;
                write_offset(f, *offset)
            }
            Initializer::List(v) => {
                f.write_char('{')?;
                write_list(f, v, ", ")?;
                f.write_char('}')
            }
        }
    }
}

fn write_stmt(f: &mut Formatter<'_>, s: &Statement, depth: usize) -> fmt::Result {
    match s {
        // A blank line before each label, as nvcc prints basic blocks.
        Statement::Label(l) => write!(f, "\n{l}:\n"),
        Statement::Block(body) => {
            indent(f, depth)?;
            f.write_str("{\n")?;
            for s in body {
                write_stmt(f, s, depth + 1)?;
            }
            indent(f, depth)?;
            f.write_str("}\n")
        }
        other => {
            indent(f, depth)?;
            writeln!(f, "{other}")
        }
    }
}

/// Prints one statement (blocks span several lines, nested with tabs; no trailing newline is
/// added for single-line statements).
impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Decl(d) => write!(f, "{d}"),
            Statement::Label(l) => write!(f, "{l}:"),
            Statement::Instruction(i) => write!(f, "{i}"),
            Statement::Block(_) => write_stmt(f, self, 0),
            Statement::Loc(l) => write!(f, "{l}"),
            Statement::Pragma(v) => write_pragma(f, v),
            Statement::BranchTargets { name, labels } => {
                write!(f, "{name}: .branchtargets ")?;
                write_list(f, labels, ", ")?;
                f.write_char(';')
            }
            Statement::CallPrototype {
                name,
                return_params,
                params,
                noreturn,
            } => {
                write!(f, "{name}: .callprototype ")?;
                if let Some(r) = return_params {
                    write_params_inline(f, r)?;
                    f.write_char(' ')?;
                }
                f.write_str("_ ")?;
                write_params_inline(f, params)?;
                if *noreturn {
                    f.write_str(" .noreturn")?;
                }
                f.write_char(';')
            }
        }
    }
}

impl Display for Loc {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.column)?;
        if let Some(i) = &self.inlined_at {
            write!(f, ", function_name {}", i.function_name)?;
            write_offset(f, i.function_offset)?;
            write!(f, ", inlined_at {} {} {}", i.file, i.line, i.column)?;
        }
        Ok(())
    }
}

impl Display for Guard {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "@{}{}", if self.negated { "!" } else { "" }, self.reg)
    }
}

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "{g} ")?;
        }
        f.write_str(self.op.as_str())?;
        for m in &self.mods {
            write!(f, ".{m}")?;
        }
        if !self.operands.is_empty() {
            f.write_char('\t')?;
            write_list(f, &self.operands, ", ")?;
        }
        f.write_char(';')
    }
}

impl Display for Register {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Display for Immediate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Immediate::Int(v) => write!(f, "{v}"),
            Immediate::UInt(v) => write!(f, "{v}U"),
            Immediate::F32(b) => write!(f, "0f{b:08X}"),
            Immediate::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

impl Display for Address {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        match &self.base {
            AddressBase::Reg(r) => write!(f, "{r}")?,
            AddressBase::Symbol(s) => f.write_str(s)?,
            AddressBase::Imm(v) => write!(f, "{v}")?,
        }
        write_offset(f, self.offset)?;
        f.write_char(']')
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => write!(f, "{r}"),
            Operand::Special(s) => write!(f, "{s}"),
            Operand::Imm(i) => write!(f, "{i}"),
            Operand::Symbol { name, offset } => {
                f.write_str(name)?;
                write_offset(f, *offset)
            }
            Operand::Address(a) => write!(f, "{a}"),
            Operand::Vector(v) => {
                f.write_char('{')?;
                write_list(f, v, ", ")?;
                f.write_char('}')
            }
            Operand::Sink => f.write_char('_'),
            Operand::Not(r) => write!(f, "!{r}"),
            Operand::Pair(a, b) => write!(f, "{a}|{b}"),
            Operand::List(v) => {
                f.write_char('(')?;
                write_list(f, v, ", ")?;
                f.write_char(')')
            }
        }
    }
}

/// Prints the section over several lines; ends with a newline.
impl Display for Section {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, ".section .{}", self.name)?;
        f.write_str("{\n")?;
        for item in &self.items {
            match item {
                SectionItem::Label(l) => writeln!(f, "{l}:")?,
                SectionItem::Data { ty, values } => {
                    write!(f, ".{ty} ")?;
                    write_list(f, values, ", ")?;
                    f.write_char('\n')?;
                }
            }
        }
        f.write_str("}\n")
    }
}

impl Display for SectionValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SectionValue::Int(v) => write!(f, "{v}"),
            SectionValue::Symbol { name, offset } => {
                f.write_str(name)?;
                write_offset(f, *offset)
            }
            SectionValue::Section(s) => write!(f, ".{s}"),
            SectionValue::Diff(a, b) => write!(f, "{a}-{b}"),
        }
    }
}

//! The typed PTX model.
//!
//! # Structure
//!
//! ```text
//! Module { version, target, address_size, directives: Vec<Directive> }
//!   Directive::Function(Function)   .entry / .func (declaration or definition)
//!   Directive::Variable(VarDecl)    module-scope .global / .const / .shared variables
//!   Directive::File(FileDirective)  .file debug directive
//!   Directive::Section(Section)     .section .debug_str { ... } (DWARF data)
//!   Directive::Pragma(Vec<String>)  module-scope .pragma
//! Function { linkage, kind, return_params, name, params, perf: Vec<PerfDirective>, body }
//!   body: Option<Vec<Statement>>    None for a prototype ending in `;`
//! Statement
//!   Decl(VarDecl)          .reg / .local / .shared / .param / .const declarations
//!   Label(String)          `$L__BB0_2:`
//!   Instruction(Instruction)
//!   Block(Vec<Statement>)  nested `{ ... }` scope
//!   Loc / Pragma / BranchTargets / CallPrototype
//! Instruction { guard: Option<Guard>, op: Opcode, mods: Vec<Modifier>, operands: Vec<Operand> }
//! ```
//!
//! An instruction keeps every dotted suffix after the opcode, **types included**, as one ordered
//! list of typed [`Modifier`]s (`cvt.rn.f16.f32` is `Cvt` with
//! `[Rounding(Rn), Type(F16), Type(F32)]`), so printing reproduces the source order exactly.
//! Accessors such as [`Instruction::ty`], [`Instruction::types`], [`Instruction::rounding`],
//! [`Instruction::state_space`] and [`Instruction::has`] read them without caring about order.
//!
//! Operands are typed: registers ([`Operand::Reg`]), special registers ([`Operand::Special`]),
//! immediates ([`Operand::Imm`]), addresses ([`Operand::Address`]), symbols (labels, variables,
//! functions, parameters: [`Operand::Symbol`]), vectors `{%r1, _}`, predicate pairs `%r1|%p1`,
//! negated predicates `!%p1` and parenthesised call argument lists.
//!
//! An identifier operand is a [`Register`] when it starts with `%` (and is not a special
//! register) or was declared by a `.reg` in an enclosing scope (including `.reg` parameters of a
//! `.func`); otherwise it is a symbol. Immediates keep their exact bits: integers as `i64`/`u64`,
//! `0f`/`0d` floats as raw bits, decimal floats as f64 bits (see [`Immediate`]).
//!
//! The opcode set is closed: an opcode or modifier the model does not know is a parse error,
//! never an `Unknown(String)`. Not modelled yet: textures and surfaces (`tex`, `suld`, ...),
//! `mbarrier`, `cp.async.bulk`/TMA, `wgmma`, `createpolicy`, `setmaxnreg`, video instructions,
//! constant-expression operands (`(a+4)*2`) and `.alias`.
//!
//! Everything derives `Debug, Clone, PartialEq`; the printer ([`crate::printer`]) implements
//! `Display` for each node, and parsing the printed text gives back an equal model. Small
//! builders ([`Module::new`], [`VarDecl::regs`], [`Instruction::new`], [`Operand::reg`],
//! [`Operand::addr_reg`], ...) make constructing kernels in code concise.

macro_rules! keyword_enum {
    (
        $(#[$m:meta])*
        $name:ident { $($var:ident = $s:literal),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $s, "`")]
                $var
            ),*
        }
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            /// The PTX spelling, without the leading dot.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),* }
            }
            /// Parses the PTX spelling (without the leading dot).
            #[allow(clippy::should_implement_trait)]
            pub fn from_str(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$var),)* _ => None }
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

mod decl;
mod instruction;
mod modifier;
mod module;
mod operand;

pub use decl::*;
pub use instruction::*;
pub use modifier::*;
pub use module::*;
pub use operand::*;

//! The rules: wire compatibility (base against head, and against the whole history) and the
//! time windows (forward 14 days, backward 6 months) checked against the golden census.
//!
//! Identity is by number, not name: a field is its message and number (with its wire class and
//! oneof), an enum value its enum and number, and a message or enum keeps its identity across a
//! rename or a package move with a compatible structure ([`crate::retype::type_renames`]). So a
//! rename keeps a construct's age and is not a removal, and a name that survives with another
//! number is a renumbering.
use std::collections::BTreeSet;

use crate::model::Model;
use crate::surface::Extras;

mod lineage;
mod time_windows;
mod wire_compat;
pub use time_windows::windows;
pub use wire_compat::wire;

/// Days a construct must be in the schema before a compiler may emit it by default.
pub const FORWARD_WINDOW_DAYS: i64 = 14;
/// Months today's runtime must keep loading artifacts for.
pub const BACKWARD_WINDOW_MONTHS: i32 = 6;

/// One side of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The wire model.
    pub model: &'a Model,
    /// Opcodes, registry names, runtime flags.
    pub extras: &'a Extras,
}

impl Side<'_> {
    /// Every construct of the side.
    pub fn constructs(&self) -> BTreeSet<String> {
        let mut c = self.model.constructs();
        c.extend(self.extras.constructs());
        c
    }
}

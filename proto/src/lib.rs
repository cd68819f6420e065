//! The artifact schema.

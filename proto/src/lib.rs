//! The artifact schema (in progress).

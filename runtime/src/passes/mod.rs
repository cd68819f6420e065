//! Load-time thunk passes (run after validation, before the executable is ready). Their names
//! are part of the compatibility surface ([`crate::flags::LOAD_PASSES`]).
pub mod command_buffer;

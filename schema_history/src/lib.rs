//! Schema history: dated snapshots of the compatibility surface and the rules engine behind the
//! pre-merge bot. Depends only on `proto` (and reads git).

//! Analyses: pure functions of a [`Snapshot`](crate::Snapshot), one module each.

pub mod lifetimes;
pub mod stacks;
pub mod stats;
pub mod summary;
pub mod timeline;

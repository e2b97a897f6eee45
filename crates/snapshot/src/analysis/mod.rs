//! Analyses: pure functions of a [`Snapshot`](crate::Snapshot), one module each.

pub mod categories;
pub mod compare;
pub mod efficiency;
pub mod fit;
pub mod lifetimes;
pub mod live_set;
pub mod oom;
pub mod report;
pub mod search;
pub mod stacks;
pub mod stats;
pub mod summary;
pub mod timeline;
pub mod trace_steps;

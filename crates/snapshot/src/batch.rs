//! Long loops in batches, one function call per batch.
//!
//! Browsers compile wasm twice: a quick baseline first, then optimised code for the functions that turn
//! out hot. They switch a function to its optimised code only at its next call, never inside a running
//! loop. A loop over a million trace entries in one call therefore runs in the baseline (about half the
//! speed) from start to end. Run as batches, each a fresh call of a function that is never inlined, the
//! optimised code takes over after the first few batches. Natively the call per batch costs nothing
//! measurable.

use std::ops::Range;

/// Items per batch. Small enough that a batch on baseline code (a cold page, before the browser has
/// optimised the function: several times slower) stays a few milliseconds, since sliced work checks
/// the time only between batches.
pub const BATCH: usize = 1 << 12;

/// Calls `f` on `0..n` cut into consecutive ranges of at most [`BATCH`] items.
pub fn ranges(n: usize, mut f: impl FnMut(Range<usize>)) {
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(BATCH).min(n);
        call(&mut f, start..end);
        start = end;
    }
}

/// [`ranges`] for a fallible `f`: stops at the first error.
pub fn try_ranges<E>(n: usize, mut f: impl FnMut(Range<usize>) -> Result<(), E>) -> Result<(), E> {
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(BATCH).min(n);
        call(&mut f, start..end)?;
        start = end;
    }
    Ok(())
}

/// Where long work may give its thread back: the page pauses for its event loop once a slice has run
/// long enough, so a 1 GB file never blocks it for a second; natively nothing pauses.
pub trait Pause {
    fn pause(&mut self) -> impl std::future::Future<Output = ()>;
}

/// Never pauses: what the synchronous entry points run their sliced versions with.
pub struct NoPause;

impl Pause for NoPause {
    fn pause(&mut self) -> impl std::future::Future<Output = ()> {
        std::future::ready(())
    }
}

/// Runs a future that never waits (sliced work under [`NoPause`]) to its end, here and now.
pub fn run_ready<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = std::future::Future::poll(future.as_mut(), &mut context)
        {
            return v;
        }
    }
}

/// [`ranges`], awaiting `pause` after each batch.
pub async fn ranges_paused<P: Pause>(n: usize, mut f: impl FnMut(Range<usize>), pause: &mut P) {
    let mut start = 0;
    while start < n {
        let end = start.saturating_add(BATCH).min(n);
        call(&mut f, start..end);
        start = end;
        pause.pause().await;
    }
}

/// `vec![value; n]`, written a slice at a time, awaiting `pause` between slices: a table of millions
/// of entries is tens of MB to write (and to grow memory for).
pub async fn filled<T: Clone, P: Pause>(value: T, n: usize, pause: &mut P) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let k = (4 * BATCH).min(n - out.len());
        out.extend(std::iter::repeat_n(value.clone(), k));
        pause.pause().await;
    }
    out
}

/// The call that is never inlined: each batch enters it afresh.
#[inline(never)]
fn call<R>(f: &mut impl FnMut(Range<usize>) -> R, range: Range<usize>) -> R {
    f(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_everything_once_in_order() {
        for n in [0, 1, BATCH - 1, BATCH, BATCH + 1, 3 * BATCH + 7] {
            let mut seen = Vec::new();
            ranges(n, |r| {
                assert!(r.len() <= BATCH && !r.is_empty());
                seen.extend(r);
            });
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn try_ranges_stops_at_the_first_error() {
        let mut calls = 0;
        let r = try_ranges(5 * BATCH, |range| {
            calls += 1;
            if range.start >= 2 * BATCH {
                Err(range.start)
            } else {
                Ok(())
            }
        });
        assert_eq!((r, calls), (Err(2 * BATCH), 3));
    }
}

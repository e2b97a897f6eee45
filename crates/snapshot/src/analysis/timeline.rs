//! The geometry of the Active Memory Timeline (and of the segment timeline), as PyTorch's MemoryViz
//! lays it out: allocations are stacked in the order they were made; when one is freed, everything above
//! it slides down by its size; lifetimes that began before the trace sit at the bottom; allocations below
//! the detail cut are merged into one summarized band on top.
//!
//! x is the trace entry index. Each drawn band is a list of breakpoints `(x, offset)`: the band's bottom
//! is at `offset` bytes from x on. Offsets are `f32` (8 bytes a breakpoint): exact to a pixel at any scale
//! a screen can show. A real training trace has about 20 breakpoints per allocation.

use super::lifetimes::Lifetimes;

/// One breakpoint of a band: from entry `x` on, its bottom is at `offset` bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    pub x: u32,
    pub offset: f32,
}

/// One drawn allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Index into [`Lifetimes::allocations`].
    pub allocation: u32,
    /// First x of the band (0 for lifetimes that began before the trace).
    pub start: u32,
    /// x where it ends (the free's entry), or [`TimelineLayout::x_len`] while live at the end.
    pub end: u32,
    pub size: u64,
    pub first_point: u32,
    pub point_count: u32,
}

/// The summarized band (everything below the detail cut) from entry `x` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SummaryPoint {
    pub x: u32,
    pub bottom: f32,
    pub height: f32,
}

/// Everything a renderer needs to draw a timeline.
#[derive(Debug, Clone, Default)]
pub struct TimelineLayout {
    pub bands: Vec<Band>,
    pub points: Vec<BandPoint>,
    pub summary: Vec<SummaryPoint>,
    /// Number of x positions: the trace length (at least 1).
    pub x_len: u32,
    /// How many allocations are drawn as their own band, and how many there are.
    pub drawn: usize,
    pub total: usize,
    /// Highest stack (drawn plus summarized) over the whole trace.
    pub max_bytes: u64,
}

impl TimelineLayout {
    pub fn band_points(&self, band: &Band) -> &[BandPoint] {
        &self.points[band.first_point as usize..(band.first_point + band.point_count) as usize]
    }

    /// The band's bottom offset at `x`.
    pub fn offset_at(&self, band: &Band, x: u32) -> f32 {
        let pts = self.band_points(band);
        let k = pts.partition_point(|p| p.x <= x);
        pts[k.saturating_sub(1)].offset
    }

    /// The band under `(x, bytes)`, if any (ties: the topmost drawn).
    pub fn band_at(&self, x: u32, bytes: f64) -> Option<usize> {
        self.bands.iter().enumerate().rev().find_map(|(i, b)| {
            if x < b.start || x >= b.end.max(b.start + 1) {
                return None;
            }
            let bottom = self.offset_at(b, x) as f64;
            (bytes >= bottom && bytes < bottom + b.size as f64).then_some(i)
        })
    }

    /// Index of the band of allocation `allocation`, if drawn.
    pub fn band_of(&self, allocation: u32) -> Option<usize> {
        self.bands.iter().position(|b| b.allocation == allocation)
    }
}

/// How many allocations a detail level (0.0–1.0) draws as their own band: the largest first.
pub fn drawn_count(total: usize, detail: f64) -> usize {
    ((total as f64) * detail.clamp(0.0, 1.0)).ceil() as usize
}

/// Lays out `lifetimes` with the largest `detail` fraction of allocations drawn individually.
pub fn timeline_layout(lifetimes: &Lifetimes, detail: f64) -> TimelineLayout {
    let allocs = &lifetimes.allocations;
    let total = allocs.len();
    let keep = drawn_count(total, detail);
    // The `keep` largest (ties: the earliest) are drawn; which they are matters, not their order, so a
    // selection does (linear) what a sort would (n log n).
    let mut drawn = vec![keep == total; total];
    if keep < total {
        let mut by_size: Vec<(u64, u32)> = allocs
            .iter()
            .enumerate()
            .map(|(i, a)| (a.size, i as u32))
            .collect();
        if keep > 0 {
            by_size.select_nth_unstable_by(keep - 1, |x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        }
        for &(_, a) in &by_size[..keep] {
            drawn[a as usize] = true;
        }
    }
    let x_len = (lifetimes.live_after.len() as u32).max(1);

    // Two passes over the same simulation: the first counts each band's breakpoints, the second writes
    // them contiguously, so no per-band vectors are needed.
    let mut layout = TimelineLayout {
        x_len,
        drawn: keep,
        total,
        ..Default::default()
    };
    let mut band_of_alloc = vec![u32::MAX; total];
    let mut counts: Vec<u32> = Vec::new();
    simulate(lifetimes, &drawn, &mut |ev| match ev {
        Event::Open { allocation, x, .. } => {
            band_of_alloc[allocation as usize] = counts.len() as u32;
            let a = &allocs[allocation as usize];
            layout.bands.push(Band {
                allocation,
                start: x,
                end: x_len,
                size: a.size,
                first_point: 0,
                point_count: 0,
            });
            counts.push(1);
        }
        Event::Move { allocation, .. } => counts[band_of_alloc[allocation as usize] as usize] += 1,
        Event::Close { allocation, x } => {
            layout.bands[band_of_alloc[allocation as usize] as usize].end = x
        }
        Event::Summary { x, bottom, height } => {
            layout.max_bytes = layout.max_bytes.max(bottom + height);
            // While the summarized band is empty its position does not matter: keep one point.
            let empty_before = layout.summary.last().is_some_and(|p| p.height == 0.0);
            if !(empty_before && height == 0) {
                layout.summary.push(SummaryPoint {
                    x,
                    bottom: bottom as f32,
                    height: height as f32,
                });
            }
        }
    });
    let mut next = 0u32;
    for (b, &c) in layout.bands.iter_mut().zip(&counts) {
        b.first_point = next;
        b.point_count = c;
        next += c;
    }
    layout.points = vec![BandPoint { x: 0, offset: 0.0 }; next as usize];
    let mut filled = vec![0u32; layout.bands.len()];
    simulate(lifetimes, &drawn, &mut |ev| {
        let (allocation, x, offset) = match ev {
            Event::Open {
                allocation,
                x,
                offset,
            }
            | Event::Move {
                allocation,
                x,
                offset,
            } => (allocation, x, offset),
            _ => return,
        };
        let b = band_of_alloc[allocation as usize] as usize;
        let at = (layout.bands[b].first_point + filled[b]) as usize;
        layout.points[at] = BandPoint {
            x,
            offset: offset as f32,
        };
        filled[b] += 1;
    });
    layout
}

enum Event {
    Open {
        allocation: u32,
        x: u32,
        offset: u64,
    },
    Move {
        allocation: u32,
        x: u32,
        offset: u64,
    },
    Close {
        allocation: u32,
        x: u32,
    },
    Summary {
        x: u32,
        bottom: u64,
        height: u64,
    },
}

/// Replays MemoryViz's stacking, reporting bands opening, moving, closing and the summarized band.
fn simulate(lifetimes: &Lifetimes, drawn: &[bool], emit: &mut dyn FnMut(Event)) {
    let allocs = &lifetimes.allocations;
    // The stack of drawn bands, bottom first, with their current offsets.
    let mut current: Vec<(u32, u64)> = Vec::new();
    let mut drawn_bytes = 0u64;
    let mut summarized = 0u64;
    // Lifetimes that began before the trace: bottom of the stack, last element lowest (as MemoryViz).
    for (i, a) in allocs.iter().enumerate().rev() {
        if !a.is_initial() {
            continue;
        }
        if drawn[i] {
            emit(Event::Open {
                allocation: i as u32,
                x: 0,
                offset: drawn_bytes,
            });
            current.push((i as u32, drawn_bytes));
            drawn_bytes += a.size;
        } else {
            summarized += a.size;
        }
    }
    emit(Event::Summary {
        x: 0,
        bottom: drawn_bytes,
        height: summarized,
    });
    for &(x, id) in &lifetimes.changes {
        let a = &allocs[id as usize];
        let opening = a.alloc_event == Some(x);
        if !drawn[id as usize] {
            if opening {
                summarized += a.size;
            } else {
                summarized = summarized.saturating_sub(a.size);
            }
        } else if opening {
            emit(Event::Open {
                allocation: id,
                x,
                offset: drawn_bytes,
            });
            current.push((id, drawn_bytes));
            drawn_bytes += a.size;
        } else if let Some(idx) = current.iter().rposition(|&(c, _)| c == id) {
            current.remove(idx);
            emit(Event::Close { allocation: id, x });
            for entry in &mut current[idx..] {
                entry.1 -= a.size;
                emit(Event::Move {
                    allocation: entry.0,
                    x,
                    offset: entry.1,
                });
            }
            drawn_bytes -= a.size;
        }
        emit(Event::Summary {
            x,
            bottom: drawn_bytes,
            height: summarized,
        });
    }
}

/// Maximum of a series over index ranges, in O(n / BLOCK + BLOCK) per query. Holds only the block
/// maxima; the series itself is passed to each query (it already lives in [`Lifetimes::live_after`]).
#[derive(Debug, Clone, Default)]
pub struct RangeMax {
    blocks: Vec<u64>,
}

const BLOCK: usize = 256;

impl RangeMax {
    pub fn new(values: &[u64]) -> RangeMax {
        RangeMax {
            blocks: values
                .chunks(BLOCK)
                .map(|c| c.iter().copied().max().unwrap_or(0))
                .collect(),
        }
    }

    /// Max over `values[lo..hi]` (clamped); 0 when empty. `values` is the series `new` was given.
    pub fn max(&self, values: &[u64], lo: usize, hi: usize) -> u64 {
        let hi = hi.min(values.len());
        if lo >= hi {
            return 0;
        }
        let (bl, bh) = (lo.div_ceil(BLOCK), hi / BLOCK);
        if bl >= bh {
            return values[lo..hi].iter().copied().max().unwrap_or(0);
        }
        let head = values[lo..bl * BLOCK].iter().copied().max().unwrap_or(0);
        let mid = self.blocks[bl..bh].iter().copied().max().unwrap_or(0);
        let tail = values[bh * BLOCK..hi].iter().copied().max().unwrap_or(0);
        head.max(mid).max(tail)
    }
}

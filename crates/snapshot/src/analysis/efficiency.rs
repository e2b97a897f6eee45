//! How well the caching allocator uses what it reserved: allocated vs reserved, cached free blocks,
//! rounding waste, fragmentation; recommendations with their evidence; size distributions.

use super::lifetimes::{reserved_series, Allocation, Lifetimes, Peak};
use super::live_set::allocation_site;
use super::stats::{segment_stats, SegmentStats, StatsTotals};
use crate::model::{BlockState, Snapshot};

/// Cache overhead (reserved but not allocated, at the peak) above this share of reserved is reported.
pub const CACHE_OVERHEAD_THRESHOLD: f64 = 0.10;
/// Cached free blocks at least this big are reported.
pub const LARGE_FREE_BLOCK: u64 = 100 << 20;
/// Fragmentation (1 − largest free block / all free bytes) above this, with free bytes above 10 % of
/// reserved, suggests expandable segments.
pub const FRAGMENTATION_THRESHOLD: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Efficiency {
    pub peak_allocated: u64,
    /// Reserved bytes at the entry of the allocation peak.
    pub reserved_at_peak: u64,
    pub max_reserved: u64,
    /// `(reserved − allocated) / reserved` at the peak.
    pub cache_overhead: f64,
    /// At the snapshot: cached free bytes, the largest free block, rounding waste.
    pub free_bytes: u64,
    pub largest_free_block: u64,
    pub rounding_waste: u64,
    /// `1 − largest free block / free bytes` over all segments (0: one free block, or none).
    pub fragmentation: f64,
    /// Per segment, by address: (address, fragmentation).
    pub segment_fragmentation: Vec<(u64, f64)>,
}

fn fragmentation(largest: u64, free: u64) -> f64 {
    if free == 0 {
        0.0
    } else {
        1.0 - largest as f64 / free as f64
    }
}

pub fn efficiency(snapshot: &Snapshot, lifetimes: &Lifetimes, device: i64) -> Efficiency {
    let (start, reserved) = reserved_series(snapshot, device);
    efficiency_with(snapshot, lifetimes, device, (start, &reserved))
}

/// [`efficiency`] from the device's reserved series (`reserved_series`), which the caller already has.
pub fn efficiency_with(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
    reserved: (u64, &[u64]),
) -> Efficiency {
    let peak = lifetimes.peak();
    let (rows, totals) = segment_stats(snapshot, device);
    crate::batch::run_ready(efficiency_sliced(
        (&rows, &totals),
        peak,
        reserved,
        &mut crate::batch::NoPause,
    ))
}

/// [`efficiency_with`] from the device's segment figures (`segment_stats`) and at the block lifetimes'
/// `peak` (the caller has both), awaiting `pause` between batches of the reserved series.
pub async fn efficiency_sliced<P: crate::batch::Pause>(
    (rows, totals): (&[SegmentStats], &StatsTotals),
    peak: Peak,
    (start, reserved): (u64, &[u64]),
    pause: &mut P,
) -> Efficiency {
    let reserved_at_peak = if peak.event < 0 {
        start
    } else {
        reserved[peak.event as usize]
    };
    let mut max_reserved = start;
    let scan = |r: std::ops::Range<usize>| {
        max_reserved = reserved[r].iter().copied().fold(max_reserved, u64::max);
    };
    crate::batch::ranges_paused(reserved.len(), scan, pause).await;
    Efficiency {
        peak_allocated: peak.bytes,
        reserved_at_peak,
        max_reserved,
        cache_overhead: if reserved_at_peak == 0 {
            0.0
        } else {
            reserved_at_peak.saturating_sub(peak.bytes) as f64 / reserved_at_peak as f64
        },
        free_bytes: totals.free,
        largest_free_block: totals.largest_free,
        rounding_waste: totals.rounding_waste,
        fragmentation: fragmentation(totals.largest_free, totals.free),
        segment_fragmentation: rows
            .iter()
            .map(|r| (r.address, fragmentation(r.largest_free, r.free)))
            .collect(),
    }
}

/// A suggestion, with what it is based on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recommendation {
    pub kind: &'static str,
    pub message: String,
    pub evidence: String,
}

fn gib(n: u64) -> String {
    crate::format::bytes(n)
}

/// Recommendations for one device, from its efficiency figures and trace.
pub fn recommendations(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
) -> Vec<Recommendation> {
    let e = efficiency(snapshot, lifetimes, device);
    recommendations_from(snapshot, lifetimes, device, &e)
}

/// [`recommendations`] from efficiency figures the caller already has.
pub fn recommendations_from(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
    e: &Efficiency,
) -> Vec<Recommendation> {
    crate::batch::run_ready(recommendations_sliced(
        snapshot,
        lifetimes,
        device,
        e,
        &mut crate::batch::NoPause,
    ))
}

/// [`recommendations_from`], awaiting `pause` every [`crate::batch::BATCH`] allocations.
pub async fn recommendations_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
    e: &Efficiency,
    pause: &mut P,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    if e.cache_overhead > CACHE_OVERHEAD_THRESHOLD {
        out.push(Recommendation {
            kind: "cache_overhead",
            message: "The allocator holds much more than is allocated at the peak; torch.cuda.empty_cache() between phases, or expandable_segments:True, returns it.".into(),
            evidence: format!(
                "{:.0} % of reserved is cached, not allocated, at the peak ({} reserved, {} allocated; threshold {:.0} %)",
                e.cache_overhead * 100.0,
                gib(e.reserved_at_peak),
                gib(e.peak_allocated),
                CACHE_OVERHEAD_THRESHOLD * 100.0
            ),
        });
    }
    let large_free: Vec<u64> = snapshot
        .segments_of(device)
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state == BlockState::Inactive && b.size >= LARGE_FREE_BLOCK)
        .map(|b| b.size)
        .collect();
    if !large_free.is_empty() {
        out.push(Recommendation {
            kind: "large_free_blocks",
            message: "Large cached blocks sit unused at the end; they may be left from a phase that never recurs (empty_cache() after it frees them).".into(),
            evidence: format!(
                "{} of at least {} {} {}",
                crate::format::count(large_free.len() as u64, "free block", "free blocks"),
                gib(LARGE_FREE_BLOCK),
                if large_free.len() == 1 { "holds" } else { "hold" },
                gib(large_free.iter().sum())
            ),
        });
    }
    let expandable = snapshot.segments_of(device).any(|s| s.is_expandable);
    if e.fragmentation > FRAGMENTATION_THRESHOLD
        && e.free_bytes as f64 > 0.1 * e.max_reserved.max(1) as f64
        && !expandable
    {
        out.push(Recommendation {
            kind: "fragmentation",
            message: "Free memory is split into many pieces; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow instead of fragmenting.".into(),
            evidence: format!(
                "fragmentation {:.2} (largest free block {} of {} free; threshold {FRAGMENTATION_THRESHOLD})",
                e.fragmentation,
                gib(e.largest_free_block),
                gib(e.free_bytes)
            ),
        });
    }
    // Possible leak: live at the end, made by a stack that also made allocations that were freed
    // (a phase that repeats), and made after the first such free.
    let mut freed_by_stack: foldhash::HashMap<_, (u32, u32)> = foldhash::HashMap::default();
    for part in lifetimes.allocations.chunks(crate::batch::BATCH) {
        for a in part {
            if let (Some(_), Some(f)) = (a.alloc_event(), a.free_event()) {
                let e = freed_by_stack.entry(a.stack).or_insert((0, u32::MAX));
                e.0 += 1;
                e.1 = e.1.min(f);
            }
        }
        pause.pause().await;
    }
    let mut suspects: Vec<&Allocation> = Vec::new();
    for part in lifetimes.allocations.chunks(crate::batch::BATCH) {
        suspects.extend(
            part.iter()
                .filter(|a| a.free_event().is_none() && a.stack != crate::model::StackId::EMPTY)
                .filter(|a| {
                    freed_by_stack
                        .get(&a.stack)
                        .is_some_and(|&(n, first_free)| {
                            n >= 3 && a.alloc_event().is_some_and(|x| x > first_free)
                        })
                }),
        );
        pause.pause().await;
    }
    if !suspects.is_empty() {
        out.push(Recommendation {
            kind: "possible_leak",
            message: "Allocations made in a repeated phase are still live at the end: something may keep references across iterations (losses, outputs, caches).".into(),
            evidence: format!(
                "{} ({}) still live whose code path also made at least 3 allocations that were freed",
                crate::format::count(suspects.len() as u64, "allocation", "allocations"),
                gib(suspects.iter().map(|a| a.size).sum())
            ),
        });
    }
    let trace = snapshot.trace(device);
    for i in super::oom::oom_entries_sliced(trace, pause).await {
        let entry = trace.get(i);
        // What held the memory: the code paths with the most bytes live at the OOM (summed by stack
        // first, so each stack's site is named once).
        let mut by_stack: foldhash::HashMap<_, u64> = foldhash::HashMap::default();
        for a in lifetimes.live_set_at_sliced(i as i64, pause).await {
            let a = &lifetimes.allocations[a as usize];
            *by_stack.entry(a.stack).or_default() += a.size;
        }
        let mut by_site: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        for (stack, b) in by_stack {
            *by_site.entry(allocation_site(snapshot, stack)).or_default() += b;
        }
        let mut sites: Vec<(String, u64)> = by_site.into_iter().collect();
        sites.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let held: Vec<String> = sites
            .iter()
            .take(3)
            .map(|(site, b)| format!("{} from {site}", gib(*b)))
            .collect();
        out.push(Recommendation {
            kind: "oom",
            message: "The program ran out of memory here; the live set at this entry shows what held the memory.".into(),
            evidence: format!(
                "entry {i}: a request of {} with {} free on the device and {} allocated by PyTorch; most held by {}",
                gib(entry.size),
                gib(entry.device_free.unwrap_or(0)),
                gib(lifetimes.live_bytes_at(i as i64)),
                if held.is_empty() { "nothing".to_string() } else { held.join(", ") }
            ),
        });
    }
    out
}

/// Counts and bytes per power-of-two size bucket: bucket k holds sizes in `[2^k, 2^(k+1))`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Bucket {
    pub from: u64,
    pub count: u64,
    pub bytes: u64,
}

pub fn histogram(sizes: impl IntoIterator<Item = u64>) -> Vec<Bucket> {
    let mut buckets: Vec<Bucket> = (0..64)
        .map(|k| Bucket {
            from: 1u64 << k,
            count: 0,
            bytes: 0,
        })
        .collect();
    for s in sizes {
        let k = 63 - s.max(1).leading_zeros() as usize;
        buckets[k].count += 1;
        buckets[k].bytes += s;
    }
    let first = buckets.iter().position(|b| b.count > 0).unwrap_or(0);
    let last = buckets.iter().rposition(|b| b.count > 0).unwrap_or(0);
    buckets.drain(first..=last).collect()
}

/// Sizes of the allocations live at `event` and of the cached free blocks at the snapshot.
pub fn size_distributions(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
    event: i64,
) -> (Vec<Bucket>, Vec<Bucket>) {
    size_distributions_of(snapshot, lifetimes, device, &lifetimes.live_set_at(event))
}

/// [`size_distributions`] with the live set `live` (which the caller has).
pub fn size_distributions_of(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    device: i64,
    live: &[u32],
) -> (Vec<Bucket>, Vec<Bucket>) {
    let live = histogram(live.iter().map(|&i| lifetimes.allocations[i as usize].size));
    let free = histogram(
        snapshot
            .segments_of(device)
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == BlockState::Inactive)
            .map(|b| b.size),
    );
    (live, free)
}

//! The Allocator State History's map: one row per segment (scaled to the largest), its blocks coloured by
//! allocation, pending frees hatched, rounding waste (block bytes beyond the request) as a red strip at a
//! block's end, free space grey.

use memograph_snapshot::format::bytes;

use super::colors::{self, Theme};
use super::{Pen, Surface};
use crate::view_model::SegmentRow;

pub const ROW: f64 = 22.0;
/// The labels' font, and the advance of one of its characters (monospace fonts' is 0.55–0.61 em).
const LABEL_FONT: &str = "11px ui-monospace, monospace";
const LABEL_CHAR: f64 = 6.8;
/// Where the labels start, and the gap between the longest and the bars.
const LABEL_X: f64 = 4.0;
const LABEL_GAP: f64 = 10.0;

/// Pixel geometry of one frame, shared by drawing and hit-testing.
pub struct MapGeometry {
    /// Where the bars start: after the longest label.
    pub left: f64,
    pub scale: f64,
    pub scroll: f64,
}

/// A segment's label: its address and size.
fn label(r: &SegmentRow) -> String {
    format!("{:x} {}", r.address, bytes(r.size))
}

/// The longest label's length, without writing every label (a file can have tens of thousands of
/// segments, and the rows change with every event selected): the address's hex digits are counted,
/// and each size is written once (segments come in few sizes).
fn longest_label(rows: &[SegmentRow]) -> usize {
    let hex_digits = |x: u64| ((64 - x.leading_zeros()).max(1)).div_ceil(4) as usize;
    let mut written: std::collections::HashMap<u64, usize> = Default::default();
    rows.iter()
        .map(|r| {
            let size = *written.entry(r.size).or_insert_with(|| bytes(r.size).len());
            hex_digits(r.address) + 1 + size
        })
        .max()
        .unwrap_or(0)
}

/// A map's rows, with what its geometry needs of them (the largest segment, the longest label) taken
/// once when the rows are made, not at every frame and pointer move.
#[derive(Default, PartialEq)]
pub struct MapRows {
    pub rows: Vec<SegmentRow>,
    largest: u64,
    chars: usize,
}

impl MapRows {
    pub fn new(rows: Vec<SegmentRow>) -> MapRows {
        MapRows {
            largest: rows.iter().map(|r| r.size).max().unwrap_or(0),
            chars: longest_label(&rows),
            rows,
        }
    }
}

/// How far a map of `rows` on a canvas `height` pixels tall scrolls: to its last row's bottom.
pub fn max_scroll(rows: &MapRows, height: f64) -> f64 {
    (rows.rows.len() as f64 * ROW + 4.0 - height).max(0.0)
}

pub fn geometry(s_width: f64, rows: &MapRows, scroll: f64) -> MapGeometry {
    let left = LABEL_X + rows.chars as f64 * LABEL_CHAR + LABEL_GAP;
    MapGeometry {
        left,
        scale: (s_width - left - 10.0).max(10.0) / rows.largest.max(1) as f64,
        scroll,
    }
}

pub fn draw<P: Pen>(
    s: &Surface<P>,
    rows: &[SegmentRow],
    g: &MapGeometry,
    selected: Option<u32>,
    theme: &Theme,
) {
    let ctx = &s.ctx;
    ctx.set_fill_style_str(theme.background);
    ctx.fill_rect(0.0, 0.0, s.width, s.height);
    ctx.set_font(LABEL_FONT);
    ctx.set_text_baseline("middle");
    let first = (g.scroll / ROW).floor().max(0.0) as usize;
    for (i, r) in rows.iter().enumerate().skip(first) {
        let y = i as f64 * ROW - g.scroll + 2.0;
        if y > s.height {
            break;
        }
        ctx.set_fill_style_str(theme.muted);
        ctx.set_text_align("left");
        ctx.fill_text(&label(r), LABEL_X, y + ROW / 2.0 - 1.0);
        ctx.set_fill_style_str(theme.free);
        ctx.fill_rect(g.left, y, r.size as f64 * g.scale, ROW - 4.0);
        for b in &r.blocks {
            let x = g.left + (b.address - r.address) as f64 * g.scale;
            let w = (b.size as f64 * g.scale).max(1.0);
            ctx.set_fill_style_str(colors::allocation(b.allocation));
            ctx.set_global_alpha(if b.pending_free { 0.45 } else { 1.0 });
            ctx.fill_rect(x, y, w, ROW - 4.0);
            ctx.set_global_alpha(1.0);
            if b.pending_free && w > 4.0 {
                ctx.set_stroke_style_str(theme.text);
                ctx.set_line_width(1.0);
                ctx.begin_path();
                let mut k = 0.0;
                while k < w {
                    ctx.move_to(x + k, y + ROW - 4.0);
                    ctx.line_to(x + (k + 6.0).min(w), y);
                    k += 6.0;
                }
                ctx.stroke();
            }
            // At least 2 px, so blocks that waste anything are marked even when it is a sliver.
            let waste = (b.rounding_waste as f64 * g.scale).max(2.0);
            if b.rounding_waste > 0 && w >= 6.0 {
                ctx.set_fill_style_str(theme.peak);
                ctx.set_global_alpha(0.7);
                ctx.fill_rect(x + w - waste.min(w), y + ROW - 9.0, waste.min(w), 5.0);
                ctx.set_global_alpha(1.0);
            }
            if selected == Some(b.allocation) {
                ctx.set_stroke_style_str(theme.highlight);
                ctx.set_line_width(2.0);
                ctx.stroke_rect(x, y, w, ROW - 4.0);
            }
        }
    }
}

/// The (row, block index) under a point.
pub fn hit(rows: &[SegmentRow], g: &MapGeometry, x: f64, y: f64) -> Option<(usize, Option<usize>)> {
    let i = ((y + g.scroll) / ROW).floor();
    if i < 0.0 {
        return None;
    }
    let r = rows.get(i as usize)?;
    if x < g.left {
        return Some((i as usize, None));
    }
    let addr = r.address as f64 + (x - g.left) / g.scale;
    let b = r
        .blocks
        .iter()
        .position(|b| addr >= b.address as f64 && addr < (b.address + b.size) as f64);
    Some((i as usize, b))
}

/// Where the keyboard goes from a block of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The next block by address (on into the next segment that has one), or back.
    Next,
    Previous,
    /// The block of the next segment with blocks nearest the same offset in it, or of the one before.
    Down,
    Up,
    First,
    Last,
}

/// The (row, block) a key leads to from `at` (none yet: the first block); `None` where the map has no
/// block. `at` may be out of date (the rows change with the entry): it is clamped, never trusted.
pub fn step(rows: &[SegmentRow], at: Option<(usize, usize)>, to: Step) -> Option<(usize, usize)> {
    let with_blocks = |r: &usize| !rows[*r].blocks.is_empty();
    let first = (0..rows.len()).find(with_blocks).map(|r| (r, 0));
    let last = (0..rows.len())
        .rev()
        .find(with_blocks)
        .map(|r| (r, rows[r].blocks.len() - 1));
    let Some((r, b)) = at.filter(|&(r, b)| rows.get(r).is_some_and(|row| b < row.blocks.len()))
    else {
        return if to == Step::Last { last } else { first };
    };
    let offset = |r: usize, b: usize| rows[r].blocks[b].address.wrapping_sub(rows[r].address);
    // The block of row `r` nearest the current one's offset in its segment.
    let nearest = |to: usize| {
        let want = offset(r, b);
        let k = (0..rows[to].blocks.len())
            .min_by_key(|&k| offset(to, k).abs_diff(want))
            .unwrap_or(0);
        (to, k)
    };
    Some(match to {
        Step::First => first?,
        Step::Last => last?,
        Step::Next if b + 1 < rows[r].blocks.len() => (r, b + 1),
        Step::Next => (r + 1..rows.len())
            .find(with_blocks)
            .map_or((r, b), |n| (n, 0)),
        Step::Previous if b > 0 => (r, b - 1),
        Step::Previous => (0..r)
            .rev()
            .find(with_blocks)
            .map_or((r, b), |p| (p, rows[p].blocks.len() - 1)),
        Step::Down => (r + 1..rows.len())
            .find(with_blocks)
            .map_or((r, b), nearest),
        Step::Up => (0..r).rev().find(with_blocks).map_or((r, b), nearest),
    })
}

/// A block's rectangle on the map: `(x, y, width, height)` in CSS pixels.
pub fn block_rect(
    rows: &[SegmentRow],
    g: &MapGeometry,
    r: usize,
    b: usize,
) -> Option<(f64, f64, f64, f64)> {
    let row = rows.get(r)?;
    let block = row.blocks.get(b)?;
    let x = g.left + block.address.wrapping_sub(row.address) as f64 * g.scale;
    let y = r as f64 * ROW - g.scroll + 2.0;
    Some((x, y, (block.size as f64 * g.scale).max(1.0), ROW - 4.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn the_longest_label_is_counted_as_written() {
        let addresses = [0, 1, 0xf, 0x10, 0x7f00_0000_0000, 1 << 45, u64::MAX];
        let sizes = [0, 1, 512, 1023, 1024, 2 << 20, 20 << 20, 1 << 40, u64::MAX];
        for (k, &address) in addresses.iter().enumerate() {
            let rows: Vec<SegmentRow> = sizes
                .iter()
                .skip(k % 3)
                .map(|&size| SegmentRow {
                    address,
                    size,
                    blocks: Vec::new(),
                })
                .collect();
            let written = rows.iter().map(|r| label(r).len()).max().unwrap();
            assert_eq!(longest_label(&rows), written, "{address:x}");
        }
        assert_eq!(longest_label(&[]), 0);
    }

    fn block(address: u64) -> crate::view_model::state::BlockBox {
        crate::view_model::state::BlockBox {
            address,
            size: 16,
            allocation: address as u32,
            pending_free: false,
            rounding_waste: 0,
        }
    }

    #[wasm_bindgen_test]
    fn the_keyboard_steps_through_every_block_and_stays_on_the_map() {
        // Segments at 0 (blocks at 0, 32, 64), 1000 (none), 2000 (blocks at 2040, 2090), 3000 (none).
        let rows: Vec<SegmentRow> = [
            (0, vec![0, 32, 64]),
            (1000, vec![]),
            (2000, vec![2040, 2090]),
            (3000, vec![]),
        ]
        .into_iter()
        .map(|(address, blocks)| SegmentRow {
            address,
            size: 100,
            blocks: blocks.into_iter().map(block).collect(),
        })
        .collect();
        let mut at = step(&rows, None, Step::Next);
        let mut seen = vec![at];
        for _ in 0..6 {
            at = step(&rows, at, Step::Next);
            seen.push(at);
        }
        let s = |r, b| Some((r, b));
        assert_eq!(
            seen,
            [
                s(0, 0),
                s(0, 1),
                s(0, 2),
                s(2, 0),
                s(2, 1),
                s(2, 1),
                s(2, 1)
            ]
        );
        assert_eq!(step(&rows, s(2, 0), Step::Previous), s(0, 2));
        assert_eq!(step(&rows, s(0, 0), Step::Previous), s(0, 0));
        // Down from offset 32 (block 1): 2040 is at offset 40, 2090 at 90: the nearer is 2040.
        assert_eq!(step(&rows, s(0, 1), Step::Down), s(2, 0));
        assert_eq!(step(&rows, s(2, 1), Step::Up), s(0, 2));
        assert_eq!(step(&rows, s(2, 1), Step::Down), s(2, 1));
        assert_eq!(step(&rows, s(2, 0), Step::First), s(0, 0));
        assert_eq!(step(&rows, None, Step::Last), s(2, 1));
        // Out of date (rows changed): from the start again, never out of range.
        assert_eq!(step(&rows, s(9, 0), Step::Next), s(0, 0));
        assert_eq!(step(&rows, s(1, 0), Step::Down), s(0, 0));
        assert_eq!(step(&[], None, Step::Next), None);
        assert_eq!(step(&rows[1..2], s(0, 0), Step::Up), None);
        let g = MapGeometry {
            left: 10.0,
            scale: 2.0,
            scroll: 0.0,
        };
        assert_eq!(
            block_rect(&rows, &g, 2, 1),
            Some((190.0, 2.0 * ROW + 2.0, 32.0, ROW - 4.0))
        );
        assert_eq!(block_rect(&rows, &g, 1, 0), None);
    }
}

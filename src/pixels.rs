//! A raster the renderers fill themselves: the device pixels over the plot, for pictures of many small
//! axis-aligned shapes. A zoomed, fully detailed 1 GB snapshot shows tens of thousands of bands a
//! frame; as a canvas path each (a colour string, a path, a fill) they took 55-130 ms a frame, most of
//! it in the canvas's own calls and raster. Filled here, a frame costs the plot's pixels.
//!
//! Edges are snapped to device pixels (a band's edges are horizontal and vertical, so nothing is
//! lost but sub-pixel placement), and a shape thinner than a pixel keeps the pixel its middle is in:
//! shapes that share an edge share it exactly, with no seam and no overlap, and a stack of thin
//! shapes covers the pixels it spans.

use crate::scale::Plot;

/// Non-premultiplied RGBA pixels, a `u32` each in memory order (red in the low byte), row by row.
pub struct Pixels {
    /// Device pixels per CSS pixel.
    ratio: f64,
    /// The first column and row, in device pixels from the surface's corner.
    pub left: i32,
    pub top: i32,
    pub width: usize,
    pub height: usize,
    data: Vec<u32>,
}

impl Pixels {
    /// Transparent pixels covering `plot` (CSS pixels) at `ratio` device pixels each.
    pub fn over(plot: &Plot, ratio: f64) -> Pixels {
        let ratio = if ratio.is_finite() && ratio > 0.0 {
            ratio
        } else {
            1.0
        };
        let left = (plot.left * ratio).floor();
        let top = (plot.top * ratio).floor();
        let right = ((plot.left + plot.width.max(0.0)) * ratio).ceil();
        let bottom = ((plot.top + plot.height.max(0.0)) * ratio).ceil();
        // A plot is at most a screen's worth: bound it anyway, so a wild size is an empty raster.
        let dim = |a: f64, z: f64| (z - a).clamp(0.0, 16384.0) as usize;
        let (width, height) = (dim(left, right), dim(top, bottom));
        Pixels {
            ratio,
            left: left.clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            top: top.clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            width,
            height,
            data: vec![0; width * height],
        }
    }

    /// Sets the pixels of the rectangle from x `x0..x1`, y `y0..y1` (CSS pixels, either order) to
    /// `rgba` (see [`rgba`]): its edges rounded to the nearest device pixel, one pixel at least each
    /// way (see [`Pixels::span`]; an edge past the raster's clips it).
    pub fn fill(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, rgba: u32) {
        let cols = self.span(x0.min(x1), x0.max(x1), self.left, self.width);
        let rows = self.span(y0.min(y1), y0.max(y1), self.top, self.height);
        if cols.is_empty() {
            return;
        }
        for row in rows {
            self.data[row * self.width..][cols.clone()].fill(rgba);
        }
    }

    /// The cells of `0..n` from CSS `a` to `b`: its edges rounded; where that leaves none, the cell
    /// its middle is in; clipped.
    fn span(&self, a: f64, b: f64, origin: i32, n: usize) -> std::ops::Range<usize> {
        let (a, b) = (
            a * self.ratio - f64::from(origin),
            b * self.ratio - f64::from(origin),
        );
        let (mut lo, mut hi) = (a.round(), b.round());
        if hi <= lo {
            lo = ((a + b) / 2.0).floor();
            hi = lo + 1.0;
        }
        // `as` saturates (NaN to 0): a shape far outside is an empty range, never a panic.
        let clip = |v: f64| v.clamp(0.0, n as f64) as usize;
        clip(lo)..clip(hi)
    }

    /// The pixel at column `col`, row `row` of the raster (tests).
    #[cfg(test)]
    pub fn at(&self, col: usize, row: usize) -> u32 {
        self.data[row * self.width + col]
    }

    /// The pixels as bytes, R G B A each, for an `ImageData`.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `u32` has no padding and any bytes are valid `u8`s; the length is the same memory's.
        // Little-endian (wasm32 is) puts red, the low byte, first.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u8>(), self.data.len() * 4) }
    }
}

/// A CSS colour `#rrggbb` (or `#rgb`) at `alpha` (0–1) as a [`Pixels`] value; anything else is
/// opaque grey.
pub fn rgba(css: &str, alpha: f64) -> u32 {
    let hex = css.strip_prefix('#').unwrap_or(css);
    let rgb = match hex.len() {
        6 => u32::from_str_radix(hex, 16).ok(),
        3 => u32::from_str_radix(hex, 16)
            .ok()
            .map(|v| (v >> 8 & 0xf) * 0x11_00_00 + (v >> 4 & 0xf) * 0x11_00 + (v & 0xf) * 0x11),
        _ => None,
    }
    .unwrap_or(0x80_80_80);
    let a = (alpha.clamp(0.0, 1.0) * 255.0).round() as u32;
    let (r, g, b) = (rgb >> 16 & 0xff, rgb >> 8 & 0xff, rgb & 0xff);
    u32::from_le_bytes([r as u8, g as u8, b as u8, a as u8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot(left: f64, top: f64, width: f64, height: f64) -> Plot {
        Plot {
            left,
            top,
            width,
            height,
        }
    }

    #[test]
    fn colours_are_bytes_in_canvas_order() {
        assert_eq!(rgba("#4e79a7", 1.0).to_le_bytes(), [0x4e, 0x79, 0xa7, 255]);
        assert_eq!(rgba("#fff", 0.25).to_le_bytes(), [255, 255, 255, 64]);
        assert_eq!(rgba("teal", 1.0).to_le_bytes(), [128, 128, 128, 255]);
        let px = Pixels::over(&plot(0.0, 0.0, 2.0, 1.0), 1.0);
        assert_eq!(px.bytes().len(), 8);
    }

    #[test]
    fn the_raster_covers_the_plot_in_device_pixels() {
        let px = Pixels::over(&plot(60.5, 8.0, 100.0, 50.25), 2.0);
        assert_eq!((px.left, px.top, px.width, px.height), (121, 16, 200, 101));
        let wild = Pixels::over(&plot(0.0, 0.0, f64::NAN, 1e300), f64::NAN);
        assert_eq!((wild.width, wild.height), (0, 16384));
    }

    /// Every pixel of `px` as the index of the shape that set it last (0: none).
    fn owners(px: &Pixels, colours: &[u32]) -> Vec<Vec<usize>> {
        (0..px.height)
            .map(|r| {
                (0..px.width)
                    .map(|c| {
                        let v = px.at(c, r);
                        colours.iter().position(|&k| k == v).map_or(0, |k| k + 1)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn shapes_sharing_an_edge_share_it_without_a_gap_or_overlap() {
        let mut px = Pixels::over(&plot(0.0, 0.0, 10.0, 4.0), 1.0);
        let (a, b) = (rgba("#ff0000", 1.0), rgba("#00ff00", 1.0));
        // Side by side at x = 3.4, then b also stacked on a at y = 1.6.
        px.fill(0.2, 3.4, 4.0, 1.6, a);
        px.fill(3.4, 7.9, 4.0, 1.6, b);
        px.fill(0.2, 3.4, 1.6, 0.0, b);
        let own = owners(&px, &[a, b]);
        assert_eq!(own[3], [1, 1, 1, 2, 2, 2, 2, 2, 0, 0]);
        assert_eq!(own[2], own[3]);
        assert_eq!(own[1], [2, 2, 2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(own[0], own[1]);
    }

    #[test]
    fn a_shape_thinner_than_a_pixel_keeps_one_and_a_stack_of_them_its_height() {
        let mut px = Pixels::over(&plot(0.0, 0.0, 4.0, 8.0), 1.0);
        let colours: Vec<u32> = (1..=10).map(|k| rgba("#000000", 1.0) | k).collect();
        // Ten shapes 0.3 px tall stacked from y = 1.0: 3 px in all.
        for (k, &c) in colours.iter().enumerate() {
            let y = 1.0 + 0.3 * k as f64;
            px.fill(1.0, 1.1, y, y + 0.3, c);
        }
        let own = owners(&px, &colours);
        let set: Vec<usize> = (0..8).filter(|&r| own[r][1] != 0).collect();
        assert_eq!(set, [1, 2, 3]);
        assert!((0..8).all(|r| own[r][0] == 0 && own[r][2] == 0));
    }

    #[test]
    fn shapes_outside_or_absurd_are_clipped_never_a_panic() {
        let mut px = Pixels::over(&plot(10.0, 10.0, 4.0, 4.0), 1.0);
        let c = rgba("#123456", 1.0);
        px.fill(-1e12, 1e12, 12.0, 13.0, c);
        px.fill(f64::NAN, f64::NAN, 0.0, f64::INFINITY, c);
        px.fill(11.0, 12.0, f64::NAN, f64::NAN, c);
        px.fill(100.0, 200.0, 11.0, 12.0, c);
        px.fill(0.0, 5.0, 11.0, 12.0, c);
        let own = owners(&px, &[c]);
        assert_eq!(own[2], [1, 1, 1, 1]);
        assert_eq!(own[1], [0, 0, 0, 0]);
    }
}

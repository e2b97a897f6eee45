//! Legends: plotters' own for the report's charts, and [`Legend`], laid out and measured here, for
//! the line charts of several runs (names cut to fit, fewer runs named on a small chart, the legend
//! under the plot where it would cover it).

use plotters::coord::Shift;
use plotters::element::{Drawable, DynElement, IntoDynElement, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::labels::cut_keeping;
use crate::line::{dashes, LineChart, LINE_CHART_SIDES};
use crate::{Result, Theme};

pub(crate) fn series_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    theme: &Theme,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // plotters' margins and swatch room, scaled as the text is (on a screen of two pixels to the
    // point they were half the text's measure, the swatches against the labels).
    chart
        .configure_series_labels()
        .position(position)
        .margin(theme.px(LEGEND_MARGIN))
        .legend_area_size(theme.px(LEGEND_SWATCH))
        .label_font(theme.text(12))
        .background_style(theme.background.mix(0.85))
        .border_style(theme.muted)
        .draw()?;
    Ok(())
}

/// plotters' own legend measures, at one pixel to the point: the margin inside its box, the room
/// for a swatch, and how far the box stands from the plot's corner.
const LEGEND_MARGIN: u32 = 10;
const LEGEND_SWATCH: u32 = 30;
const LEGEND_CORNER: u32 = 5;

/// A legend's swatch for a line drawn in `style`: a short stroke of it.
pub(crate) fn line_swatch(
    style: ShapeStyle,
    theme: &Theme,
) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    let len = theme.px(12) as i32;
    move |(x, y)| PathElement::new(vec![(x, y), (x + len, y)], style)
}

pub(crate) fn swatch(
    color: RGBColor,
    theme: &Theme,
) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    let h = theme.px(6) as i32;
    move |(x, y)| Rectangle::new([(x, y - h), (x + 2 * h, y + h)], color.filled())
}

/// Runs a chart's legend names one by one; past them it names the first `LEGEND_RUNS - 1` and says how
/// many more there are (32 ranks' names ran off the chart, over its axes). Under a phone's chart,
/// fewer: as many as leave the plot most of the chart's height (see [`Legend::fitted`]).
pub(crate) const LEGEND_RUNS: usize = 12;

/// Whether run `k` of `runs` has its own line in a legend that names at most `named`.
pub(crate) fn in_legend(k: usize, runs: usize, named: usize) -> bool {
    runs <= named || k + 1 < named
}

/// The legend's line for the runs it does not name.
pub(crate) fn more_runs(runs: usize, named: usize) -> Option<LegendLine> {
    (runs > named).then(|| {
        let more = runs - named.saturating_sub(1);
        LegendLine::plain(
            format!("… and {more} more (colours as in the table)"),
            Key::None,
        )
    })
}

/// What a legend's line draws before its text: nothing, a stroke of a curve's style, the same in a
/// pattern of dashes (pixels at scale 1), or a mark of the chart's.
#[derive(Clone, Copy)]
pub(crate) enum Key {
    None,
    Line(ShapeStyle),
    Pattern(ShapeStyle, &'static [u32]),
    Cross(ShapeStyle, u32),
    Triangle(RGBColor, u32),
}

/// A dashed curve's key: its dashes as they come out over a swatch's length.
pub(crate) const DASHED_KEY: [u32; 2] = [5, 3];

/// A legend's line: a name that may be cut to fit, keeping its part `keep` (see [`cut_keeping`]),
/// then `figures` whole, after its `key`.
pub(crate) struct LegendLine {
    pub(crate) name: String,
    pub(crate) keep: (usize, usize),
    pub(crate) figures: String,
    pub(crate) key: Key,
}

impl LegendLine {
    /// A line of `text` after `key`, cut in its middle if need be.
    pub(crate) fn plain(text: String, key: Key) -> LegendLine {
        let keep = (0, text.chars().count());
        LegendLine {
            name: text,
            keep,
            figures: String::new(),
            key,
        }
    }
}

/// The fewest characters of a name a legend's line keeps, however narrow its chart.
const LEGEND_NAME_MIN: usize = 6;

/// A legend laid out as plotters lays out its own (the same margins, swatch room and line height,
/// see [`series_legend`]), its text measured by the backend (`estimate_text_size`) rather than by plotters'
/// fonts: in a browser those put each text in the page to measure it, and the Compare chart, drawn
/// again as each of hundreds of files came, spent more time there than on its curves.
pub(crate) struct Legend {
    lines: Vec<LegendLine>,
    /// Each line's text as drawn, and its size.
    texts: Vec<(String, (u32, u32))>,
    /// The box's size, its margins included.
    size: (i32, i32),
}

impl Legend {
    /// `lines` laid out for a chart as wide as `area`. A line wider than that has its name cut to fit
    /// (a narrow window's run names ran past its edge), keeping what tells it from the others and
    /// its figures whole, measured again after each cut.
    fn new<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        lines: Vec<LegendLine>,
        theme: &Theme,
    ) -> Result<Legend>
    where
        DB::ErrorType: 'static,
    {
        let (margin, swatch, corner) = Legend::measures(theme);
        let font = theme.text(12);
        let room = area.dim_in_pixel().0 as i32 - 2 * corner - swatch - 2 * margin;
        let mut texts = Vec::with_capacity(lines.len());
        for line in &lines {
            let mut max = line.name.chars().count();
            let mut text = format!("{}{}", line.name, line.figures);
            let mut size = area.estimate_text_size(&text, &font)?;
            while size.0 as i32 > room && max > LEGEND_NAME_MIN {
                let per_char = f64::from(size.0) / text.chars().count().max(1) as f64;
                let over = (f64::from(size.0 as i32 - room) / per_char).ceil() as usize;
                max = max.saturating_sub(over).clamp(LEGEND_NAME_MIN, max - 1);
                text = format!(
                    "{}{}",
                    cut_keeping(&line.name, max, line.keep),
                    line.figures
                );
                size = area.estimate_text_size(&text, &font)?;
            }
            texts.push((text, size));
        }
        let width = texts.iter().map(|t| t.1 .0 as i32).max().unwrap_or(0);
        let last = texts.last().map_or(0, |t| t.1 .1 as i32);
        let height = (Legend::step(theme) * lines.len().saturating_sub(1) as f64).round() as i32;
        Ok(Legend {
            lines,
            texts,
            size: (width + swatch + 2 * margin, height + last + 2 * margin),
        })
    }

    /// The legend of a line chart of `runs` runs on `area` (`lines(named)`: its lines, naming at
    /// most `named` runs), with the chart's area and the strip under it where the legend goes there
    /// (see [`Legend::room`]). Where, under the chart, it would take over two fifths of the chart's
    /// height (a phone's chart of 16 ranks), it names fewer runs.
    #[allow(clippy::type_complexity)]
    pub(crate) fn fitted<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        runs: usize,
        lines: impl Fn(usize) -> Vec<LegendLine>,
        theme: &Theme,
    ) -> Result<(
        Legend,
        DrawingArea<DB, Shift>,
        Option<DrawingArea<DB, Shift>>,
    )>
    where
        DB::ErrorType: 'static,
    {
        let mut named = LEGEND_RUNS;
        loop {
            let legend = Legend::new(area, lines(named), theme)?;
            match legend.room(area, theme) {
                Room::Over => return Ok((legend, area.clone(), None)),
                Room::Under(chart, strip) => return Ok((legend, chart, Some(strip))),
                Room::TooTall(_) if named.min(runs) <= 2 => {
                    return Ok((legend, area.clone(), None));
                }
                Room::TooTall(excess) => {
                    let lines = (f64::from(excess) / Legend::step(theme)).ceil() as usize;
                    named = named.min(runs).saturating_sub(lines.max(1)).max(2);
                }
            }
        }
    }

    /// The margin inside the box, the room for a key and the box's distance from its corner, in
    /// backend pixels.
    fn measures(theme: &Theme) -> (i32, i32, i32) {
        (
            theme.px(LEGEND_MARGIN) as i32,
            theme.px(LEGEND_SWATCH) as i32,
            theme.px(LEGEND_CORNER) as i32,
        )
    }

    /// Lines 1.25 font sizes apart, as plotters lays out its series labels.
    fn step(theme: &Theme) -> f64 {
        theme.text(12).font.get_size() * 1.25
    }

    /// Draws the legend of `chart` in the strip under it (`below`, see [`Legend::fitted`]), else in
    /// `corner` of its plot.
    pub(crate) fn draw_on<DB: DrawingBackend>(
        &self,
        chart: &LineChart<'_, DB>,
        below: Option<DrawingArea<DB, Shift>>,
        corner: SeriesLabelPosition,
        theme: &Theme,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        match below {
            Some(strip) => self.draw(&strip, SeriesLabelPosition::UpperLeft, theme),
            None => self.draw(&chart.plotting_area().strip_coord_spec(), corner, theme),
        }
    }

    /// Draws the legend in `corner` of `area`.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        corner: SeriesLabelPosition,
        theme: &Theme,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        if self.lines.is_empty() {
            return Ok(());
        }
        let (margin, swatch, gap) = Legend::measures(theme);
        let (w, h) = self.size;
        let (aw, ah) = area.dim_in_pixel();
        let (x, y) = match corner {
            SeriesLabelPosition::LowerRight => (aw as i32 - gap - w, ah as i32 - gap - h),
            _ => (gap, gap),
        };
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            theme.background.mix(0.85).filled(),
        ))?;
        area.draw(&Rectangle::new([(x, y), (x + w, y + h)], theme.muted))?;
        let font = theme.text(12);
        for (k, (line, (text, (_, th)))) in self.lines.iter().zip(&self.texts).enumerate() {
            let top = y + margin + (Legend::step(theme) * k as f64).round() as i32;
            area.draw(&Text::new(text.as_str(), (x + margin + swatch, top), &font))?;
            let at = (x + margin, top + *th as i32 / 2);
            match line.key {
                Key::Line(style) => area.draw(&line_swatch(style, theme)(at))?,
                Key::Pattern(style, pattern) => {
                    area.draw(&pattern_swatch::<DB>(style, pattern, theme)(at))?
                }
                Key::Cross(style, size) => {
                    area.draw(&Cross::new((at.0 + size as i32, at.1), size, style))?
                }
                Key::Triangle(color, size) => area.draw(&TriangleMarker::new(
                    (at.0 + size as i32, at.1),
                    size,
                    color.filled(),
                ))?,
                Key::None => {}
            }
        }
        Ok(())
    }

    /// Where a line chart on `area` has its legend: over its plot, or, where there it would cover over
    /// half the plot's width (a phone's chart: the Steps legend hid the curves under it), in a strip of
    /// its own under the chart, if that takes at most two fifths of the chart's height.
    fn room<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, theme: &Theme) -> Room<DB> {
        let (w, h) = area.dim_in_pixel();
        let plot = w as i32 - theme.px(LINE_CHART_SIDES) as i32;
        let strip = self.size.1 + 2 * Legend::measures(theme).2;
        if self.lines.is_empty() || 2 * self.size.0 <= plot {
            return Room::Over;
        }
        let most = h as i32 * 2 / 5;
        if strip > most {
            return Room::TooTall((strip - most) as u32);
        }
        let (chart, below) = area.split_vertically(h as i32 - strip);
        Room::Under(chart, below)
    }
}

/// Where a line chart's legend goes (see [`Legend::room`]).
enum Room<DB: DrawingBackend> {
    Over,
    /// The chart's area, and the strip under it for the legend.
    Under(DrawingArea<DB, Shift>, DrawingArea<DB, Shift>),
    /// Under the chart, too tall by this many pixels.
    TooTall(u32),
}

/// A legend swatch drawn in `pattern` (pixels at scale 1) over the swatch's length.
fn pattern_swatch<DB: DrawingBackend>(
    style: ShapeStyle,
    pattern: &'static [u32],
    theme: &Theme,
) -> impl Fn((i32, i32)) -> DynElement<'static, DB, (i32, i32)> {
    let len = theme.px(14) as i32;
    let pattern = theme.px_pattern(pattern);
    move |(x, y)| {
        let pieces: Vec<PathElement<(i32, i32)>> = dashes(0.0, f64::from(len), 1.0, &pattern)
            .into_iter()
            .map(|(a, b)| PathElement::new(vec![(x + a as i32, y), (x + b as i32, y)], style))
            .collect();
        Swatch(pieces).into_dyn()
    }
}

/// Several paths drawn as one legend swatch.
struct Swatch(Vec<PathElement<(i32, i32)>>);

impl<'a> PointCollection<'a, (i32, i32)> for &'a Swatch {
    type Point = &'a (i32, i32);
    type IntoIter = Box<dyn Iterator<Item = &'a (i32, i32)> + 'a>;
    fn point_iter(self) -> Self::IntoIter {
        Box::new(self.0.iter().flat_map(|p| p.point_iter()))
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Swatch {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        size: (u32, u32),
    ) -> std::result::Result<(), DrawingErrorKind<DB::ErrorType>> {
        for path in &self.0 {
            let n = path.point_iter().len();
            path.draw((&mut points).take(n), backend, size)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::distinct_parts;
    use crate::test_backend::drawn_by;

    #[test]
    fn a_legend_wider_than_its_chart_keeps_each_runs_own_words_and_figures() {
        let line = |name: &str, keep, peak: &str| LegendLine {
            name: name.to_string(),
            keep,
            figures: format!(" (peak {peak})"),
            key: Key::None,
        };
        let names = [
            "kk_memory_ctx128_forward.pickle",
            "kk_memory_ctx128_fullstep.pickle",
            "magma",
        ];
        let keep = distinct_parts(&names);
        let lines = vec![
            line(names[0], keep[0], "16.4 GiB"),
            line(names[1], keep[1], "51.0 GiB"),
            line(names[2], keep[2], "13.0 GiB"),
            LegendLine::plain("… and 3 more (colours as in the table)".into(), Key::None),
        ];
        // A phone's chart, 300 px: the two long names are cut to fit, the short one stays whole.
        let drawn = drawn_by((300, 200), |area| {
            let legend = Legend::new(area, lines, &Theme::light()).unwrap();
            (legend.draw(area, SeriesLabelPosition::UpperLeft, &Theme::light())).unwrap()
        });
        assert_eq!(drawn.texts.len(), 4);
        for (text, (x, _)) in &drawn.texts {
            assert!(x + text.chars().count() as i32 * 6 <= 300, "{text} at {x}");
        }
        let texts: Vec<&str> = drawn.texts.iter().map(|t| t.0.as_str()).collect();
        assert!(texts[0].contains("…forward") && texts[0].ends_with("(peak 16.4 GiB)"));
        assert!(
            texts[1].contains("…fullstep") && texts[1].ends_with("(peak 51.0 GiB)"),
            "{texts:?}"
        );
        assert_eq!(texts[2], "magma (peak 13.0 GiB)");
        assert_eq!(texts[3], "… and 3 more (colours as in the table)");
    }
}

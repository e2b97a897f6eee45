//! The report's five PNG charts: `memograph-charts` drawn with plotters' bitmap backend. Text uses DejaVu
//! Sans compiled into the binary, so a report looks the same on every machine (no system font lookup).

use std::path::Path;

use memograph_charts::{
    compare_page, register_embedded_fonts, report_page, step_chart, StepChartOptions, Theme, CHARTS,
};
use memograph_snapshot::analysis::compare::Digest;
use memograph_snapshot::analysis::report::DeviceReport;
use memograph_snapshot::steps::StepRun;
use plotters::prelude::*;

pub use memograph_charts::CHARTS as FILES;

const SIZE: (u32, u32) = (1400, 800);

/// Why a chart could not be written to `path`: the file system's reason when the file cannot be
/// created (plotters' own error names it inside a chain of its types), else plotters'.
fn failure(path: &Path, e: impl std::fmt::Display) -> String {
    let existed = path.exists();
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    match created {
        Err(io) => crate::load::write_failure(path, &io),
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            format!("{}: cannot draw the chart: {e}", path.display())
        }
    }
}

/// `-o`'s chart file: drawn as PNG, so named so.
pub fn png_path(v: &str) -> Result<std::path::PathBuf, String> {
    if Path::new(v)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
    {
        Ok(v.into())
    } else {
        Err(
            "the chart is drawn as PNG: name it OUT.png (the page's SVG button exports it as SVG)"
                .into(),
        )
    }
}

/// Draws the five charts of `r` into `dir`.
pub fn draw_all(r: &DeviceReport, name: &str, dir: &Path) -> Result<(), String> {
    register_embedded_fonts();
    for (which, (file, _)) in CHARTS.iter().enumerate() {
        let path = dir.join(file);
        let drawn = (|| -> memograph_charts::Result<()> {
            let root = BitMapBackend::new(&path, SIZE).into_drawing_area();
            report_page(&root, which, name, r, &Theme::light())?;
            root.present()?;
            Ok(())
        })();
        drawn.map_err(|e| failure(&path, e))?;
    }
    Ok(())
}

/// `compare.png`: the overlaid live curves and the peaks of several runs.
pub fn draw_compare(runs: &[&Digest], path: &Path) -> Result<(), String> {
    register_embedded_fonts();
    let drawn = (|| -> memograph_charts::Result<()> {
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        compare_page(&root, runs, &Theme::light())?;
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|e| failure(path, e))
}

/// The step chart of `runs` (the page's), into `path`.
pub fn draw_steps(
    runs: &[&StepRun],
    reserved: bool,
    theoretical: bool,
    path: &Path,
) -> Result<(), String> {
    register_embedded_fonts();
    let drawn = (|| -> memograph_charts::Result<()> {
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        let theme = Theme::light();
        root.fill(&theme.background)?;
        let options = StepChartOptions {
            reserved,
            theoretical,
        };
        step_chart(&root, "Memory per step", runs, options, &[], None, &theme)?;
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|e| failure(path, e))
}

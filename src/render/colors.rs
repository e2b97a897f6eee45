//! Colours: one per allocation, stable across views (a band, its block in the state map and its swatch in
//! the stack panel share it), and the theme's neutrals.

/// Tableau-like palette, readable on dark and light backgrounds.
pub const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#86bcb6", "#d37295",
];

/// The colour of allocation `index`.
pub fn allocation(index: u32) -> &'static str {
    PALETTE[(index as usize).wrapping_mul(7) % PALETTE.len()]
}

/// The colour of category `index` of `count`: the engine's, so the page and the report charts agree.
pub fn category(index: u16, count: usize) -> &'static str {
    memograph_snapshot::analysis::categories::color(index as usize, count)
}

pub struct Theme {
    pub background: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    pub grid: &'static str,
    pub summarized: &'static str,
    pub peak: &'static str,
    pub highlight: &'static str,
    pub free: &'static str,
    pub annotation: &'static str,
}

pub fn theme(dark: bool) -> Theme {
    use memograph_charts::Neutrals;
    if dark {
        Theme {
            background: Neutrals::DARK.background,
            text: Neutrals::DARK.text,
            muted: Neutrals::DARK.muted,
            grid: "#2a2e36",
            summarized: "#5c6370",
            peak: "#ff5555",
            highlight: "#ffffff",
            free: "#2b3038",
            annotation: "rgba(130,170,255,0.18)",
        }
    } else {
        Theme {
            background: Neutrals::LIGHT.background,
            text: Neutrals::LIGHT.text,
            muted: Neutrals::LIGHT.muted,
            grid: "#e6e8eb",
            summarized: "#a4abb5",
            peak: "#d11a2a",
            highlight: "#000000",
            free: "#eceef1",
            annotation: "rgba(40,90,200,0.12)",
        }
    }
}

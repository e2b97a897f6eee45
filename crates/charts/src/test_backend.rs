//! A drawing backend that records what a chart drew (its rectangles, lines, paths, dots and texts),
//! for tests that assert on a chart's layout without rasterising it.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::register_embedded_fonts;

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

/// What a chart drew: its filled rectangles and its texts (a backend that only records).
#[derive(Default)]
pub(crate) struct Drawn {
    pub(crate) rects: Vec<((i32, i32), (i32, i32))>,
    /// Straight lines, with their colour.
    pub(crate) lines: Vec<(BackendCoord, BackendCoord, (u8, u8, u8))>,
    pub(crate) texts: Vec<(String, (i32, i32))>,
    pub(crate) dots: Vec<Dot>,
    /// Paths of any width (a one-pixel one is in `lines` too), with their colour.
    pub(crate) paths: Vec<(Vec<BackendCoord>, (u8, u8, u8))>,
}

/// A filled circle drawn: its centre and colour.
pub(crate) type Dot = ((i32, i32), (u8, u8, u8));

/// Records what is drawn on a canvas of the given size.
pub(crate) struct Recorder(std::rc::Rc<std::cell::RefCell<Drawn>>, (u32, u32));

impl DrawingBackend for Recorder {
    type ErrorType = std::io::Error;
    fn get_size(&self) -> (u32, u32) {
        self.1
    }
    fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_pixel(
        &mut self,
        _: BackendCoord,
        _: BackendColor,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        self.0
            .borrow_mut()
            .lines
            .push((from, to, style.color().rgb));
        Ok(())
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        // As the trait's own: lines, or a wide path's polygon in scan lines.
        let path: Vec<BackendCoord> = path.into_iter().collect();
        if style.stroke_width() == 1 {
            for pair in path.windows(2) {
                self.draw_line(pair[0], pair[1], style)?;
            }
        } else {
            let outline = plotters_backend::rasterizer::polygonize(&path, style.stroke_width());
            self.fill_polygon(outline, &style.color())?;
        }
        self.0.borrow_mut().paths.push((path, style.color().rgb));
        Ok(())
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        _: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        if fill {
            self.0.borrow_mut().rects.push((upper_left, bottom_right));
        }
        Ok(())
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        _: u32,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        if fill {
            self.0.borrow_mut().dots.push((center, style.color().rgb));
        }
        Ok(())
    }
    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        _: &T,
        at: BackendCoord,
    ) -> std::result::Result<(), DrawingErrorKind<std::io::Error>> {
        self.0.borrow_mut().texts.push((text.to_string(), at));
        Ok(())
    }
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        _: &T,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<std::io::Error>> {
        Ok((text.chars().count() as u32 * 6, 11))
    }
}

/// What `draw` draws on a canvas of `size` (with the CLI's fonts: legends are laid out with them).
pub(crate) fn drawn_by(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<Recorder, Shift>),
) -> Drawn {
    register_embedded_fonts();
    let drawn = std::rc::Rc::new(std::cell::RefCell::new(Drawn::default()));
    draw(&Recorder(drawn.clone(), size).into_drawing_area());
    std::rc::Rc::try_unwrap(drawn).ok().unwrap().into_inner()
}

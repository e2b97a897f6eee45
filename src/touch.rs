//! Fingers on a canvas and the gesture they make: one finger drags (pans), two pinch (zoom, and
//! pan with their midpoint), one lifted where it went down taps. Pure state fed the views' touch
//! pointer events; what a gesture does to a view is the view's (see `Scale::pinched`).

/// How far (pixels) a finger may move and still tap; past it, it drags.
const TAP_SLOP: f64 = 8.0;

/// What the fingers on a canvas have done since the gesture began: moved by `dx`, `dy` pixels (one
/// finger), or from pixels `from` to `to` (two: their x).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gesture {
    Pan { dx: f64, dy: f64 },
    Pinch { from: (f64, f64), to: (f64, f64) },
}

/// How far apart (pixels) two fingers must be for their pinch to zoom: closer (one over the other),
/// it only moves.
pub const PINCH_MIN_APART: f64 = 24.0;

/// Where the range `(a, b)` of a linear axis, drawn across the plot from pixel `left` over `width`,
/// goes when two fingers move from pixels `from` to `to` (their x): zoomed by the ratio of how far
/// apart they are and moved with their midpoint, so that what was under each finger is under it
/// still. Its new start and span, for the caller to keep within its axis.
pub fn pinched_range(
    (a, b): (f64, f64),
    (left, width): (f64, f64),
    from: (f64, f64),
    to: (f64, f64),
) -> (f64, f64) {
    let apart = |(p, q): (f64, f64)| (q - p).abs();
    let mid = |(p, q): (f64, f64)| (p + q) / 2.0;
    let factor = if apart(from).min(apart(to)) < PINCH_MIN_APART {
        1.0
    } else {
        apart(from) / apart(to)
    };
    let at = |px: f64| (px - left) / width;
    let under = a + (b - a) * at(mid(from));
    let span = (b - a) * factor;
    (under - span * at(mid(to)), span)
}

#[derive(Debug, Clone, Copy)]
struct Finger {
    id: i32,
    /// Where it was when the gesture began, and where it is.
    from: (f64, f64),
    at: (f64, f64),
}

/// The fingers down on a canvas and the view (`V`) their gesture began from. A finger put down or
/// lifted begins the gesture anew from where every finger is and the view then, so that a pinch
/// that loses a finger goes on as a drag without a jump.
#[derive(Debug)]
pub struct Touches<V> {
    fingers: Vec<Finger>,
    start: Option<V>,
    /// A finger went past the tap's slop since the first went down.
    moved: bool,
    /// Two or more fingers were down since the first went down: lifting them is no tap.
    several: bool,
}

impl<V> Default for Touches<V> {
    fn default() -> Self {
        Touches {
            fingers: Vec::new(),
            start: None,
            moved: false,
            several: false,
        }
    }
}

impl<V: Copy> Touches<V> {
    /// Finger `id` down at `at`, the view being `view`.
    pub fn down(&mut self, id: i32, at: (f64, f64), view: V) {
        self.fingers.retain(|f| f.id != id);
        if self.fingers.is_empty() {
            self.moved = false;
            self.several = false;
        }
        self.fingers.push(Finger { id, from: at, at });
        self.several |= self.fingers.len() > 1;
        self.restart(view);
    }

    /// Finger `id` moved to `at`: the gesture since it began and the view it began from, once a
    /// finger has gone past the tap's slop (a tap does not move the view).
    pub fn moved(&mut self, id: i32, at: (f64, f64)) -> Option<(V, Gesture)> {
        let finger = self.fingers.iter_mut().find(|f| f.id == id)?;
        finger.at = at;
        let (dx, dy) = (at.0 - finger.from.0, at.1 - finger.from.1);
        self.moved |= dx.hypot(dy) > TAP_SLOP;
        if !self.moved {
            return None;
        }
        let gesture = match self.fingers.as_slice() {
            [f] => Gesture::Pan {
                dx: f.at.0 - f.from.0,
                dy: f.at.1 - f.from.1,
            },
            [a, b, ..] => Gesture::Pinch {
                from: (a.from.0, b.from.0),
                to: (a.at.0, b.at.0),
            },
            [] => return None,
        };
        Some((self.start?, gesture))
    }

    /// Finger `id` lifted, the view being `view`: where, if it tapped (the only finger since the
    /// first went down, lifted within the slop of where it went down).
    pub fn up(&mut self, id: i32, view: V) -> Option<(f64, f64)> {
        let k = self.fingers.iter().position(|f| f.id == id)?;
        let finger = self.fingers.remove(k);
        if !self.fingers.is_empty() {
            self.restart(view);
            return None;
        }
        self.start = None;
        (!self.moved && !self.several).then_some(finger.at)
    }

    /// The browser took the touch (a system gesture): no gesture, no tap.
    pub fn cancel(&mut self) {
        *self = Touches::default();
    }

    fn restart(&mut self, view: V) {
        for f in &mut self.fingers {
            f.from = f.at;
        }
        self.start = Some(view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finger_lifted_where_it_went_down_taps() {
        let mut t = Touches::default();
        t.down(1, (100.0, 50.0), 0);
        assert_eq!(t.moved(1, (104.0, 53.0)), None);
        assert_eq!(t.up(1, 0), Some((104.0, 53.0)));
        // Lifted far from where it went down: a drag, no tap.
        t.down(2, (100.0, 50.0), 0);
        t.moved(2, (160.0, 50.0));
        assert_eq!(t.up(2, 0), None);
        // An unknown finger (its down went elsewhere) is nothing.
        assert_eq!(t.moved(9, (1.0, 1.0)), None);
        assert_eq!(t.up(9, 0), None);
    }

    #[test]
    fn one_finger_pans_from_the_view_it_began_on() {
        let mut t = Touches::default();
        t.down(1, (100.0, 50.0), 7);
        assert_eq!(
            t.moved(1, (130.0, 60.0)),
            Some((7, Gesture::Pan { dx: 30.0, dy: 10.0 }))
        );
        // Back within the slop it still pans: a drag never turns into a tap.
        assert_eq!(
            t.moved(1, (102.0, 50.0)),
            Some((7, Gesture::Pan { dx: 2.0, dy: 0.0 }))
        );
    }

    #[test]
    fn two_fingers_pinch_and_losing_one_goes_on_as_a_drag() {
        let mut t = Touches::default();
        t.down(1, (100.0, 50.0), 1);
        t.down(2, (200.0, 50.0), 2);
        let pinch = t.moved(2, (300.0, 50.0));
        assert_eq!(
            pinch,
            Some((
                2,
                Gesture::Pinch {
                    from: (100.0, 200.0),
                    to: (100.0, 300.0)
                }
            ))
        );
        // Finger 2 lifted with the view at 3: finger 1 drags on from where it is, from view 3.
        assert_eq!(t.up(2, 3), None);
        assert_eq!(
            t.moved(1, (90.0, 50.0)),
            Some((3, Gesture::Pan { dx: -10.0, dy: 0.0 }))
        );
        // Two fingers were down: lifting the last is no tap.
        assert_eq!(t.up(1, 3), None);
        // A cancelled touch leaves nothing behind.
        t.down(4, (10.0, 10.0), 5);
        t.cancel();
        assert_eq!(t.moved(4, (50.0, 10.0)), None);
    }
}

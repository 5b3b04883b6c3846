//! Virtual detectors as the user edits them: a named disc, annulus or rectangle in detector
//! pixels (row, col; pixel centres at integer indices, CONVENTIONS.md → 4D-STEM), converted to
//! the STEM crate's [`VirtualDetector`] for every sum. Also the BF/ABF/ADF/DF presets (the crate's
//! [`VirtualDetector::standard`] radii) and the geometry of dragging, resizing and nudging.

use scatterlab_stem::reduce::{Annulus, DetectorShape, Probe, VirtualDetector};

/// ADF radii as multiples of the BF radius: the STEM reduction's default (`ReduceOptions::adf`
/// = `[1.2 R, 2.5 R]` in `scatterlab_stem::reduce::pipeline`).
pub const ADF_DEFAULT: [f64; 2] = [1.2, 2.5];

/// The smallest radius or annulus width a drag leaves, in detector pixels (keeps shapes visible).
const MIN_SIZE: f64 = 0.5;

/// A detector's geometry in detector pixels. As JSON (host commands, [`crate::script`]) it is
/// tagged by `kind` (`"disc"`, `"annulus"`, `"rect"`), an annulus's `outer` of `null` being ∞.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum Shape {
    /// The closed disc `d ≤ radius` around `center` (row, col).
    Disc {
        /// Centre (row, col), pixels.
        center: [f64; 2],
        /// Radius, pixels.
        radius: f64,
    },
    /// The closed annulus `inner ≤ d ≤ outer`; `outer` may be infinite (dark field).
    Annulus {
        /// Centre (row, col), pixels.
        center: [f64; 2],
        /// Inner radius, pixels.
        inner: f64,
        /// Outer radius, pixels (∞ reaches the detector's edge).
        #[serde(default = "infinite", deserialize_with = "null_is_infinite")]
        outer: f64,
    },
    /// Detector rows `rows[0]..rows[1]` and columns `cols[0]..cols[1]` (half-open).
    Rect {
        /// First and one-past-last row.
        rows: [usize; 2],
        /// First and one-past-last column.
        cols: [usize; 2],
    },
}

fn infinite() -> f64 {
    f64::INFINITY
}

/// JSON has no ∞: an annulus's `outer` of `null` (or left out) is the detector's edge.
fn null_is_infinite<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(<Option<f64> as serde::Deserialize>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// The standard detectors the preset buttons set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Bright field: the disc `[0, R]`.
    Bf,
    /// Annular bright field: `[R/2, R]`.
    Abf,
    /// Annular dark field: `[1.2 R, 2.5 R]`.
    Adf,
    /// Dark field: `[R, ∞)`.
    Df,
}

impl Preset {
    /// Every preset, in button order.
    pub const ALL: [Preset; 4] = [Preset::Bf, Preset::Abf, Preset::Adf, Preset::Df];

    /// The button's text (and the detector's name).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Bf => "BF",
            Preset::Abf => "ABF",
            Preset::Adf => "ADF",
            Preset::Df => "DF",
        }
    }
}

/// What part of a detector a drag holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handle {
    /// The whole shape moves.
    Move,
    /// The inner circle of an annulus.
    Inner,
    /// The outer circle of a disc or annulus.
    Outer,
    /// Rectangle edges: (top, bottom, left, right) held.
    Edges(bool, bool, bool, bool),
}

/// A named virtual detector on display.
#[derive(Clone, Debug, PartialEq)]
pub struct Detector {
    /// Its name (shown in the list, used in errors).
    pub name: String,
    /// Its geometry.
    pub shape: Shape,
}

impl Detector {
    /// The preset detector for `probe` (centre and BF radius).
    pub fn preset(preset: Preset, probe: &Probe) -> Self {
        let r = probe.radius;
        let adf = [ADF_DEFAULT[0] * r, ADF_DEFAULT[1] * r];
        // The crate's standard set, in its order: bf, abf, adf, df.
        let standard = VirtualDetector::standard(probe.center, r, adf);
        let index = Preset::ALL.iter().position(|&p| p == preset).unwrap_or(0);
        let shape = match standard.get(index).map(|d| &d.shape) {
            Some(DetectorShape::Annulus(a)) if a.inner == 0.0 => Shape::Disc { center: a.center, radius: a.outer },
            Some(DetectorShape::Annulus(a)) => Shape::Annulus { center: a.center, inner: a.inner, outer: a.outer },
            _ => Shape::Disc { center: probe.center, radius: r },
        };
        Detector { name: preset.name().to_owned(), shape }
    }

    /// The detector as the STEM crate sums it on a `det` detector (a rectangle clipped to it).
    pub fn to_virtual(&self, det: [usize; 2]) -> VirtualDetector {
        let shape = match self.shape {
            Shape::Disc { center, radius } => DetectorShape::Annulus(Annulus { center, inner: 0.0, outer: radius }),
            Shape::Annulus { center, inner, outer } => DetectorShape::Annulus(Annulus { center, inner, outer }),
            Shape::Rect { rows, cols } => DetectorShape::Rect { rows: rows[0].min(det[0])..rows[1].min(det[0]), cols: cols[0].min(det[1])..cols[1].min(det[1]) },
        };
        VirtualDetector { name: self.name.clone(), shape }
    }

    /// Moves the detector by `delta` (rows, cols) pixels; rectangles move by whole pixels and
    /// stay on the `det` detector.
    pub fn nudge(&mut self, delta: [f64; 2], det: [usize; 2]) {
        match &mut self.shape {
            Shape::Disc { center, .. } | Shape::Annulus { center, .. } => {
                center[0] += delta[0];
                center[1] += delta[1];
            }
            Shape::Rect { rows, cols } => {
                *rows = shift_range(*rows, delta[0], det[0]);
                *cols = shift_range(*cols, delta[1], det[1]);
            }
        }
    }

    /// The handle at detector position `p` (row, col) within `tol` pixels of an edge, else
    /// `Move` when `p` is inside, else `None`.
    pub fn hit(&self, p: [f64; 2], tol: f64, edges_only: bool) -> Option<Handle> {
        match self.shape {
            Shape::Disc { center, radius } => {
                let d = dist(p, center);
                if (d - radius).abs() <= tol {
                    Some(Handle::Outer)
                } else {
                    (!edges_only && d < radius).then_some(Handle::Move)
                }
            }
            Shape::Annulus { center, inner, outer } => {
                let d = dist(p, center);
                if outer.is_finite() && (d - outer).abs() <= tol {
                    Some(Handle::Outer)
                } else if (d - inner).abs() <= tol {
                    Some(Handle::Inner)
                } else {
                    (!edges_only && d > inner && d < outer).then_some(Handle::Move)
                }
            }
            Shape::Rect { rows, cols } => {
                // Pixel centres are integers: the rectangle's edges lie half a pixel out.
                let (top, bottom) = (rows[0] as f64 - 0.5, rows[1] as f64 - 0.5);
                let (left, right) = (cols[0] as f64 - 0.5, cols[1] as f64 - 0.5);
                let inside_r = p[0] > top - tol && p[0] < bottom + tol;
                let inside_c = p[1] > left - tol && p[1] < right + tol;
                if !(inside_r && inside_c) {
                    return None;
                }
                let h = Handle::Edges((p[0] - top).abs() <= tol, (p[0] - bottom).abs() <= tol, (p[1] - left).abs() <= tol, (p[1] - right).abs() <= tol);
                match h {
                    Handle::Edges(false, false, false, false) => (!edges_only).then_some(Handle::Move),
                    h => Some(h),
                }
            }
        }
    }

    /// The shape `start` dragged by its `handle` from `from` to `to` (detector pixels).
    pub fn dragged(start: &Shape, handle: Handle, from: [f64; 2], to: [f64; 2], det: [usize; 2]) -> Shape {
        let delta = [to[0] - from[0], to[1] - from[1]];
        let mut shape = start.clone();
        match (&mut shape, handle) {
            (Shape::Disc { center, .. } | Shape::Annulus { center, .. }, Handle::Move) => {
                center[0] += delta[0];
                center[1] += delta[1];
            }
            (Shape::Disc { center, radius }, _) => *radius = dist(to, *center).max(MIN_SIZE),
            (Shape::Annulus { center, inner, outer }, Handle::Outer) => *outer = dist(to, *center).max(*inner + MIN_SIZE),
            (Shape::Annulus { center, inner, outer }, _) => *inner = dist(to, *center).min(*outer - MIN_SIZE).max(0.0),
            (Shape::Rect { rows, cols }, Handle::Move) => {
                *rows = shift_range(*rows, delta[0], det[0]);
                *cols = shift_range(*cols, delta[1], det[1]);
            }
            (Shape::Rect { rows, cols }, Handle::Edges(top, bottom, left, right)) => {
                // The edge goes to the pixel boundary nearest the pointer.
                let edge = |v: f64, n: usize| (v + 0.5).round().clamp(0.0, n as f64) as usize;
                if top {
                    rows[0] = edge(to[0], det[0]).min(rows[1].saturating_sub(1));
                }
                if bottom {
                    rows[1] = edge(to[0], det[0]).max(rows[0] + 1);
                }
                if left {
                    cols[0] = edge(to[1], det[1]).min(cols[1].saturating_sub(1));
                }
                if right {
                    cols[1] = edge(to[1], det[1]).max(cols[0] + 1);
                }
            }
            (Shape::Rect { .. }, _) => {}
        }
        shape
    }
}

/// Euclidean distance of two (row, col) points.
fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// `range` moved by `delta` rounded to whole pixels, kept within `0..n`.
fn shift_range(range: [usize; 2], delta: f64, n: usize) -> [usize; 2] {
    let len = range[1].saturating_sub(range[0]).min(n);
    let start = (range[0] as f64 + delta.round()).clamp(0.0, n.saturating_sub(len) as f64) as usize;
    [start, start + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBE: Probe = Probe { center: [24.0, 23.0], radius: 8.0 };

    #[test]
    fn presets_are_the_crates_standard_detectors() {
        let bf = Detector::preset(Preset::Bf, &PROBE).to_virtual([48, 48]);
        let standard = VirtualDetector::standard(PROBE.center, 8.0, [9.6, 20.0]);
        assert_eq!(bf.shape, standard[0].shape);
        for (i, p) in Preset::ALL.iter().enumerate().skip(1) {
            assert_eq!(Detector::preset(*p, &PROBE).to_virtual([48, 48]).shape, standard[i].shape, "{p:?}");
        }
    }

    #[test]
    fn drags_move_and_resize() {
        let disc = Detector::preset(Preset::Bf, &PROBE);
        assert_eq!(disc.hit([24.0, 31.2], 0.5, true), Some(Handle::Outer));
        assert_eq!(disc.hit([25.0, 23.0], 0.5, false), Some(Handle::Move));
        let moved = Detector::dragged(&disc.shape, Handle::Move, [24.0, 23.0], [26.0, 20.0], [48, 48]);
        assert_eq!(moved, Shape::Disc { center: [26.0, 20.0], radius: 8.0 });
        let grown = Detector::dragged(&disc.shape, Handle::Outer, [24.0, 31.0], [24.0, 35.0], [48, 48]);
        assert_eq!(grown, Shape::Disc { center: [24.0, 23.0], radius: 12.0 });
        let rect = Shape::Rect { rows: [2, 6], cols: [3, 9] };
        let r = Detector::dragged(&rect, Handle::Edges(false, true, false, false), [5.5, 5.0], [9.4, 5.0], [48, 48]);
        assert_eq!(r, Shape::Rect { rows: [2, 10], cols: [3, 9] });
        let mut d = Detector { name: "r".into(), shape: rect };
        d.nudge([-5.0, 100.0], [48, 48]);
        assert_eq!(d.shape, Shape::Rect { rows: [0, 4], cols: [42, 48] });
    }
}

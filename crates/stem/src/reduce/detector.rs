//! Virtual detectors: which detector pixels a detector sums, as row runs.
//!
//! Every shape becomes a list of `(row, col_start..col_end)` runs, so a frame's detector sum is
//! one prefix-sum lookup per run (an annulus meets a row in at most two runs) and any shape — an
//! annulus, a rectangle, an arbitrary user mask — goes through the same fused pass.

use std::ops::Range;

use super::ReduceError;

/// A closed annulus `inner ≤ d ≤ outer` around `center` (row, col), in detector pixels;
/// `outer = ∞` for a dark-field detector reaching the detector's edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Annulus {
    /// Beam centre (row, col), pixels.
    pub center: [f64; 2],
    /// Inner radius, pixels (0 for a disc).
    pub inner: f64,
    /// Outer radius, pixels (may be infinite).
    pub outer: f64,
}

/// The pixels a virtual detector covers.
#[derive(Clone, Debug, PartialEq)]
pub enum DetectorShape {
    /// A closed annulus (a disc when `inner = 0`).
    Annulus(Annulus),
    /// A half-open rectangle of detector rows and columns.
    Rect {
        /// Rows `start..end`.
        rows: Range<usize>,
        /// Columns `start..end`.
        cols: Range<usize>,
    },
    /// A user mask over the whole detector, row-major (`true` = summed).
    Mask(Vec<bool>),
}

/// A named virtual detector.
#[derive(Clone, Debug, PartialEq)]
pub struct VirtualDetector {
    /// Its name (`"bf"`, `"adf"`, …), used in errors and outputs.
    pub name: String,
    /// Its shape.
    pub shape: DetectorShape,
}

/// A detector as row runs: `(row, cols)` with `cols` half-open, sorted by row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    /// The runs.
    pub runs: Vec<(usize, Range<usize>)>,
}

impl Runs {
    /// Pixels covered.
    pub fn n_pixels(&self) -> usize {
        self.runs.iter().map(|(_, c)| c.len()).sum()
    }

    /// The pixels of a `det` detector these runs do not cover, as runs.
    pub fn complement(&self, det: [usize; 2]) -> Runs {
        let mut by_row: Vec<Vec<Range<usize>>> = vec![Vec::new(); det[0]];
        for (r, cols) in &self.runs {
            if let Some(row) = by_row.get_mut(*r) {
                row.push(cols.start.min(det[1])..cols.end.min(det[1]));
            }
        }
        let mut runs = Vec::new();
        for (r, mut row) in by_row.into_iter().enumerate() {
            row.sort_by_key(|c| c.start);
            let mut next = 0;
            for cols in row {
                if cols.start > next {
                    runs.push((r, next..cols.start));
                }
                next = next.max(cols.end);
            }
            if next < det[1] {
                runs.push((r, next..det[1]));
            }
        }
        Runs { runs }
    }

    /// Row-major mask over a `det` detector.
    pub fn to_mask(&self, det: [usize; 2]) -> Vec<bool> {
        let mut m = vec![false; det[0] * det[1]];
        for (r, cols) in &self.runs {
            for c in cols.clone() {
                if let Some(v) = m.get_mut(r * det[1] + c) {
                    *v = true;
                }
            }
        }
        m
    }
}

impl VirtualDetector {
    /// An annulus detector named `name`.
    pub fn annulus(name: &str, center: [f64; 2], inner: f64, outer: f64) -> Self {
        VirtualDetector { name: name.to_owned(), shape: DetectorShape::Annulus(Annulus { center, inner, outer }) }
    }

    /// The four standard detectors for BF radius `r_bf` and ADF radii `adf`:
    /// BF `[0, R]`, ABF `[R/2, R]`, ADF `[adf₀, adf₁]`, DF `[R, ∞)`.
    pub fn standard(center: [f64; 2], r_bf: f64, adf: [f64; 2]) -> Vec<Self> {
        vec![
            Self::annulus("bf", center, 0.0, r_bf),
            Self::annulus("abf", center, 0.5 * r_bf, r_bf),
            Self::annulus("adf", center, adf[0], adf[1]),
            Self::annulus("df", center, r_bf, f64::INFINITY),
        ]
    }

    /// The detector's pixels on a `det` = (rows, cols) detector as row runs.
    pub fn runs(&self, det: [usize; 2]) -> Result<Runs, ReduceError> {
        let what = || format!("virtual detector '{}'", self.name);
        let [rows, cols] = det;
        let mut runs = Vec::new();
        match &self.shape {
            DetectorShape::Annulus(a) => {
                let ok = a.center.iter().all(|v| v.is_finite()) && a.inner.is_finite() && a.inner >= 0.0 && !a.outer.is_nan() && a.outer >= a.inner;
                if !ok {
                    return Err(ReduceError::new(what(), format!("needs a finite centre and 0 ≤ inner ≤ outer (got centre {:?}, radii {} … {})", a.center, a.inner, a.outer)));
                }
                let (i2, o2) = (a.inner * a.inner, a.outer * a.outer);
                for r in 0..rows {
                    let dr = r as f64 - a.center[0];
                    let inside = (0..cols).map(|c| {
                        let dc = c as f64 - a.center[1];
                        let d2 = dr * dr + dc * dc;
                        d2 >= i2 && d2 <= o2
                    });
                    push_runs(r, inside, &mut runs);
                }
            }
            DetectorShape::Rect { rows: rr, cols: cc } => {
                if rr.start >= rr.end || cc.start >= cc.end || rr.end > rows || cc.end > cols {
                    return Err(ReduceError::new(what(), format!("rectangle rows {rr:?} cols {cc:?} is empty or outside the {rows}×{cols} detector")));
                }
                runs.extend(rr.clone().map(|r| (r, cc.clone())));
            }
            DetectorShape::Mask(m) => {
                if m.len() != rows * cols {
                    return Err(ReduceError::new(what(), format!("mask has {} pixels, the detector {rows}×{cols}", m.len())));
                }
                for (r, row) in m.chunks_exact(cols.max(1)).enumerate() {
                    push_runs(r, row.iter().copied(), &mut runs);
                }
            }
        }
        if runs.is_empty() {
            return Err(ReduceError::new(what(), "covers no detector pixel"));
        }
        Ok(Runs { runs })
    }
}

/// Appends the runs of `true` in one detector row.
fn push_runs(row: usize, inside: impl Iterator<Item = bool>, runs: &mut Vec<(usize, Range<usize>)>) {
    let mut start = None;
    let mut end = 0;
    for (c, v) in inside.enumerate() {
        end = c + 1;
        match (v, start) {
            (true, None) => start = Some(c),
            (false, Some(s)) => {
                runs.push((row, s..c));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((row, s..end));
    }
}

/// Converts a scattering angle in mrad to detector pixels, given the detector sampling in
/// mrad per pixel; the sampling is often only known as convergence semi-angle / BF radius.
pub fn mrad_to_px(mrad: f64, sampling_mrad_per_px: Option<f64>, what: &str) -> Result<f64, ReduceError> {
    match sampling_mrad_per_px {
        Some(s) if s.is_finite() && s > 0.0 => Ok(mrad / s),
        _ => Err(ReduceError::new(what, "a radius in mrad needs the detector sampling (mrad/px): give it, or the convergence semi-angle and the BF radius in pixels")),
    }
}

//! A tilt series of static patterns: the same zone-axis case seen at a sweep of tilts about one lab
//! axis, each tilt solved as its own static case (its own beam set), gathered onto the union of
//! the tilts' beams. What the npm package's `blochRocking` and the app's rocking view report.
//!
//! Why a union with zeros rather than per-tilt lists: a reflection's rocking curve (intensity
//! against tilt) is one row of a dense `[tilt][thickness][beam]` array, and a beam that is not in
//! a tilt's set (outside its |Sg| window) is not excited there — 0 is the value the fixture's
//! rocking cases use for "absent at tilt i" too (`README.md`: reported I = Σ_i I_i, 0 where
//! absent). Summing the series over tilts ([`TiltSeries::summed`]) gives that integrated curve.
//!
//! ```
//! use scatterlab_bloch::tilt_series::{TiltAxis, TiltSeries, TiltSweep};
//! let sweep = TiltSweep::linspace(TiltAxis::X, -1.0, 1.0, 3).unwrap();
//! assert_eq!(sweep.tilt([0.5, 0.0], 0), Some([-0.5, 0.0]));
//! let mut series = TiltSeries::new(1);
//! series.push(-1.0, &[[0, 0, 0], [1, 0, 0]], &[vec![0.9, 0.1]]).unwrap();
//! series.push(0.0, &[[0, 0, 0], [0, 1, 0]], &[vec![0.8, 0.2]]).unwrap();
//! assert_eq!(series.hkl(), vec![[0, 0, 0], [0, 1, 0], [1, 0, 0]]);
//! assert_eq!(series.intensities(), vec![0.9, 0.0, 0.1, 0.8, 0.2, 0.0]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use scatterlab_core::InputError;

use crate::beams::Hkl;
use crate::BlochError;

/// The lab axis a sweep tilts about (the zone case's `tilt_deg` = [about x, about y]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TiltAxis {
    /// About lab x (the zone case's first tilt angle).
    X,
    /// About lab y (the second).
    Y,
}

/// Tilt offsets (degrees) about one axis, added to a case's base tilt one at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct TiltSweep {
    /// The axis.
    pub axis: TiltAxis,
    /// The offsets, degrees, in sweep order.
    pub angles_deg: Vec<f64>,
}

impl TiltSweep {
    /// `n` offsets evenly from `from_deg` to `to_deg` (both included; `n = 1` is `from_deg`).
    /// Non-finite ends or `n = 0` are errors naming `tilts`.
    pub fn linspace(axis: TiltAxis, from_deg: f64, to_deg: f64, n: usize) -> Result<Self, InputError> {
        if !(from_deg.is_finite() && to_deg.is_finite()) {
            return Err(InputError::new("tilts", format!("the sweep's ends must be finite angles in degrees (got {from_deg} to {to_deg})")));
        }
        if n == 0 {
            return Err(InputError::new("tilts", "a sweep needs at least one tilt"));
        }
        let step = if n > 1 { (to_deg - from_deg) / (n - 1) as f64 } else { 0.0 };
        // The last angle is the given end exactly (no accumulated rounding), as numpy's linspace.
        let angles_deg = (0..n).map(|i| if i + 1 == n && n > 1 { to_deg } else { from_deg + i as f64 * step }).collect();
        Ok(Self { axis, angles_deg })
    }

    /// The given offsets; an empty list or a non-finite angle is an error naming its index.
    pub fn explicit(axis: TiltAxis, angles_deg: Vec<f64>) -> Result<Self, InputError> {
        if angles_deg.is_empty() {
            return Err(InputError::new("tilts", "a sweep needs at least one tilt"));
        }
        if let Some((i, a)) = angles_deg.iter().enumerate().find(|(_, a)| !a.is_finite()) {
            return Err(InputError::new(format!("tilts[{i}]"), format!("not a finite angle in degrees ({a})")));
        }
        Ok(Self { axis, angles_deg })
    }

    /// Number of tilts.
    pub fn len(&self) -> usize {
        self.angles_deg.len()
    }

    /// Whether there are no tilts (never, for a sweep built by the constructors).
    pub fn is_empty(&self) -> bool {
        self.angles_deg.is_empty()
    }

    /// The case tilt [tx, ty] (degrees) of tilt `i`: `base` with the offset added on the axis.
    pub fn tilt(&self, base: [f64; 2], i: usize) -> Option<[f64; 2]> {
        let offset = *self.angles_deg.get(i)?;
        Some(match self.axis {
            TiltAxis::X => [base[0] + offset, base[1]],
            TiltAxis::Y => [base[0], base[1] + offset],
        })
    }
}

/// One tilt's pattern as pushed: its own beams and `I[thickness][beam]`.
#[derive(Clone, Debug, PartialEq)]
struct TiltPattern {
    tilt_deg: f64,
    hkl: Vec<Hkl>,
    /// Thickness-major, `n_thicknesses × hkl.len()`.
    intensities: Vec<f64>,
}

/// Static patterns gathered tilt by tilt, reported on the union of their beams.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TiltSeries {
    n_thicknesses: usize,
    patterns: Vec<TiltPattern>,
    union: BTreeSet<Hkl>,
}

impl TiltSeries {
    /// An empty series whose every tilt has `n_thicknesses` rows.
    pub fn new(n_thicknesses: usize) -> Self {
        Self { n_thicknesses, patterns: Vec::new(), union: BTreeSet::new() }
    }

    /// Adds the pattern of tilt `tilt_deg` (the sweep's offset, or any label the caller plots
    /// against): its beams `hkl` and `I[thickness][beam]`. A row count other than the series'
    /// thicknesses, a row of another length than `hkl`, a repeated beam or a non-finite
    /// intensity is an error naming the tilt; the series is then unchanged.
    pub fn push(&mut self, tilt_deg: f64, hkl: &[Hkl], intensities: &[Vec<f64>]) -> Result<(), BlochError> {
        let object = || format!("tilt series: tilt {} ({tilt_deg}°)", self.patterns.len());
        if intensities.len() != self.n_thicknesses {
            return Err(InputError::new(object(), format!("{} rows of intensities for {} thicknesses", intensities.len(), self.n_thicknesses)).into());
        }
        if let Some((t, row)) = intensities.iter().enumerate().find(|(_, r)| r.len() != hkl.len()) {
            return Err(InputError::new(object(), format!("thickness {t}: {} intensities for {} beams", row.len(), hkl.len())).into());
        }
        let distinct: BTreeSet<Hkl> = hkl.iter().copied().collect();
        if distinct.len() != hkl.len() {
            return Err(InputError::new(object(), "a beam is listed twice").into());
        }
        if let Some(v) = intensities.iter().flatten().find(|v| !v.is_finite()) {
            return Err(InputError::new(object(), format!("a non-finite intensity ({v})")).into());
        }
        self.union.extend(distinct);
        self.patterns.push(TiltPattern { tilt_deg, hkl: hkl.to_vec(), intensities: intensities.concat() });
        Ok(())
    }

    /// Tilts pushed so far.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Whether no tilt was pushed.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Rows (thicknesses) of every tilt.
    pub fn n_thicknesses(&self) -> usize {
        self.n_thicknesses
    }

    /// The tilts in push order (degrees).
    pub fn tilts(&self) -> Vec<f64> {
        self.patterns.iter().map(|p| p.tilt_deg).collect()
    }

    /// The union of every tilt's beams, sorted by (h, k, l): the columns of [`Self::intensities`].
    pub fn hkl(&self) -> Vec<Hkl> {
        self.union.iter().copied().collect()
    }

    /// Number of beams in the union (the length of [`Self::hkl`]).
    pub fn n_beams(&self) -> usize {
        self.union.len()
    }

    /// Beams of tilt `i` (its own set, sorted as pushed).
    pub fn tilt_hkl(&self, i: usize) -> Option<&[Hkl]> {
        self.patterns.get(i).map(|p| p.hkl.as_slice())
    }

    fn columns(&self) -> BTreeMap<Hkl, usize> {
        self.union.iter().enumerate().map(|(j, &h)| (h, j)).collect()
    }

    /// `I[tilt][thickness][beam]` over [`Self::hkl`], flat and tilt-major (0 where a beam is absent
    /// at a tilt): `len() × n_thicknesses() × hkl().len()` values.
    pub fn intensities(&self) -> Vec<f64> {
        let columns = self.columns();
        let n = columns.len();
        let mut out = vec![0.0; self.patterns.len() * self.n_thicknesses * n];
        for (i, p) in self.patterns.iter().enumerate() {
            for t in 0..self.n_thicknesses {
                let row = &mut out[(i * self.n_thicknesses + t) * n..][..n];
                for (h, v) in p.hkl.iter().zip(&p.intensities[t * p.hkl.len()..]) {
                    if let Some(&j) = columns.get(h) {
                        row[j] = *v;
                    }
                }
            }
        }
        out
    }

    /// Σ over tilts of `I[thickness][beam]` over [`Self::hkl`] (0 where absent): the rocking-curve
    /// integrated intensities, as the fixture's rocking cases report them.
    pub fn summed(&self) -> Vec<Vec<f64>> {
        let columns = self.columns();
        let mut out = vec![vec![0.0; columns.len()]; self.n_thicknesses];
        for p in &self.patterns {
            for (t, row) in out.iter_mut().enumerate() {
                for (h, v) in p.hkl.iter().zip(&p.intensities[t * p.hkl.len()..]) {
                    if let Some(&j) = columns.get(h) {
                        row[j] += *v;
                    }
                }
            }
        }
        out
    }

    /// The rocking curve of reflection `hkl` at thickness index `thickness`: its intensity at
    /// every tilt (0 where absent); `None` for a beam in no tilt or a thickness out of range.
    pub fn curve(&self, hkl: Hkl, thickness: usize) -> Option<Vec<f64>> {
        if thickness >= self.n_thicknesses || !self.union.contains(&hkl) {
            return None;
        }
        let curve = self.patterns.iter().map(|p| p.hkl.iter().position(|h| *h == hkl).map_or(0.0, |j| p.intensities[thickness * p.hkl.len() + j]));
        Some(curve.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_offsets_the_named_axis() {
        let s = TiltSweep::linspace(TiltAxis::Y, -1.0, 1.0, 5).unwrap();
        assert_eq!(s.angles_deg, [-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(s.tilt([0.25, 0.5], 4), Some([0.25, 1.5]));
        assert_eq!(s.tilt([0.25, 0.5], 5), None);
        let x = TiltSweep::linspace(TiltAxis::X, 0.1, 0.7, 7).unwrap();
        assert_eq!(x.angles_deg.last(), Some(&0.7), "the end is exact");
        assert!((x.angles_deg[3] - 0.4).abs() < 1e-15);
        assert_eq!(x.tilt([1.0, 2.0], 0), Some([1.1, 2.0]));
        assert_eq!(TiltSweep::linspace(TiltAxis::X, 2.0, 5.0, 1).unwrap().angles_deg, [2.0]);
        assert_eq!(TiltSweep::explicit(TiltAxis::X, vec![0.3, -0.2]).unwrap().len(), 2);
    }

    #[test]
    fn bad_sweeps_are_named() {
        let e = TiltSweep::linspace(TiltAxis::X, f64::NAN, 1.0, 3).unwrap_err();
        assert!(e.to_string().contains("tilts") && e.to_string().contains("NaN"), "{e}");
        assert!(TiltSweep::linspace(TiltAxis::X, 0.0, 1.0, 0).unwrap_err().to_string().contains("at least one"));
        let e = TiltSweep::explicit(TiltAxis::Y, vec![0.0, f64::INFINITY]).unwrap_err();
        assert!(e.to_string().contains("tilts[1]"), "{e}");
        assert!(TiltSweep::explicit(TiltAxis::Y, vec![]).is_err());
    }

    /// Three tilts whose beam sets overlap partly, two thicknesses.
    fn series() -> TiltSeries {
        let mut s = TiltSeries::new(2);
        s.push(-0.5, &[[0, 0, 0], [1, 0, 0]], &[vec![0.9, 0.1], vec![0.7, 0.3]]).unwrap();
        s.push(0.0, &[[-1, 0, 0], [0, 0, 0], [1, 0, 0]], &[vec![0.2, 0.6, 0.2], vec![0.1, 0.5, 0.4]]).unwrap();
        s.push(0.5, &[[-1, 0, 0], [0, 0, 0]], &[vec![0.25, 0.75], vec![0.5, 0.5]]).unwrap();
        s
    }

    #[test]
    fn union_layout_zeros_and_sums() {
        let s = series();
        assert_eq!((s.len(), s.n_thicknesses(), s.tilts()), (3, 2, vec![-0.5, 0.0, 0.5]));
        assert_eq!(s.hkl(), vec![[-1, 0, 0], [0, 0, 0], [1, 0, 0]]);
        assert_eq!(s.n_beams(), 3);
        #[rustfmt::skip]
        let want = [
            0.0, 0.9, 0.1,   0.0, 0.7, 0.3,
            0.2, 0.6, 0.2,   0.1, 0.5, 0.4,
            0.25, 0.75, 0.0, 0.5, 0.5, 0.0,
        ];
        assert_eq!(s.intensities(), want);
        let summed = s.summed();
        let expect = [[0.45, 2.25, 0.3], [0.6, 1.7, 0.7]];
        for (row, want) in summed.iter().zip(expect) {
            for (a, b) in row.iter().zip(want) {
                assert!((a - b).abs() < 1e-15, "{summed:?}");
            }
        }
        assert_eq!(s.curve([1, 0, 0], 1), Some(vec![0.3, 0.4, 0.0]));
        assert_eq!(s.curve([2, 0, 0], 0), None);
        assert_eq!(s.curve([0, 0, 0], 2), None);
        assert_eq!(s.tilt_hkl(2), Some(&[[-1, 0, 0], [0, 0, 0]][..]));
    }

    #[test]
    fn bad_pushes_are_named_and_leave_the_series_unchanged() {
        let mut s = series();
        let before = s.clone();
        for (hkl, rows, want) in [
            (vec![[0, 0, 0]], vec![vec![1.0]], "1 rows of intensities for 2 thicknesses"),
            (vec![[0, 0, 0]], vec![vec![1.0], vec![1.0, 0.0]], "thickness 1: 2 intensities for 1 beams"),
            (vec![[0, 0, 0], [0, 0, 0]], vec![vec![1.0, 0.0], vec![1.0, 0.0]], "a beam is listed twice"),
            (vec![[0, 0, 0], [2, 0, 0]], vec![vec![1.0, f64::NAN], vec![1.0, 0.0]], "non-finite intensity (NaN)"),
        ] {
            let e = s.push(1.0, &hkl, &rows).unwrap_err().to_string();
            assert!(e.contains("tilt series: tilt 3 (1°)") && e.contains(want), "{e}");
        }
        assert_eq!(s, before);
        assert!(TiltSeries::new(1).is_empty() && TiltSeries::new(1).intensities().is_empty());
    }
}

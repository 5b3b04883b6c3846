//! Monotone piecewise-cubic Hermite interpolation (PCHIP) of a depth profile through its knots.
//! Chosen over a natural cubic spline because it never overshoots the knots: a density stays ≥ 0
//! and an order parameter stays inside [−0.5, 1] between valid knots.
//!
//! The slopes and the cubic are the optical-constant tables' (`materials::interp`: Fritsch–Carlson
//! with the Fritsch–Butland weighted harmonic mean and the three-point end rule, operation for
//! operation as scipy's `PchipInterpolator`), so the workspace has one PCHIP.

use crate::materials::interp;

/// A PCHIP through knots (x strictly increasing, at least 2); constant outside the knot range.
#[derive(Clone, Debug)]
pub(crate) struct Pchip {
    x: Vec<f64>,
    y: Vec<f64>,
    /// dy/dx at each knot.
    d: Vec<f64>,
}

impl Pchip {
    /// Builds the interpolant; the caller has checked the knots (≥ 2, x strictly increasing, finite).
    pub(crate) fn new(knots: &[(f64, f64)]) -> Self {
        let (x, y): (Vec<f64>, Vec<f64>) = knots.iter().copied().unzip();
        let d = interp::pchip_slopes(&x, &y);
        Self { x, y, d }
    }

    /// The interpolated value at `t`; the end knots' values outside [x_0, x_last].
    pub(crate) fn at(&self, t: f64) -> f64 {
        let n = self.x.len();
        if t <= self.x[0] {
            return self.y[0];
        }
        if t >= self.x[n - 1] {
            return self.y[n - 1];
        }
        interp::hermite(&self.x, &self.y, &self.d, interp::segment(&self.x, t), t)
    }
}

//! Monotone piecewise-cubic Hermite interpolation (PCHIP, Fritsch & Carlson 1980, with the
//! Fritsch–Butland weighted harmonic mean and the three-point end rule as scipy's
//! `PchipInterpolator` uses them). Chosen over a natural cubic spline because it never overshoots
//! the knots: a density stays ≥ 0 and an order parameter stays inside [−0.5, 1] between valid knots.

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
        let n = x.len();
        let h: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
        let m: Vec<f64> = (0..n - 1).map(|k| (y[k + 1] - y[k]) / h[k]).collect();
        let mut d = vec![0.0; n];
        if n == 2 {
            d.fill(m[0]); // two knots: the straight line (scipy does the same)
            return Self { x, y, d };
        }
        for k in 1..n - 1 {
            let (m0, m1) = (m[k - 1], m[k]);
            // A local extremum or a flat side: zero slope keeps the curve monotone.
            if m0 * m1 > 0.0 {
                let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
                d[k] = (w1 + w2) / (w1 / m0 + w2 / m1);
            }
        }
        d[0] = end_slope(h[0], h[1], m[0], m[1]);
        d[n - 1] = end_slope(h[n - 2], h[n - 3], m[n - 2], m[n - 3]);
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
        // The interval [x_k, x_k+1) holding t.
        let k = self.x.partition_point(|&xk| xk <= t) - 1;
        let h = self.x[k + 1] - self.x[k];
        let s = (t - self.x[k]) / h;
        let (s2, s3) = (s * s, s * s * s);
        let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
        let h10 = s3 - 2.0 * s2 + s;
        let h01 = -2.0 * s3 + 3.0 * s2;
        let h11 = s3 - s2;
        h00 * self.y[k] + h10 * h * self.d[k] + h01 * self.y[k + 1] + h11 * h * self.d[k + 1]
    }
}

/// The one-sided three-point end slope, limited so that the end interval stays monotone.
fn end_slope(h0: f64, h1: f64, m0: f64, m1: f64) -> f64 {
    // numpy's sign: 0 for 0 (f64::signum gives ±1 there, which would change the branches).
    let sign = |v: f64| if v == 0.0 { 0.0 } else { v.signum() };
    let d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if sign(d) != sign(m0) {
        0.0
    } else if sign(m0) != sign(m1) && d.abs() > 3.0 * m0.abs() {
        3.0 * m0
    } else {
        d
    }
}

//! 1-D interpolation kernels for optical-constant tables and graded depth profiles (`grading::pchip`): linear, and monotone piecewise-cubic
//! Hermite (PCHIP). PCHIP slopes follow Fritsch–Carlson monotonicity with the Fritsch–Butland
//! weighted harmonic mean, exactly as scipy.interpolate.PchipInterpolator computes them, so a
//! table interpolates the same here as in a Python PRSoXR workflow and never overshoots the data
//! around a sharp absorption edge.

/// sign as numpy defines it (0 for 0).
fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// PCHIP derivative at each knot; `x` strictly ascending, `x.len() == y.len() ≥ 2`.
pub(crate) fn pchip_slopes(x: &[f64], y: &[f64]) -> Vec<f64> {
    let n = x.len();
    let h: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let m: Vec<f64> = y.windows(2).zip(&h).map(|(w, h)| (w[1] - w[0]) / h).collect();
    if n == 2 {
        return vec![m[0], m[0]];
    }
    let mut d = vec![0.0; n];
    for k in 1..n - 1 {
        let (m0, m1) = (m[k - 1], m[k]);
        if sign(m0) != sign(m1) || m0 == 0.0 || m1 == 0.0 {
            continue; // local extremum or flat: zero slope keeps the curve inside the data
        }
        let w1 = 2.0 * h[k] + h[k - 1];
        let w2 = h[k] + 2.0 * h[k - 1];
        d[k] = 1.0 / ((w1 / m0 + w2 / m1) / (w1 + w2));
    }
    d[0] = edge(h[0], h[1], m[0], m[1]);
    d[n - 1] = edge(h[n - 2], h[n - 3], m[n - 2], m[n - 3]);
    d
}

/// One-sided three-point end slope, limited so the end interval stays monotone.
fn edge(h0: f64, h1: f64, m0: f64, m1: f64) -> f64 {
    let d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if sign(d) != sign(m0) {
        0.0
    } else if sign(m0) != sign(m1) && d.abs() > 3.0 * m0.abs() {
        3.0 * m0
    } else {
        d
    }
}

/// Index j ≥ 1 of the segment [x[j − 1], x[j]] holding `t` (clamped to the ends).
pub(crate) fn segment(x: &[f64], t: f64) -> usize {
    x.partition_point(|&e| e <= t).clamp(1, x.len() - 1)
}

/// Linear interpolation on segment j, written as (1 − s)·y₀ + s·y₁ so both knots are exact.
pub(crate) fn linear(x: &[f64], y: &[f64], j: usize, t: f64) -> f64 {
    let s = (t - x[j - 1]) / (x[j] - x[j - 1]);
    (1.0 - s) * y[j - 1] + s * y[j]
}

/// Cubic Hermite on segment j with knot derivatives `d`.
pub(crate) fn hermite(x: &[f64], y: &[f64], d: &[f64], j: usize, t: f64) -> f64 {
    let h = x[j] - x[j - 1];
    let s = (t - x[j - 1]) / h;
    let (s2, s3) = (s * s, s * s * s);
    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
    let h10 = s3 - 2.0 * s2 + s;
    let h01 = -2.0 * s3 + 3.0 * s2;
    let h11 = s3 - s2;
    h00 * y[j - 1] + h10 * h * d[j - 1] + h01 * y[j] + h11 * h * d[j]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pchip_reproduces_a_line_and_flattens_at_extrema() {
        let x = [0.0, 1.0, 3.0, 4.0];
        let y = [1.0, 3.0, 7.0, 9.0];
        let d = pchip_slopes(&x, &y);
        assert!(d.iter().all(|v| (v - 2.0).abs() < 1e-15), "{d:?}");
        let d = pchip_slopes(&x, &[0.0, 1.0, 0.0, 1.0]);
        assert_eq!((d[1], d[2]), (0.0, 0.0));
    }
}

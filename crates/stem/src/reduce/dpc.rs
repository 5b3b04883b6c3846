//! Centre of mass as a vector field over the scan, and the DPC rotation between the scan and the
//! detector.
//!
//! The field is rotated by a candidate angle `a` as `r' = cos a·r − sin a·c`,
//! `c' = sin a·r + cos a·c` (on (row, col) vectors), optionally after swapping the components
//! (a transposed detector). With central differences on the interior, the rotated field's curl and
//! divergence are a rotation of the unrotated ones: `curl' = cos a·curl + sin a·div`,
//! `div' = cos a·div − sin a·curl`. So the mean squared curl is
//! `K + R·cos(2a − φ)` with a closed-form minimum, and the divergence-maximising angle is the
//! same angle (`curl'² + div'²` does not depend on `a`). The grid search (for parity with the
//! fixtures' `linspace(0°, 180°, 180)`) and the exact minimum both come from three averages.
//! Curl cannot tell `a` from `a + 180°`: [`super::idpc`] resolves that by a physical rule.
//!
//! Positions without data (frames of a missing data file) are NaN in the field: the mean, the
//! curl moments and the integration leave them out instead of folding zeros in.

use super::ReduceError;

/// A vector field over the scan, `(row, col)` components, row-major `rows × cols`.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorField {
    /// Scan rows.
    pub rows: usize,
    /// Scan columns.
    pub cols: usize,
    /// Row component.
    pub r: Vec<f64>,
    /// Column component.
    pub c: Vec<f64>,
}

impl VectorField {
    /// The field rotated by `deg` degrees, after swapping the components if `transpose`.
    pub fn rotated(&self, deg: f64, transpose: bool) -> VectorField {
        let (s, c) = deg.to_radians().sin_cos();
        let (a, b) = if transpose { (&self.c, &self.r) } else { (&self.r, &self.c) };
        VectorField { rows: self.rows, cols: self.cols, r: a.iter().zip(b).map(|(x, y)| c * x - s * y).collect(), c: a.iter().zip(b).map(|(x, y)| s * x + c * y).collect() }
    }
}

/// The mean-subtracted centre-of-mass field from the fused pass's absolute CoM (`com_raw`) over a
/// `scan` = (rows, cols) grid.
pub fn center_of_mass(com_raw: &[Vec<f64>; 2], scan: [usize; 2]) -> Result<VectorField, ReduceError> {
    let n = scan[0] * scan[1];
    if n == 0 || com_raw[0].len() != n || com_raw[1].len() != n {
        return Err(ReduceError::new("centre of mass", format!("{} / {} values for a {}×{} scan", com_raw[0].len(), com_raw[1].len(), scan[0], scan[1])));
    }
    // NaN marks a position without data (a missing data file): the mean is over the others,
    // and the position stays NaN.
    let centred = |v: &[f64]| -> Result<Vec<f64>, ReduceError> {
        let (sum, count) = v.iter().filter(|x| x.is_finite()).fold((0.0, 0usize), |(s, k), x| (s + x, k + 1));
        if count == 0 {
            return Err(ReduceError::new("centre of mass", "no scan position has data"));
        }
        let mean = sum / count as f64;
        Ok(v.iter().map(|x| x - mean).collect())
    };
    Ok(VectorField { rows: scan[0], cols: scan[1], r: centred(&com_raw[0])?, c: centred(&com_raw[1])? })
}

/// How to search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotationOptions {
    /// Grid points over [0°, 180°] inclusive (the fixtures use 180).
    pub grid: usize,
    /// Also try the transposed component order.
    pub try_transpose: bool,
}

impl Default for RotationOptions {
    fn default() -> Self {
        RotationOptions { grid: 180, try_transpose: true }
    }
}

/// The rotation found, in [0°, 180°).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rotation {
    /// Best grid angle, degrees.
    pub grid_deg: f64,
    /// Component order of the best grid angle.
    pub grid_transpose: bool,
    /// The exact minimum of the mean squared curl, degrees.
    pub fine_deg: f64,
    /// Component order of the exact minimum.
    pub transpose: bool,
    /// Mean squared curl at the exact minimum.
    pub curl: f64,
}

/// Interior averages ⟨curl²⟩, ⟨curl·div⟩, ⟨div²⟩ of a field (central differences) over the
/// positions whose four neighbours all have data; `None` when there is none.
fn moments(f: &VectorField, transpose: bool) -> Option<[f64; 3]> {
    let (gr, gc) = if transpose { (&f.c, &f.r) } else { (&f.r, &f.c) };
    let (rows, cols) = (f.rows, f.cols);
    let at = |v: &Vec<f64>, i: usize, j: usize| v[i * cols + j];
    let (mut a, mut b, mut c, mut n) = (0.0, 0.0, 0.0, 0usize);
    for i in 1..rows.saturating_sub(1) {
        for j in 1..cols.saturating_sub(1) {
            let d_row = |v: &Vec<f64>| 0.5 * (at(v, i + 1, j) - at(v, i - 1, j));
            let d_col = |v: &Vec<f64>| 0.5 * (at(v, i, j + 1) - at(v, i, j - 1));
            let curl = d_row(gc) - d_col(gr);
            let div = d_row(gr) + d_col(gc);
            // A stencil touching a position without data (NaN) is left out.
            if !(curl.is_finite() && div.is_finite()) {
                continue;
            }
            a += curl * curl;
            b += curl * div;
            c += div * div;
            n += 1;
        }
    }
    if n == 0 {
        return None;
    }
    let n = n as f64;
    Some([a / n, b / n, c / n])
}

/// Mean squared curl of the field rotated by `deg` from its moments.
fn curl_at(m: [f64; 3], deg: f64) -> f64 {
    let (s, c) = deg.to_radians().sin_cos();
    m[0] * c * c + 2.0 * m[1] * s * c + m[2] * s * s
}

/// The curl-minimising rotation of `field`, on the grid and exactly, over both component orders.
pub fn find_rotation(field: &VectorField, options: &RotationOptions) -> Result<Rotation, ReduceError> {
    if field.rows < 3 || field.cols < 3 || options.grid < 2 {
        return Err(ReduceError::new("DPC rotation", format!("needs a scan of at least 3×3 (got {}×{}) and ≥ 2 grid points", field.rows, field.cols)));
    }
    if field.r.iter().chain(&field.c).any(|v| v.is_infinite()) {
        return Err(ReduceError::new("DPC rotation", "the centre-of-mass field has infinite values"));
    }
    let orders: &[bool] = if options.try_transpose { &[false, true] } else { &[false] };
    let mut grid = (f64::INFINITY, 0.0, false);
    let mut fine = (f64::INFINITY, 0.0, false);
    for &t in orders {
        let m = moments(field, t).ok_or_else(|| ReduceError::new("DPC rotation", "no interior scan position has data at all four neighbours"))?;
        for k in 0..options.grid {
            let deg = 180.0 * k as f64 / (options.grid - 1) as f64;
            let v = curl_at(m, deg);
            if v < grid.0 {
                grid = (v, deg, t);
            }
        }
        // K + R cos(2a − φ): the minimum is at 2a = φ + π.
        let phi = (2.0 * m[1]).atan2(m[0] - m[2]);
        let deg = ((phi + std::f64::consts::PI) / 2.0).to_degrees().rem_euclid(180.0);
        let v = curl_at(m, deg);
        if v < fine.0 {
            fine = (v, deg, t);
        }
    }
    Ok(Rotation { grid_deg: grid.1 % 180.0, grid_transpose: grid.2, fine_deg: fine.1, transpose: fine.2, curl: fine.0 })
}

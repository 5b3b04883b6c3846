//! Planned 2-D FFTs of one scan grid (rustfft along rows, then along columns through a
//! transpose), f64. The plans and buffers are made once per reconstruction: SSB transforms one
//! scan image per BF pixel (hundreds), so re-planning per transform would dominate small scans.

use std::sync::Arc;

use num_complex::Complex64;
use rustfft::{Fft, FftDirection, FftPlanner};

/// Forward or inverse 2-D transforms of a `rows × cols` row-major grid (the inverse is
/// unnormalised, as numpy's `ifft2` times `rows·cols`).
pub struct Fft2 {
    rows: usize,
    cols: usize,
    row: Arc<dyn Fft<f64>>,
    col: Arc<dyn Fft<f64>>,
    scratch: Vec<Complex64>,
    transposed: Vec<Complex64>,
}

impl Fft2 {
    /// Plans for a `rows × cols` grid in `direction`.
    pub fn new(rows: usize, cols: usize, direction: FftDirection) -> Self {
        let mut planner = FftPlanner::new();
        let row = planner.plan_fft(cols, direction);
        let col = planner.plan_fft(rows, direction);
        let scratch = vec![Complex64::default(); row.get_inplace_scratch_len().max(col.get_inplace_scratch_len())];
        Fft2 { rows, cols, row, col, scratch, transposed: vec![Complex64::default(); rows * cols] }
    }

    /// Transforms `data` (`rows · cols` values) in place; other lengths are left alone.
    pub fn process(&mut self, data: &mut [Complex64]) {
        let (rows, cols) = (self.rows, self.cols);
        if data.len() != rows * cols || data.is_empty() {
            return;
        }
        // rustfft transforms every consecutive chunk of its length: all rows in one call.
        self.row.process_with_scratch(data, &mut self.scratch);
        for r in 0..rows {
            for c in 0..cols {
                self.transposed[c * rows + r] = data[r * cols + c];
            }
        }
        self.col.process_with_scratch(&mut self.transposed, &mut self.scratch);
        for c in 0..cols {
            for r in 0..rows {
                data[r * cols + c] = self.transposed[c * rows + r];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_direct_transform() {
        let (rows, cols) = (3, 5);
        let x: Vec<Complex64> = (0..rows * cols).map(|i| Complex64::new((i as f64 * 0.7).sin(), (i as f64 * 0.3).cos())).collect();
        let mut y = x.clone();
        Fft2::new(rows, cols, FftDirection::Forward).process(&mut y);
        for (u, v) in (0..rows).flat_map(|u| (0..cols).map(move |v| (u, v))) {
            let mut s = Complex64::default();
            for (r, c) in (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))) {
                let ang = -2.0 * std::f64::consts::PI * ((u * r) as f64 / rows as f64 + (v * c) as f64 / cols as f64);
                s += x[r * cols + c] * Complex64::from_polar(1.0, ang);
            }
            assert!((s - y[u * cols + v]).norm() < 1e-12);
        }
        Fft2::new(rows, cols, FftDirection::Inverse).process(&mut y);
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b / (rows * cols) as f64).norm() < 1e-12);
        }
    }
}

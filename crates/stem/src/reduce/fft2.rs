//! 2-D FFTs over a row-major grid (rustfft along rows, then columns), f64.

use num_complex::Complex64;
use rustfft::{FftDirection, FftPlanner};

/// In-place 2-D transform of a `rows × cols` grid; the inverse is unnormalised (÷ rows·cols is
/// the caller's).
pub fn fft2(data: &mut [Complex64], rows: usize, cols: usize, direction: FftDirection) {
    let mut planner = FftPlanner::new();
    let row_fft = planner.plan_fft(cols, direction);
    for row in data.chunks_exact_mut(cols) {
        row_fft.process(row);
    }
    let col_fft = planner.plan_fft(rows, direction);
    let mut column = vec![Complex64::new(0.0, 0.0); rows];
    for c in 0..cols {
        for (r, v) in column.iter_mut().enumerate() {
            *v = data[r * cols + c];
        }
        col_fft.process(&mut column);
        for (r, v) in column.iter().enumerate() {
            data[r * cols + c] = *v;
        }
    }
}

/// numpy's `fftfreq(n)`: cycles per sample, non-negative first.
pub fn fftfreq(n: usize) -> Vec<f64> {
    (0..n).map(|k| if 2 * k < n { k as f64 } else { k as f64 - n as f64 } / n as f64).collect()
}

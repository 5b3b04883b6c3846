//! The host side of one axis of the GPU's 2-D FFT: which algorithm a length gets and its tables,
//! computed in f64 and rounded once to f32 (so no kernel evaluates a trigonometric function).
//!
//! Powers of two run as radix-2 Stockham passes over a twiddle table `exp(−2πi j/n)`, j < n/2.
//! Every other length runs as Bluestein's chirp-z transform: the chirp `c_j = exp(−πi j²/n)`
//! (with `j² mod 2n` taken in integers, so large `j` lose nothing), and the spectrum of the chirp
//! filter `b_l = conj(c_|l|)` over a power-of-two length `m ≥ 2n − 1` (rustfft, f64, with the
//! inverse transform's 1/m folded in); the inverse direction uses the conjugate chirp and filter.

use num_complex::Complex64;
use rustfft::FftPlanner;
use scatterlab_gpu::{wgpu, GpuContext};

use crate::reduce::ReduceError;

/// The longest scan axis the GPU transform takes (Bluestein's scratch is then 2^18 long).
pub const MAX_AXIS: usize = 1 << 16;

/// How one axis length is transformed, with its tables on the device.
#[derive(Debug)]
pub(super) enum AxisPlan {
    /// `n` a power of two (1 included: no pass at all).
    Radix2 {
        /// Length.
        n: usize,
        /// `exp(−2πi j/n)`, j < max(n/2, 1).
        twiddles: wgpu::Buffer,
    },
    /// Any other length, through a power-of-two scratch of length `m`.
    Bluestein {
        /// Length.
        n: usize,
        /// Scratch length, the power of two ≥ 2n − 1.
        m: usize,
        /// `exp(−2πi j/m)`, j < m/2.
        twiddles: wgpu::Buffer,
        /// `exp(−πi j²/n)`, j < n.
        chirp: wgpu::Buffer,
        /// The filter's spectrum / m: forward, inverse.
        filter: [wgpu::Buffer; 2],
    },
}

fn table(ctx: &GpuContext, label: &str, values: impl Iterator<Item = Complex64>) -> wgpu::Buffer {
    let mut v: Vec<[f32; 2]> = values.map(|z| [z.re as f32, z.im as f32]).collect();
    if v.is_empty() {
        // A zero-sized binding is invalid; length-1 transforms never read it.
        v.push([1.0, 0.0]);
    }
    ctx.storage_from(label, &v)
}

/// `exp(−2πi j/n)` for j < n/2.
fn twiddles(n: usize) -> impl Iterator<Item = Complex64> {
    (0..n / 2).map(move |j| Complex64::from_polar(1.0, -2.0 * std::f64::consts::PI * j as f64 / n as f64))
}

/// `exp(−πi j²/n)`, exact in the integer part of the angle.
pub(super) fn chirp(n: usize) -> Vec<Complex64> {
    let two_n = 2 * n as u128;
    (0..n).map(|j| Complex64::from_polar(1.0, -std::f64::consts::PI * ((j as u128 * j as u128) % two_n) as f64 / n as f64)).collect()
}

/// Bluestein's scratch length for `n`.
pub(super) fn bluestein_len(n: usize) -> usize {
    (2 * n - 1).next_power_of_two()
}

/// The spectrum of the cyclic filter `b_l = conj(c_|l|)` (or `c_|l|` for the inverse) of length
/// `m`, divided by `m`.
fn filter(c: &[Complex64], m: usize, inverse: bool) -> Vec<Complex64> {
    let mut b = vec![Complex64::default(); m];
    for (l, &v) in c.iter().enumerate() {
        let v = if inverse { v } else { v.conj() };
        b[l] = v;
        if l > 0 {
            b[m - l] = v;
        }
    }
    FftPlanner::new().plan_fft_forward(m).process(&mut b);
    let s = 1.0 / m as f64;
    b.iter_mut().for_each(|v| *v *= s);
    b
}

impl AxisPlan {
    /// The plan of length `n` (1 ≤ n ≤ [`MAX_AXIS`]), tables uploaded to `ctx`; `what` names the
    /// axis in the error.
    pub(super) fn new(ctx: &GpuContext, n: usize, what: &str) -> Result<Self, ReduceError> {
        if n == 0 || n > MAX_AXIS {
            return Err(ReduceError::new("scan shape", format!("the GPU FFT takes {what} lengths 1..={MAX_AXIS} (got {n})")));
        }
        if n.is_power_of_two() {
            return Ok(AxisPlan::Radix2 { n, twiddles: table(ctx, "ssb twiddles", twiddles(n)) });
        }
        let m = bluestein_len(n);
        let c = chirp(n);
        Ok(AxisPlan::Bluestein {
            n,
            m,
            twiddles: table(ctx, "ssb twiddles", twiddles(m)),
            chirp: table(ctx, "ssb chirp", c.iter().copied()),
            filter: [false, true].map(|inv| table(ctx, "ssb chirp filter", filter(&c, m, inv).into_iter())),
        })
    }

    /// Scratch values one line needs (0 for powers of two).
    pub(super) fn scratch_per_line(&self) -> usize {
        match self {
            AxisPlan::Radix2 { .. } => 0,
            AxisPlan::Bluestein { m, .. } => *m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bluestein_tables_give_the_dft() {
        // The f64 algebra the kernels run: x·c, cyclic convolution with b by FFTs, ·c.
        for n in [3usize, 5, 6, 12, 17] {
            let m = bluestein_len(n);
            let c = chirp(n);
            let x: Vec<Complex64> = (0..n).map(|i| Complex64::new((i as f64 * 1.3).sin(), (i as f64 * 0.4).cos())).collect();
            for inverse in [false, true] {
                let cc = |j: usize| if inverse { c[j].conj() } else { c[j] };
                let mut a = vec![Complex64::default(); m];
                for j in 0..n {
                    a[j] = x[j] * cc(j);
                }
                let mut planner = FftPlanner::new();
                planner.plan_fft_forward(m).process(&mut a);
                for (v, f) in a.iter_mut().zip(filter(&c, m, inverse)) {
                    *v *= f;
                }
                planner.plan_fft_inverse(m).process(&mut a);
                let sign = if inverse { 1.0 } else { -1.0 };
                for (k, &ak) in a.iter().enumerate().take(n) {
                    let want: Complex64 = x.iter().enumerate().map(|(j, &xj)| xj * Complex64::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64)).sum();
                    assert!((ak * cc(k) - want).norm() < 1e-12, "n {n} k {k} inverse {inverse}");
                }
            }
        }
    }
}

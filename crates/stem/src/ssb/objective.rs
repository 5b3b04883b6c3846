//! The aberration fit's loss (quantem's objective): the mean over scan positions of the variance
//! over BF pixels of `angle(O_b)`, `O_b = IFFT2(G_b conj(Γ_b)/max(|Γ_b|, ε))` with the `ν = 0`
//! term `mean_b G_b(0)`. Right aberrations make every `O_b` the same object; wrong ones shift and
//! blur them differently per pixel.
//!
//! χ is a quadratic form, `χ(k) = kᵀMk` with `M = πλ[[C10 + a, b], [b, C10 − a]]`
//! (`a = C12 cos 2φ12`, `b = C12 sin 2φ12`), so with `u = k_bᵀMν`
//! `Γ_b(ν) = A(k_b) e^{2iu} W_b(ν)`, `W_b = A(k_b − ν) e^{−iχ(ν)} − A(k_b + ν) e^{iχ(ν)}`:
//! `e^{±iχ(ν)}` is shared by all pixels and `e^{−2iu}` is a plane wave over the scan grid,
//! separable into a row and a column factor. A trial then costs no transcendental per pixel and
//! frequency, only the inverse transform and the angle (two orders fewer `sin_cos` than
//! evaluating `P` twice per frequency as [`super::mean_spectrum`] does).
//!
//! The spectra `G_b` are transformed once and kept, optionally for a subset of pixels and cropped
//! to the low frequencies (a binned scan): the coarse stage of the fit.

use num_complex::Complex64;
use rustfft::FftDirection;
use scatterlab_core::CancelToken;

use super::optics::SoftAperture;
use super::{BfStack, Fft2, Optics, GAMMA_FLOOR};
use crate::reduce::ReduceError;

/// Per-position sums of `angle(O_b)` and of its square over some pixels.
type Sums = (Vec<f64>, Vec<f64>);

/// One trial: defocus, astigmatism in Cartesian form (nm) and scan rotation (degrees).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Trial {
    /// C10, nm.
    pub c10_nm: f64,
    /// `C12 cos 2φ12`, nm.
    pub c12a_nm: f64,
    /// `C12 sin 2φ12`, nm.
    pub c12b_nm: f64,
    /// Scan rotation θ, degrees.
    pub rotation_deg: f64,
}

/// The precomputed data of the loss over one grid and pixel subset.
pub struct PhaseVariance {
    grid: [usize; 2],
    // Unrotated scan frequencies of the grid's rows and columns, Å⁻¹.
    fr: Vec<f64>,
    fc: Vec<f64>,
    k: Vec<[f64; 2]>,
    a: Vec<f64>,
    // G_b on the grid, pixel-major.
    spectra: Vec<Complex64>,
    // mean over *all* BF pixels of G_b(0) (= the image sums): every O_b's ν = 0 term.
    dc: Complex64,
    optics: Optics,
    threads: usize,
}

/// Source index in an `n`-point spectrum of entry `j` of an `m`-point cropped one (the same
/// integer frequency, negative ones wrapped), and that frequency in cycles per `n` samples.
fn crop_index(j: usize, m: usize, n: usize) -> (usize, f64) {
    let f = if 2 * j < m { j as isize } else { j as isize - m as isize };
    (f.rem_euclid(n as isize) as usize, f as f64)
}

impl PhaseVariance {
    /// The loss of `stack` over every `stride`-th BF pixel with the spectra cropped to `grid`
    /// (each ≤ the scan's), for scan step `step_a` (Å), on `threads` threads (1 on wasm).
    pub fn new(stack: &BfStack, optics: &Optics, step_a: f64, stride: usize, grid: [usize; 2], threads: usize, cancel: &CancelToken) -> Result<Self, ReduceError> {
        let [rows, cols] = stack.scan;
        if grid[0] == 0 || grid[1] == 0 || grid[0] > rows || grid[1] > cols {
            return Err(ReduceError::new("SSB fit grid", format!("{}×{} is not within the {rows}×{cols} scan", grid[0], grid[1])));
        }
        let n = rows * cols;
        let nb = stack.pixels.len();
        let dc = (0..nb).map(|b| stack.image(b).iter().sum::<f64>()).sum::<f64>() / nb.max(1) as f64;
        let (ir, fr): (Vec<usize>, Vec<f64>) = (0..grid[0]).map(|j| crop_index(j, grid[0], rows)).map(|(i, f)| (i, f / (rows as f64 * step_a))).unzip();
        let (ic, fc): (Vec<usize>, Vec<f64>) = (0..grid[1]).map(|j| crop_index(j, grid[1], cols)).map(|(i, f)| (i, f / (cols as f64 * step_a))).unzip();
        let chosen: Vec<usize> = (0..nb).step_by(stride.max(1)).collect();
        let mut fft = Fft2::new(rows, cols, FftDirection::Forward);
        let mut g = vec![Complex64::default(); n];
        let mut spectra = Vec::with_capacity(chosen.len() * grid[0] * grid[1]);
        let probe = super::Probe::new(optics, &super::Aberrations::default());
        let (mut k, mut a) = (Vec::new(), Vec::new());
        for (i, &b) in chosen.iter().enumerate() {
            if i % 16 == 0 && cancel.is_cancelled() {
                return Err(ReduceError::new("SSB fit", "cancelled"));
            }
            for (x, &v) in g.iter_mut().zip(stack.image(b)) {
                *x = Complex64::new(v, 0.0);
            }
            fft.process(&mut g);
            spectra.extend(ir.iter().flat_map(|&r| ic.iter().map(move |&c| (r, c))).map(|(r, c)| g[r * cols + c]));
            let kb = stack.pixels.k[b];
            k.push(kb);
            a.push(probe.aperture(kb[0], kb[1]));
        }
        let threads = if cfg!(target_arch = "wasm32") { 1 } else { threads.max(1) };
        Ok(PhaseVariance { grid, fr, fc, k, a, spectra, dc: Complex64::new(dc, 0.0), optics: *optics, threads })
    }

    /// What the GPU twin (`crate::gpu::PhaseVarianceGpu`) uploads: grid, unrotated row and
    /// column frequencies, the selected pixels' k and `A(k_b)`, their spectra, the DC term, optics.
    #[allow(clippy::type_complexity)]
    pub(crate) fn parts(&self) -> ([usize; 2], &[f64], &[f64], &[[f64; 2]], &[f64], &[Complex64], Complex64, &Optics) {
        (self.grid, &self.fr, &self.fc, &self.k, &self.a, &self.spectra, self.dc, &self.optics)
    }

    /// Pixels in the loss.
    pub fn pixels(&self) -> usize {
        self.k.len()
    }

    /// The grid the loss is evaluated on (rows, cols).
    pub fn grid(&self) -> [usize; 2] {
        self.grid
    }

    /// `G_b conj(Γ_b)/max(|Γ_b|, ε)` of selected pixel `i` on the grid into `out`, `ν = 0` set to
    /// the common DC term; `shared` from [`Shared::new`].
    fn spectrum(&self, i: usize, shared: &Shared, out: &mut [Complex64]) {
        let n = self.grid[0] * self.grid[1];
        let (g, kb, ab) = (&self.spectra[i * n..(i + 1) * n], self.k[i], self.a[i]);
        let m = &shared.m;
        let mk = [m[0][0] * kb[0] + m[0][1] * kb[1], m[1][0] * kb[0] + m[1][1] * kb[1]];
        // u = (M k_b)·Rot(θ)f = (Rot(θ)ᵀ M k_b)·f; e^{−2iu} = row factor × column factor.
        let (s, c) = shared.sin_cos;
        let p = [c * mk[0] + s * mk[1], -s * mk[0] + c * mk[1]];
        let row: Vec<Complex64> = self.fr.iter().map(|&f| Complex64::from_polar(1.0, -2.0 * p[0] * f)).collect();
        let col: Vec<Complex64> = self.fc.iter().map(|&f| Complex64::from_polar(1.0, -2.0 * p[1] * f)).collect();
        let aperture = |kr: f64, kc: f64| shared.aperture(kr, kc);
        for (idx, o) in out.iter_mut().enumerate() {
            let [vr, vc] = shared.nu[idx];
            let (am, ap) = (aperture(kb[0] - vr, kb[1] - vc), aperture(kb[0] + vr, kb[1] + vc));
            *o = Complex64::default();
            if am == 0.0 && ap == 0.0 {
                continue;
            }
            let e = shared.e_chi[idx];
            let w = e.conj() * am - e * ap;
            let norm = ab * w.norm();
            if norm > 0.0 {
                let ramp = row[idx / self.grid[1]] * col[idx % self.grid[1]];
                *o = g[idx] * ramp * w.conj() * (ab / norm.max(GAMMA_FLOOR));
            }
        }
        if let Some(o0) = out.first_mut() {
            *o0 = self.dc;
        }
    }

    /// Sums of `angle(O_b)` and its square per position over the selected pixels `i ≡ t (mod T)`.
    fn accumulate(&self, shared: &Shared, t: usize, stride: usize, cancel: &CancelToken) -> Result<Sums, ReduceError> {
        let n = self.grid[0] * self.grid[1];
        let mut fft = Fft2::new(self.grid[0], self.grid[1], FftDirection::Inverse);
        let (mut buf, mut sum, mut sq) = (vec![Complex64::default(); n], vec![0.0; n], vec![0.0; n]);
        for (j, i) in (t..self.pixels()).step_by(stride).enumerate() {
            if j % 8 == 0 && cancel.is_cancelled() {
                return Err(ReduceError::new("SSB fit", "cancelled"));
            }
            self.spectrum(i, shared, &mut buf);
            fft.process(&mut buf);
            for ((s, q), z) in sum.iter_mut().zip(sq.iter_mut()).zip(&buf) {
                let phi = z.arg();
                *s += phi;
                *q += phi * phi;
            }
        }
        Ok((sum, sq))
    }

    /// The loss of `trial`: mean over positions of the (population) variance over pixels of
    /// `angle(O_b)`; the pixels are shared among the threads.
    pub fn loss(&self, trial: &Trial, cancel: &CancelToken) -> Result<f64, ReduceError> {
        self.loss_on(trial, self.threads, cancel)
    }

    fn loss_on(&self, trial: &Trial, threads: usize, cancel: &CancelToken) -> Result<f64, ReduceError> {
        let shared = Shared::new(self, trial);
        let threads = threads.min(self.pixels()).max(1);
        let parts = self.run_parts(&shared, threads, cancel)?;
        let n = self.grid[0] * self.grid[1];
        let (mut sum, mut sq) = (vec![0.0; n], vec![0.0; n]);
        for (s, q) in parts {
            sum.iter_mut().zip(&s).for_each(|(a, b)| *a += b);
            sq.iter_mut().zip(&q).for_each(|(a, b)| *a += b);
        }
        let nb = self.pixels().max(1) as f64;
        let var: f64 = sum.iter().zip(&sq).map(|(s, q)| (q / nb - (s / nb) * (s / nb)).max(0.0)).sum();
        Ok(var / n.max(1) as f64)
    }

    /// The losses of a batch of trials, the trials shared among the threads (one thread per
    /// trial: on small grids a trial is too short to split).
    pub fn losses(&self, trials: &[Trial], cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        let threads = self.threads.min(trials.len()).max(1);
        if threads == 1 {
            return trials.iter().map(|t| self.loss_on(t, 1, cancel)).collect();
        }
        self.batch(trials, threads, cancel)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn batch(&self, trials: &[Trial], threads: usize, cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        let mut out = vec![0.0; trials.len()];
        let per = trials.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = trials.chunks(per).map(|chunk| s.spawn(move || chunk.iter().map(|t| self.loss_on(t, 1, cancel)).collect::<Result<Vec<f64>, _>>())).collect();
            for (h, o) in handles.into_iter().zip(out.chunks_mut(per)) {
                let v = h.join().map_err(|_| ReduceError::new("SSB fit", "a worker thread panicked"))??;
                o.copy_from_slice(&v);
            }
            Ok::<(), ReduceError>(())
        })?;
        Ok(out)
    }

    #[cfg(target_arch = "wasm32")]
    fn batch(&self, trials: &[Trial], _threads: usize, cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        trials.iter().map(|t| self.loss_on(t, 1, cancel)).collect()
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn run_parts(&self, shared: &Shared, threads: usize, cancel: &CancelToken) -> Result<Vec<Sums>, ReduceError> {
        if threads == 1 {
            return Ok(vec![self.accumulate(shared, 0, 1, cancel)?]);
        }
        // Interleaved pixels per thread: neighbouring pixels cost alike, so the load balances.
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|t| s.spawn(move || self.accumulate(shared, t, threads, cancel))).collect();
            handles.into_iter().map(|h| h.join().map_err(|_| ReduceError::new("SSB fit", "a worker thread panicked"))?).collect()
        })
    }

    #[cfg(target_arch = "wasm32")]
    fn run_parts(&self, shared: &Shared, _threads: usize, cancel: &CancelToken) -> Result<Vec<Sums>, ReduceError> {
        Ok(vec![self.accumulate(shared, 0, 1, cancel)?])
    }

    /// The object spectrum `mean_b` of the selected pixels' terms (what [`super::mean_spectrum`]
    /// gives with every pixel and the full grid): the check that this factorisation is the SSB.
    pub fn mean_spectrum(&self, trial: &Trial) -> Vec<Complex64> {
        let shared = Shared::new(self, trial);
        let n = self.grid[0] * self.grid[1];
        let (mut buf, mut sum) = (vec![Complex64::default(); n], vec![Complex64::default(); n]);
        for i in 0..self.pixels() {
            self.spectrum(i, &shared, &mut buf);
            sum.iter_mut().zip(&buf).for_each(|(s, b)| *s += b);
        }
        let nb = self.pixels().max(1) as f64;
        sum.iter_mut().for_each(|s| *s /= nb);
        sum
    }
}

/// What every pixel of one trial shares: rotated frequencies, `e^{iχ(ν)}`, `M`, the aperture.
struct Shared {
    nu: Vec<[f64; 2]>,
    e_chi: Vec<Complex64>,
    m: [[f64; 2]; 2],
    sin_cos: (f64, f64),
    aperture: SoftAperture,
}

impl Shared {
    fn new(pv: &PhaseVariance, t: &Trial) -> Self {
        let o = &pv.optics;
        let pl = std::f64::consts::PI * o.wavelength_a;
        // nm → Å.
        let (c10, a, b) = (10.0 * t.c10_nm, 10.0 * t.c12a_nm, 10.0 * t.c12b_nm);
        let m = [[pl * (c10 + a), pl * b], [pl * b, pl * (c10 - a)]];
        let (s, c) = t.rotation_deg.to_radians().sin_cos();
        let nu: Vec<[f64; 2]> = pv.fr.iter().flat_map(|&r| pv.fc.iter().map(move |&q| [c * r - s * q, s * r + c * q])).collect();
        let e_chi = nu.iter().map(|&[r, q]| Complex64::from_polar(1.0, r * (m[0][0] * r + m[0][1] * q) + q * (m[1][0] * r + m[1][1] * q))).collect();
        Shared { nu, e_chi, m, sin_cos: (s, c), aperture: SoftAperture::new(o.k_alpha_inv_a, 1.0 / o.dk_inv_a_per_px) }
    }

    /// The soft aperture of [`super::Probe::aperture`].
    fn aperture(&self, kr: f64, kc: f64) -> f64 {
        self.aperture.at(kr, kc)
    }
}

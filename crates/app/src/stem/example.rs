//! The built-in example: a small synthetic 4D-STEM acquisition generated in code, so the
//! workspace shows something the moment it opens (no file needed, in the browser too).
//!
//! A 32 × 32 scan over a lattice of Gaussian "atoms" (a phase object φ, radians) on a wedge of
//! increasing thickness, recorded on a 48 × 48 u16 detector. Each frame is the bright-field disc
//! (radius 7 px) shifted by the phase gradient — the centre-of-mass shift
//! `∇φ / (2π · dk · step)` pixels (CONVENTIONS.md → iDPC), turned by the scan rotation
//! [`ROTATION_DEG`] as a real microscope's detector would be — and dimmed by absorption; what
//! leaves the disc lands in a ring at twice its radius (so ADF is bright on atoms). Counts get
//! a deterministic √N noise. A few dead and hot pixels are flagged in a mask and zeroed, the
//! loader's default bad-pixel policy.

use scatterlab_stem::load::{PixelKind, PixelSlice};
use scatterlab_stem::reduce::pipeline::wavelength_from_kv;

use super::loader::FrameSource;
use super::resident::{Resident, StemCalibration};

/// The example's name in the workspace.
pub const NAME: &str = "built-in example";
/// Scan shape (rows, cols).
pub const SCAN: [usize; 2] = [32, 32];
/// Detector shape (rows, cols).
pub const DET: [usize; 2] = [48, 48];
/// Where the undeflected disc is centred (row, col), pixels.
pub const CENTER: [f64; 2] = [23.6, 24.3];
/// Bright-field disc radius, pixels.
pub const RADIUS: f64 = 7.0;
/// The rotation from scan to detector axes the data were made with, degrees (the DPC rotation
/// that aligns them back).
pub const ROTATION_DEG: f64 = 20.0;
/// Bad pixels (flat indices): two dead (65535) and two hot (5000), all in the mask.
pub const BAD_PIXELS: [(usize, u16); 4] = [(5 * 48 + 40, 65535), (30 * 48 + 7, 65535), (12 * 48 + 12, 5000), (40 * 48 + 33, 5000)];

const VOLTAGE_KV: f64 = 300.0;
const CONVERGENCE_MRAD: f64 = 20.0;
const STEP_A: f64 = 0.3;
/// Counts per frame in the undimmed disc.
const DOSE: f64 = 20000.0;
/// Phase of one atom, radians, and its Gaussian width in scan steps.
const ATOM_PHASE: f64 = 0.6;
const ATOM_SIGMA: f64 = 1.6;
/// Lattice spacing in scan steps and its tilt.
const LATTICE: f64 = 8.0;
const LATTICE_DEG: f64 = 8.0;

/// The calibration the example is made with.
pub fn calibration() -> StemCalibration {
    StemCalibration { convergence_mrad: Some(CONVERGENCE_MRAD), wavelength_a: Some(wavelength_from_kv(VOLTAGE_KV)), scan_step_a: Some(STEP_A), ..Default::default() }
}

/// Empty room for the example's frames.
pub fn resident() -> Result<Resident, String> {
    let mut r = Resident::new(NAME, SCAN, DET, PixelKind::U16, calibration())?;
    r.n_masked = BAD_PIXELS.len();
    Ok(r)
}

/// The phase φ (radians) at scan position (row, col) and its gradient (radians per step).
pub fn phase(row: f64, col: f64) -> (f64, [f64; 2]) {
    let (s, c) = LATTICE_DEG.to_radians().sin_cos();
    let (mut phi, mut g) = (0.0, [0.0, 0.0]);
    for i in -1..=6 {
        for j in -1..=6 {
            // Lattice sites, tilted, offset so atoms sit inside the scan.
            let (u, v) = (LATTICE * (i as f64 + 0.3), LATTICE * (j as f64 + 0.6));
            let (ar, ac) = (c * u - s * v, s * u + c * v);
            let (dr, dc) = (row - ar, col - ac);
            let e = ATOM_PHASE * (-(dr * dr + dc * dc) / (2.0 * ATOM_SIGMA * ATOM_SIGMA)).exp();
            phi += e;
            g[0] -= e * dr / (ATOM_SIGMA * ATOM_SIGMA);
            g[1] -= e * dc / (ATOM_SIGMA * ATOM_SIGMA);
        }
    }
    (phi, g)
}

/// Sample thickness (in absorption lengths) at scan position (row, col): a wedge with a bump.
fn thickness(row: f64, col: f64) -> f64 {
    0.15 + 0.6 * col / SCAN[1] as f64 + 0.1 * (row / 5.0).sin() * (col / 7.0).cos()
}

/// A deterministic standard-normal-ish number for (frame, pixel) (sum of four uniforms).
fn noise(frame: usize, pixel: usize) -> f64 {
    let mut x = (frame as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (pixel as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let mut sum = 0.0;
    for _ in 0..4 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 29;
        sum += (x >> 11) as f64 / (1u64 << 53) as f64;
    }
    (sum - 2.0) * 3f64.sqrt()
}

/// Writes frame `index` (row-major, bad pixels zeroed) into `out`.
pub fn frame(index: usize, out: &mut [u16]) {
    let (row, col) = ((index / SCAN[1]) as f64, (index % SCAN[1]) as f64);
    let (phi, g) = phase(row, col);
    let cal = calibration();
    let dk = cal.dk_inv_a(RADIUS).unwrap_or(1.0);
    let k = 1.0 / (2.0 * std::f64::consts::PI * dk * STEP_A);
    // The detector sees the scan-frame shift turned by −ROTATION_DEG (the rotation undoes it).
    let (s, c) = (-ROTATION_DEG).to_radians().sin_cos();
    let shift = [k * (c * g[0] - s * g[1]), k * (s * g[0] + c * g[1])];
    let centre = [CENTER[0] + shift[0], CENTER[1] + shift[1]];
    let transmitted = (-(thickness(row, col) + 0.8 * phi / ATOM_PHASE)).exp();
    let disc_px = std::f64::consts::PI * RADIUS * RADIUS;
    let ring = (2.0 * RADIUS, 0.4 * RADIUS);
    let ring_px = 2.0 * std::f64::consts::PI * ring.0 * ring.1 * (2.0 * std::f64::consts::PI).sqrt();
    for (p, v) in out.iter_mut().enumerate().take(DET[0] * DET[1]) {
        let (dr, dc) = ((p / DET[1]) as f64 - centre[0], (p % DET[1]) as f64 - centre[1]);
        let d = (dr * dr + dc * dc).sqrt();
        let disc = (RADIUS + 0.5 - d).clamp(0.0, 1.0) * DOSE * transmitted / disc_px;
        let scattered = DOSE * (1.0 - transmitted) * (-(d - ring.0).powi(2) / (2.0 * ring.1 * ring.1)).exp() / ring_px;
        let mean = disc + scattered + 0.02;
        *v = (mean + mean.sqrt() * noise(index, p)).round().clamp(0.0, 65535.0) as u16;
    }
    for (p, raw) in BAD_PIXELS {
        if let Some(v) = out.get_mut(p) {
            *v = raw;
        }
    }
    apply_mask(out);
}

/// Zeroes the masked pixels (the loader's default `ZeroMasked` policy).
fn apply_mask(frame: &mut [u16]) {
    for (p, _) in BAD_PIXELS {
        if let Some(v) = frame.get_mut(p) {
            *v = 0;
        }
    }
}

/// The example's frames, generated batch by batch.
#[derive(Default)]
pub struct ExampleSource {
    next: usize,
    buf: Vec<u16>,
}

impl FrameSource for ExampleSource {
    fn next_batch(&mut self, max_frames: usize) -> Result<Option<(u64, PixelSlice<'_>)>, String> {
        let total = SCAN[0] * SCAN[1];
        let n = max_frames.max(1).min(total - self.next);
        if n == 0 {
            return Ok(None);
        }
        let px = DET[0] * DET[1];
        self.buf.resize(n * px, 0);
        for (i, f) in self.buf.chunks_exact_mut(px).enumerate() {
            frame(self.next + i, f);
        }
        let first = self.next as u64;
        self.next += n;
        Ok(Some((first, PixelSlice::U16(&self.buf))))
    }
}

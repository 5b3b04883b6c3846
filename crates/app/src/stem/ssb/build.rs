//! The SSB page's per-frame work: resolving the inputs (settings over the workspace's probe, DPC
//! rotation and calibration, by the same rules as `scatterlab_stem::ssb::ssb`), gathering the
//! BF stack from the resident frames within a time budget, and reconstructing when the inputs
//! or the aberrations changed.

use std::sync::Arc;
use std::time::Duration;

use scatterlab_core::CancelToken;
use scatterlab_stem::load::PixelSlice;
use scatterlab_stem::ssb::{reconstruct, Aberrations, BfPixels, BfStack, Optics};
use web_time::Instant;

use super::{SsbDevice, SsbResult, StackState};
use crate::stem::StemPanel;

/// Frames added to the stack between budget checks.
const CHUNK: usize = 16;

/// Everything a reconstruction needs besides the aberrations, resolved from the settings and
/// the workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct SsbInputs {
    /// The workspace's data version (a new snapshot or acquisition invalidates the stack).
    pub version: u64,
    /// Beam centre (row, col), px.
    pub center: [f64; 2],
    /// BF radius, px.
    pub bf_radius: f64,
    /// Whether centre and radius are the auto probe's (not overridden).
    pub auto_probe: bool,
    /// Scan rotation θ, degrees (the convention's; θ = −a from DPC).
    pub rotation_deg: f64,
    /// Transposed detector.
    pub transposed: bool,
    /// Where θ came from, in words.
    pub rotation_source: String,
    /// λ, k_α and dk.
    pub optics: Optics,
    /// Convergence semi-angle, mrad.
    pub convergence_mrad: f64,
    /// Scan step, Å.
    pub scan_step_a: f64,
    /// The detector-sampling rule used, in words.
    pub sampling_rule: String,
}

impl SsbInputs {
    /// The key of the stack these inputs need: data version, centre and radius.
    pub(crate) fn stack_key(&self) -> (u64, [u64; 3]) {
        (self.version, [self.center[0].to_bits(), self.center[1].to_bits(), self.bf_radius.to_bits()])
    }
}

fn finite(v: f64, name: &str) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{name}: must be a finite number (got {v})"))
    }
}

/// θ of the SSB convention for the DPC angle `a` (degrees): θ = −a in (−180°, 180°], as
/// `scatterlab_stem::ssb::rotation_from_dpc` reports it.
pub fn theta_from_dpc(a_deg: f64) -> f64 {
    let theta = -a_deg.rem_euclid(360.0);
    if theta <= -180.0 {
        theta + 360.0
    } else {
        theta
    }
}

impl StemPanel {
    /// The SSB inputs now, or why SSB cannot run (naming the missing parameter).
    pub fn ssb_inputs(&self) -> Result<SsbInputs, String> {
        let data = self.data.as_ref().ok_or("no acquisition open")?;
        if self.is_loading() {
            return Err(format!("after loading: SSB uses every frame ({} of {} read)", data.loaded(), data.n_frames()));
        }
        let present = (0..data.n_frames()).filter(|&i| data.is_present(i)).count();
        if present < data.n_frames() {
            return Err(format!("SSB needs every scan position's frame: {present} of {} have data", data.n_frames()));
        }
        if data.scan[0] < 2 || data.scan[1] < 2 {
            return Err(format!("scan shape: SSB needs a 2-D scan of at least 2 × 2 positions (got {} × {})", data.scan[0], data.scan[1]));
        }
        let s = &self.ssb.settings;
        let probe = self.probe;
        let center = match (s.center, probe) {
            (Some(c), _) => [finite(c[0], "beam centre row")?, finite(c[1], "beam centre col")?],
            (None, Some(p)) => p.center,
            (None, None) => return Err("beam centre: no auto probe yet; give it".into()),
        };
        let bf_radius = match (s.bf_radius, probe) {
            (Some(r), _) if !(r.is_finite() && r > 0.0) => return Err(format!("BF radius: must be a positive number (got {r})")),
            (Some(r), _) => r,
            (None, Some(p)) => p.radius,
            (None, None) => return Err("BF radius: no auto probe yet; give it".into()),
        };
        let cal = &data.calibration;
        let missing = |name: &str, how: &str| format!("{name}: not in the file's calibration ({how}); SSB needs it");
        let wavelength = cal.wavelength_a.ok_or_else(|| missing("wavelength", "voltage or wavelength"))?;
        let alpha = cal.convergence_mrad.ok_or_else(|| missing("convergence semi-angle", "mrad"))?;
        let step = cal.scan_step_a.ok_or_else(|| missing("scan step", "Å"))?;
        let sampling = cal.sampling(bf_radius).ok_or("detector sampling: neither the semi-angle nor the file geometry gives it")?;
        let dk = sampling.inv_a_per_px(wavelength).ok_or_else(|| format!("wavelength: {wavelength} Å is not usable"))?;
        let (rotation_deg, transposed, rotation_source) = match s.rotation {
            Some((t, tr)) => (finite(t, "scan rotation")?, tr, "given".to_owned()),
            None => {
                let auto = self.auto_rotation.as_ref().and_then(|r| r.as_ref().ok()).copied();
                let rot = self.rotation.or(auto).ok_or("scan rotation: no DPC rotation yet (it needs the centre of mass after loading); give θ")?;
                let source =
                    format!("dpc: θ = −a, a = {:.3}°{}", rot.degrees, if self.rotation.is_some() { " (set in the DPC column)" } else { " (curl minimum, half turn by the ADF)" });
                (theta_from_dpc(rot.degrees), rot.transpose, source)
            }
        };
        let ab = &s.aberrations;
        finite(ab.c10_nm, "C10")?;
        finite(ab.c12_nm, "C12")?;
        finite(ab.phi12_rad, "phi12")?;
        Ok(SsbInputs {
            version: self.version,
            center,
            bf_radius,
            auto_probe: s.center.is_none() && s.bf_radius.is_none(),
            rotation_deg,
            transposed,
            rotation_source,
            optics: Optics { wavelength_a: wavelength, k_alpha_inv_a: alpha * 1e-3 / wavelength, dk_inv_a_per_px: dk },
            convergence_mrad: alpha,
            scan_step_a: step,
            sampling_rule: format!("{:?}: {} → {dk:.6} Å⁻¹/px", sampling.source, sampling.rule),
        })
    }

    /// The SSB page's work for one frame: gather the stack (within `budget`), then reconstruct
    /// when anything changed — on the CPU at once, on the GPU as a background job that wakes
    /// `repaint` when it lands. Returns whether more work is pending (repaint).
    pub fn update_ssb(&mut self, budget: Duration, repaint: &egui::Context) -> bool {
        self.poll_ssb_fit(budget);
        let inputs = match self.ssb_inputs() {
            Ok(i) => i,
            Err(e) => {
                self.ssb.blocked = Some(e);
                return false;
            }
        };
        self.ssb.blocked = None;
        let Some(data) = &self.data else { return false };
        let key = inputs.stack_key();
        let pixels = || BfPixels::disc(data.det, inputs.center, inputs.bf_radius, inputs.optics.dk_inv_a_per_px, inputs.transposed).map_err(|e| e.to_string());
        if self.ssb.stack.as_ref().is_none_or(|s| s.key != key) {
            match pixels() {
                Ok(p) => self.ssb.stack = Some(StackState { key, frames_done: 0, stack: Arc::new(BfStack::new(p, data.scan, data.det[0] * data.det[1])) }),
                Err(e) => {
                    self.ssb.stack = None;
                    self.ssb.blocked = Some(e);
                    return false;
                }
            }
            self.ssb.result = None;
        }
        let Some(state) = self.ssb.stack.as_mut() else { return false };
        let n = data.n_frames();
        let px = data.det[0] * data.det[1];
        let t0 = Instant::now();
        while state.frames_done < n {
            let end = (state.frames_done + CHUNK).min(n);
            let stack = Arc::make_mut(&mut state.stack);
            if let Err(e) = stack.add(state.frames_done as u64, sub(data.frames(), state.frames_done * px, end * px)) {
                self.ssb.blocked = Some(e.to_string());
                return false;
            }
            state.frames_done = end;
            if t0.elapsed() >= budget {
                return true;
            }
        }
        let (aberrations, device) = (self.ssb.settings.aberrations, self.ssb.settings.device);
        let fresh = self.ssb.result.as_ref().is_some_and(|r| r.inputs == inputs && r.aberrations == aberrations && r.device == device);
        if !fresh {
            // dk and the transpose only move the pixels' k vectors, not their images.
            match pixels() {
                Ok(p) if p != state.stack.pixels => Arc::make_mut(&mut state.stack).pixels = p,
                Ok(_) => {}
                Err(e) => {
                    self.ssb.blocked = Some(e);
                    return false;
                }
            }
            match device {
                SsbDevice::Cpu => self.ssb.result = Some(run_cpu(&state.stack, inputs, aberrations)),
                SsbDevice::Gpu => {
                    if let Some(r) = self.ssb.gpu.pump(repaint, &state.stack, &inputs, aberrations) {
                        self.ssb.result = Some(r);
                    }
                }
            }
        }
        false
    }
}

/// One reconstruction of `stack` on the CPU (f64).
pub fn run_cpu(stack: &BfStack, inputs: SsbInputs, aberrations: Aberrations) -> SsbResult {
    let t0 = Instant::now();
    let phase = reconstruct(stack, &inputs.optics, &aberrations, inputs.scan_step_a, inputs.rotation_deg, &CancelToken::new())
        .map(|o| o.iter().map(|z| z.arg()).collect())
        .map_err(|e| e.to_string());
    SsbResult { scan: stack.scan, inputs, aberrations, phase, elapsed: t0.elapsed(), device: SsbDevice::Cpu }
}

/// Pixels `at..end` of `frames` (empty when out of range).
fn sub(frames: PixelSlice<'_>, at: usize, end: usize) -> PixelSlice<'_> {
    match frames {
        PixelSlice::U8(v) => PixelSlice::U8(v.get(at..end).unwrap_or_default()),
        PixelSlice::U16(v) => PixelSlice::U16(v.get(at..end).unwrap_or_default()),
        PixelSlice::U32(v) => PixelSlice::U32(v.get(at..end).unwrap_or_default()),
        PixelSlice::U64(v) => PixelSlice::U64(v.get(at..end).unwrap_or_default()),
    }
}

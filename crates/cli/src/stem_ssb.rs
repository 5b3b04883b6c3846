//! `scatterlab stem ssb <master.h5> [--center ROW,COL] [--bf R] [--rotation-deg A] [--transpose]
//! [--C10 NM] [--C12 NM] [--phi12 RAD] [--dk INV_A_PER_PX] [--fit [--fit-rotation]] [--device cpu|gpu]
//! --out <dir>`: single-sideband ptychography ([`scatterlab_stem::ssb::ssb`], CPU f64, or with
//! `--device gpu` [`scatterlab_stem::gpu::ssb_gpu`]: the same frame pass and fit, the
//! reconstruction in f32 WGSL; no GPU is an error, never a silent CPU run) with the
//! given aberrations or, with `--fit`, aberrations fitted from the data (the given ones are the
//! start), writing `ssb_object.npy` (complex128 on the CPU, complex64 on the GPU), `ssb_phase.npy`,
//! `ssb_amplitude.npy` (f64 / f32 likewise) and
//! `manifest.json` (aberrations and whether fitted, the fit's levels and loss curve, rotation,
//! sampling rule, BF pixels, provenance).

use std::path::Path;
use std::time::Instant;

use scatterlab_core::{CancelToken, DeviceKind};
use scatterlab_stem::ssb::{ssb, Aberrations, FitOptions, SsbOptions, SsbRecord};

use scatterlab_stem::gpu::ssb_gpu;

use crate::npy::{write_npy, NpyElement};

/// The command's arguments.
pub struct Args<'a> {
    /// Master (or single) file.
    pub master: &'a Path,
    /// `ROW,COL`, px.
    pub center: Option<String>,
    /// BF radius, px.
    pub bf: Option<f64>,
    /// Scan rotation θ, degrees (default: from DPC).
    pub rotation_deg: Option<f64>,
    /// Transposed detector.
    pub transpose: bool,
    /// Defocus, nm.
    pub c10: f64,
    /// Two-fold astigmatism, nm.
    pub c12: f64,
    /// Its angle, rad.
    pub phi12: f64,
    /// Detector sampling, Å⁻¹ per pixel.
    pub dk: Option<f64>,
    /// `ROWS,COLS` scan shape hint.
    pub scan: Option<String>,
    /// Fit the aberrations (the given ones are the start).
    pub fit: bool,
    /// With `fit`: fit the scan rotation too.
    pub fit_rotation: bool,
    /// Device.
    pub device: DeviceKind,
    /// Output folder.
    pub out: &'a Path,
}

fn center(text: &Option<String>) -> Result<Option<[f64; 2]>, String> {
    let Some(t) = text else { return Ok(None) };
    let v: Vec<f64> = t.split(',').map(|s| s.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| format!("--center: expected ROW,COL (got {t:?})"))?;
    match v.as_slice() {
        [r, c] if r.is_finite() && c.is_finite() => Ok(Some([*r, *c])),
        _ => Err(format!("--center: expected two finite numbers ROW,COL (got {t:?})")),
    }
}

/// Writes `ssb_object.npy`, `ssb_phase.npy` and `ssb_amplitude.npy` over a `scan` into `out`.
fn write_products<C: NpyElement, R: NpyElement>(out: &Path, scan: &[usize; 2], object: &[C], phase: &[R], amplitude: &[R]) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    write_npy(&out.join("ssb_object.npy"), scan, object)?;
    write_npy(&out.join("ssb_phase.npy"), scan, phase)?;
    write_npy(&out.join("ssb_amplitude.npy"), scan, amplitude)
}

/// Runs the reconstruction and writes the products.
pub fn run(a: &Args<'_>) -> Result<(), String> {
    let options = SsbOptions {
        center: center(&a.center)?,
        bf_radius: a.bf,
        rotation_deg: a.rotation_deg,
        // Without --transpose: untransposed when the rotation is given, DPC's choice otherwise.
        transposed: if a.transpose { Some(true) } else { a.rotation_deg.map(|_| false) },
        aberrations: Aberrations { c10_nm: a.c10, c12_nm: a.c12, phi12_rad: a.phi12 },
        dk_inv_a_per_px: a.dk,
        fit: a.fit.then(|| FitOptions { fit_rotation: a.fit_rotation, ..Default::default() }),
        ..Default::default()
    };
    let t0 = Instant::now();
    // The adapter before the frames: `--device gpu` without one fails at once.
    let ctx = match a.device {
        DeviceKind::Cpu => None,
        DeviceKind::Gpu => Some(crate::gpu_device::context()?),
    };
    let (files, acq) = crate::stem_open::open(a.master, a.scan.as_deref())?;
    // One bar for the frame passes, then the fit's loss evaluations (no unit: it counts both).
    let mut bar = crate::progress::Bar::new("stem ssb", "");
    let mut progress = |done, total| bar.frames(done, total);
    let cancel = CancelToken::new();
    let written = match &ctx {
        None => ssb(&acq, &files, &options, &mut progress, &cancel).map_err(|e| e.to_string()).and_then(|p| {
            let object: Vec<[f64; 2]> = p.object.iter().map(|z| [z.re, z.im]).collect();
            write_products(a.out, &p.scan, &object, &p.phase(), &p.amplitude()).map(|()| (p.record, p.provenance))
        }),
        Some(ctx) => pollster::block_on(ssb_gpu(ctx, &acq, &files, &options, &mut progress, &cancel)).map_err(|e| e.to_string()).and_then(|p| {
            let object: Vec<[f32; 2]> = p.object.iter().map(|z| [z.re, z.im]).collect();
            write_products(a.out, &p.scan, &object, &p.phase(), &p.amplitude()).map(|()| (p.record, p.provenance))
        }),
    };
    drop(bar);
    let (record, provenance): (SsbRecord, _) = written?;
    let wall_s = t0.elapsed().as_secs_f64();
    // The fit's report (levels, loss curve) once, at the top level, not again inside "ssb".
    let mut r = record;
    let fit = r.fit.take();
    let manifest = serde_json::json!({
        "products": ["ssb_object", "ssb_phase", "ssb_amplitude"],
        "aberrations": {
            "C10_nm": r.aberrations.c10_nm,
            "C12_nm": r.aberrations.c12_nm,
            "phi12_rad": r.aberrations.phi12_rad,
            "fitted": r.fitted,
        },
        "rotation_deg": r.rotation_deg,
        "transposed": r.transposed,
        "ssb": r,
        "fit": fit,
        "device": r.device,
        "wall_s": wall_s,
        "provenance": provenance,
    });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let path = a.out.join("manifest.json");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote ssb_object.npy, ssb_phase.npy, ssb_amplitude.npy and manifest.json to {}", a.out.display());
    println!("{} BF pixels, rotation {:.3}° ({}), detector sampling {}", r.bf_pixels, r.rotation_deg, r.rotation_source, r.sampling_rule);
    if let Some(f) = &fit {
        let ab = &f.aberrations;
        println!(
            "fitted C10 {:.3} nm, C12 {:.3} nm, φ12 {:.3} rad, θ {:.3}° (loss {:.6e}); {} evaluations (grid {}, coarse {}, full {}) on {} threads; {wall_s:.2} s in all",
            ab.c10_nm, ab.c12_nm, ab.phi12_rad, f.rotation_deg, f.loss, f.evaluations, f.levels[0].evaluations, f.levels[1].evaluations, f.levels[2].evaluations, f.threads
        );
    }
    for note in &r.notes {
        println!("note: {note}");
    }
    Ok(())
}

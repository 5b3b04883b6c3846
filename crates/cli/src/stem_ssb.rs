//! `scatterlab stem ssb <master.h5> [--center ROW,COL] [--bf R] [--rotation-deg A] [--transpose]
//! [--C10 NM] [--C12 NM] [--phi12 RAD] [--dk INV_A_PER_PX] [--device cpu] --out <dir>`:
//! single-sideband ptychography with known aberrations ([`scatterlab_stem::ssb::ssb`], CPU f64),
//! writing `ssb_object.npy` (complex128), `ssb_phase.npy`, `ssb_amplitude.npy` and
//! `manifest.json` (aberrations and whether fitted, rotation, sampling rule, BF pixels,
//! provenance).

use std::path::Path;

use scatterlab_core::{CancelToken, DeviceKind};
use scatterlab_stem::ssb::{ssb, Aberrations, SsbOptions};

use crate::npy::write_npy;

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

/// Runs the reconstruction and writes the products.
pub fn run(a: &Args<'_>) -> Result<(), String> {
    if a.device == DeviceKind::Gpu {
        return Err("--device gpu: SSB on the GPU is not yet implemented; use --device cpu".into());
    }
    let options = SsbOptions {
        center: center(&a.center)?,
        bf_radius: a.bf,
        rotation_deg: a.rotation_deg,
        // Without --transpose: untransposed when the rotation is given, DPC's choice otherwise.
        transposed: if a.transpose { Some(true) } else { a.rotation_deg.map(|_| false) },
        aberrations: Aberrations { c10_nm: a.c10, c12_nm: a.c12, phi12_rad: a.phi12 },
        dk_inv_a_per_px: a.dk,
        ..Default::default()
    };
    let (files, acq) = crate::stem_open::open(a.master, a.scan.as_deref())?;
    let products = ssb(&acq, &files, &options, &mut |_, _| {}, &CancelToken::new()).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(a.out).map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let shape = products.scan.to_vec();
    let object: Vec<[f64; 2]> = products.object.iter().map(|z| [z.re, z.im]).collect();
    write_npy(&a.out.join("ssb_object.npy"), &shape, &object)?;
    write_npy(&a.out.join("ssb_phase.npy"), &shape, &products.phase())?;
    write_npy(&a.out.join("ssb_amplitude.npy"), &shape, &products.amplitude())?;
    let r = &products.record;
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
        "provenance": products.provenance,
    });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let path = a.out.join("manifest.json");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote ssb_object.npy, ssb_phase.npy, ssb_amplitude.npy and manifest.json to {}", a.out.display());
    println!("{} BF pixels, rotation {:.3}° ({}), detector sampling {}", r.bf_pixels, r.rotation_deg, r.rotation_source, r.sampling_rule);
    for note in &r.notes {
        println!("note: {note}");
    }
    Ok(())
}

//! `scatterlab stem reduce <master.h5> [--center ROW,COL] [--bf R] [--adf INNER,OUTER] [--mrad] [--bin K]
//! [--device cpu|gpu] --out <dir>`: every product of [`scatterlab_stem::reduce::reduce`] as one `.npy`
//! per product (named like the datasets of `<prefix>_reference.h5`) and `manifest.json` with the
//! geometry, `rotation_deg`, `use_transpose` and the provenance.

use std::path::Path;

use scatterlab_core::{CancelToken, DeviceKind};
use scatterlab_stem::reduce::{reduce, RadiusUnit, ReduceDevice, ReduceOptions};

use crate::npy::write_npy;

fn pair(text: &Option<String>, what: &str) -> Result<Option<[f64; 2]>, String> {
    let Some(t) = text else { return Ok(None) };
    let v: Vec<f64> = t.split(',').map(|s| s.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| format!("--{what}: expected two numbers A,B (got {t:?})"))?;
    match v.as_slice() {
        [a, b] if a.is_finite() && b.is_finite() => Ok(Some([*a, *b])),
        _ => Err(format!("--{what}: expected two finite numbers A,B (got {t:?})")),
    }
}

/// The command's arguments.
pub struct Args<'a> {
    /// Master (or single) file.
    pub master: &'a Path,
    /// `ROW,COL`.
    pub center: Option<String>,
    /// BF radius, px.
    pub bf: Option<f64>,
    /// `INNER,OUTER`, px.
    pub adf: Option<String>,
    /// `bf` and `adf` are in mrad.
    pub mrad: bool,
    /// Bin factor.
    pub bin: Option<usize>,
    /// Reduce the frames present when data files are missing.
    pub allow_missing: bool,
    /// `ROWS,COLS` scan shape hint.
    pub scan: Option<String>,
    /// Device.
    pub device: DeviceKind,
    /// Output folder.
    pub out: &'a Path,
}

/// Runs the reduction and writes the products.
pub fn run(a: &Args<'_>) -> Result<(), String> {
    if a.bf.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err("--bf: the BF radius must be a positive number".into());
    }
    if a.bin.is_some_and(|k| k < 2) {
        return Err("--bin: the bin factor must be 2 or more (leave it out for no binning)".into());
    }
    let radius_unit = if a.mrad { RadiusUnit::Mrad } else { RadiusUnit::Px };
    let options = ReduceOptions {
        center: pair(&a.center, "center")?,
        bf_radius: a.bf,
        adf: pair(&a.adf, "adf")?,
        bin: a.bin,
        radius_unit,
        allow_missing: a.allow_missing,
        ..Default::default()
    };
    let (files, acq) = crate::stem_open::open(a.master, a.scan.as_deref())?;
    if let Some(missing) = crate::stem_open::missing_summary(&acq) {
        if !a.allow_missing {
            return Err(format!("{}: {missing}; --allow-missing reduces the frames present", acq.master()));
        }
        eprintln!("scatterlab: {}: {missing}; reducing the frames present (NaN / 0 at the missing positions, see present.npy)", acq.master());
    }
    let ctx = match a.device {
        DeviceKind::Cpu => None,
        DeviceKind::Gpu => Some(crate::gpu_device::context()?),
    };
    let device = ctx.as_ref().map_or(ReduceDevice::Cpu, ReduceDevice::Gpu);
    let products = pollster::block_on(reduce(&acq, &files, &options, device, &mut crate::progress::frames("stem reduce"), &CancelToken::new())).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(a.out).map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let mut written = Vec::new();
    for (name, shape, values) in &products.integers {
        write_npy(&a.out.join(format!("{name}.npy")), shape, values)?;
        written.push(name.clone());
    }
    for (name, shape, values) in &products.reals {
        write_npy(&a.out.join(format!("{name}.npy")), shape, values)?;
        written.push(name.clone());
    }
    if a.allow_missing {
        let scan = acq.scan_shape().map_err(|e| e.to_string())?;
        write_npy(&a.out.join("present.npy"), &[scan.rows, scan.cols], &products.present)?;
        written.push("present".into());
    }
    let manifest = serde_json::json!({
        "products": written,
        "rotation_deg": products.record.rotation_deg,
        "use_transpose": products.record.use_transpose,
        "reduction": products.record,
        "provenance": products.provenance,
    });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let path = a.out.join("manifest.json");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote {} products and manifest.json to {}", written.len(), a.out.display());
    for note in &products.record.notes {
        println!("note: {note}");
    }
    if let Some(s) = &products.record.detector_sampling {
        println!("detector sampling: {:.4} mrad/px ({})", s.mrad_per_px, s.rule);
    }
    Ok(())
}

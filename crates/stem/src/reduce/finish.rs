//! Everything a reduction computes after its fused pass — the detector geometry resolved from the
//! options (and the probe), then CoM field, DPC rotation, iDPC, binning and the product list — in
//! one place, so [`reduce`](super::reduce) (one pass in this process) and a reduction split over
//! frame ranges ([`super::partial`], e.g. Dask workers through the Python extension) give the
//! same products from the same code.

use super::detector::mrad_to_px;
use super::idpc::{idpc_physical, resolve_half_turn};
use super::pipeline::{wavelength_from_kv, Products, RadiusUnit, ReduceOptions, ReduceRecord};
use super::{center_of_mass, find_rotation, FusedResult, Probe, ReduceError, RotationOptions, VirtualDetector};
use crate::load::{bin_frame, Acquisition, LoadProvenance};
use crate::sampling::detector_sampling;

/// The detector geometry of a reduction, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Beam centre (row, col).
    pub center: [f64; 2],
    /// Bright-field radius.
    pub bf_radius: f64,
    /// ADF inner and outer radii.
    pub adf: [f64; 2],
    /// Whether centre or radius came from [`super::auto_probe`].
    pub auto_probe: bool,
}

impl Geometry {
    /// The standard detectors (BF, ABF, ADF, DF) of this geometry.
    pub fn detectors(&self) -> Vec<VirtualDetector> {
        VirtualDetector::standard(self.center, self.bf_radius, self.adf)
    }
}

/// Whether `options` need the probe measured from the mean pattern (a first pass over the data).
pub fn needs_probe(options: &ReduceOptions) -> bool {
    options.center.is_none() || options.bf_radius.is_none() || options.radius_unit == RadiusUnit::Mrad
}

/// The geometry of `options` on `acq`, with `probe` measured when [`needs_probe`] says so.
pub fn resolve_geometry(acq: &Acquisition, options: &ReduceOptions, probe: Option<&Probe>) -> Result<Geometry, ReduceError> {
    let mrad = options.radius_unit == RadiusUnit::Mrad;
    if needs_probe(options) && probe.is_none() {
        return Err(ReduceError::new("reduction geometry", "the beam centre and BF radius (in pixels) are needed, or the probe measured from the mean pattern"));
    }
    if mrad && acq.calibration().convergence_mrad.is_none() {
        return Err(ReduceError::new("radii in mrad", "need the convergence semi-angle, which the file does not give; give the radii in pixels"));
    }
    // Radii in mrad convert with the measured disc (the BF of α mrad is the disc itself).
    let measured = probe.map(|p| p.radius);
    let to_px = |v: f64, what: &str| if mrad { mrad_to_px(v, detector_sampling(acq.calibration(), measured).map(|s| s.mrad_per_px), what) } else { Ok(v) };
    let center = options.center.or(probe.map(|p| p.center)).unwrap_or([0.0; 2]);
    let radius = match options.bf_radius {
        Some(r) => to_px(r, "BF radius")?,
        None => probe.map_or(0.0, |p| p.radius),
    };
    let adf = match options.adf {
        Some([a, b]) => [to_px(a, "ADF inner radius")?, to_px(b, "ADF outer radius")?],
        None => [1.2 * radius, 2.5 * radius],
    };
    Ok(Geometry { center, bf_radius: radius, adf, auto_probe: probe.is_some() && (options.center.is_none() || options.bf_radius.is_none()) })
}

/// The products of `fused` (every frame of `acq` accumulated with `geometry.detectors()`):
/// `notes` so far, the `device` that ran the pass and the data's `provenance` go into the record.
pub fn finish(
    acq: &Acquisition,
    options: &ReduceOptions,
    geometry: &Geometry,
    fused: FusedResult,
    mut notes: Vec<String>,
    device: String,
    provenance: LoadProvenance,
) -> Result<Products, ReduceError> {
    let scan = acq.scan_shape().map_err(|e| ReduceError::new("scan shape", e.to_string()))?;
    let scan = [scan.rows, scan.cols];
    let det = acq.det_shape();
    let present = acq.present_frames();
    let Geometry { center, bf_radius: radius, adf, auto_probe: auto } = *geometry;
    let bin = options.bin.filter(|&k| k > 1);
    let binned = match bin {
        Some(k) => Some(bin_frame::<u64, u64>(&fused.sum_dp, det, k).map_err(|e| ReduceError::new("detector binning", e.to_string()))?),
        None => None,
    };
    let mut reals = vec![("mean_dp".to_owned(), det.to_vec(), fused.mean_dp())];
    let mut fused = fused;
    fused.mark_absent(&present);
    let com = center_of_mass(&fused.com_raw, scan)?;
    reals.push(("com_row_raw".into(), scan.to_vec(), fused.com_raw[0].clone()));
    reals.push(("com_col_raw".into(), scan.to_vec(), fused.com_raw[1].clone()));
    reals.push(("com_row".into(), scan.to_vec(), com.r.clone()));
    reals.push(("com_col".into(), scan.to_vec(), com.c.clone()));
    let cal = acq.calibration();
    let wavelength = cal.wavelength_a.or_else(|| cal.voltage_kv.map(wavelength_from_kv));
    let sampling = detector_sampling(cal, (radius > 0.0).then_some(radius));
    if let Some(w) = sampling.as_ref().and_then(|s| s.warning.clone()) {
        notes.push(w);
    }
    let dk = sampling.as_ref().zip(wavelength).and_then(|(s, l)| s.inv_a_per_px(l));
    let (mut rotation_deg, mut use_transpose) = (None, None);
    match find_rotation(&com, &RotationOptions::default()) {
        Ok(rot) => {
            let adf_image: Vec<f64> = fused.detector("adf").unwrap_or(&[]).iter().zip(&present).map(|(&v, &p)| if p { v as f64 } else { f64::NAN }).collect();
            let mut deg = rot.fine_deg;
            match (dk, cal.scan_step_a) {
                (Some(dk), Some(step)) => match idpc_physical(&com.rotated(deg, rot.transpose), dk, step) {
                    Ok(mut phase) => {
                        if resolve_half_turn(&phase, &adf_image) {
                            phase.iter_mut().for_each(|v| *v = -*v);
                            deg += 180.0;
                        }
                        reals.push(("idpc".into(), scan.to_vec(), phase));
                    }
                    Err(e) => notes.push(format!("idpc: {e}")),
                },
                _ => {
                    notes.push("idpc: needs the detector sampling (convergence semi-angle or file geometry), the wavelength (or voltage) and the scan step; not in the file".into())
                }
            }
            let aligned = com.rotated(deg, rot.transpose);
            reals.push(("dpc_row_aligned".into(), scan.to_vec(), aligned.r));
            reals.push(("dpc_col_aligned".into(), scan.to_vec(), aligned.c));
            rotation_deg = Some(deg);
            use_transpose = Some(rot.transpose);
        }
        Err(e) => notes.push(format!("DPC: {e}")),
    }
    let mut integers = vec![
        ("sum_dp".to_owned(), det.to_vec(), fused.sum_dp.clone()),
        ("max_dp".to_owned(), det.to_vec(), fused.max_dp.clone()),
        ("total".to_owned(), scan.to_vec(), fused.total.clone()),
    ];
    for (name, _, values) in &fused.detectors {
        integers.push((name.clone(), scan.to_vec(), values.clone()));
    }
    if let (Some(k), Some((shape, b))) = (bin, binned) {
        integers.push((format!("bin{k}_sum_dp"), shape.to_vec(), b));
    }
    let scan_present: Vec<bool> = (0..scan[0] * scan[1]).map(|i| present.get(i).copied().unwrap_or(false)).collect();
    Ok(Products {
        integers,
        reals,
        present: scan_present,
        record: ReduceRecord {
            center_row_col: center,
            auto_probe: auto,
            bf_radius_px: radius,
            adf_px: adf,
            detector_pixels: fused.detectors.iter().map(|(n, p, _)| (n.clone(), *p)).collect(),
            rotation_deg,
            use_transpose,
            sampling_mrad_per_px: sampling.as_ref().map(|s| s.mrad_per_px),
            detector_sampling: sampling,
            dk_inv_a_per_px: dk,
            frames_total: acq.n_frames(),
            frames_missing: acq.n_missing_frames(),
            missing_files: acq.missing().iter().map(|m| m.file.clone()).collect(),
            notes,
            accumulation: "u64 integer sums, u128 centre-of-mass moments, f64 reals".into(),
            device,
            version: format!("scatterlab-stem {}", crate::VERSION),
        },
        provenance,
    })
}

//! Detector sampling (mrad and Å⁻¹ per detector pixel): one rule for `stem info`, `stem
//! reduce`'s manifest and the app's scale bars and iDPC.
//!
//! The rule, in order: a sampling the caller states ([`crate::load::Hints`]) wins; else the
//! probe's convergence semi-angle over the BF disc radius measured in the data (the disc's edge
//! *is* the semi-angle, whatever the projector lenses did); else the file's geometry (pixel size
//! over detector distance, which on a 4D-STEM camera is often a nominal value). When the
//! measured disc and the file's geometry are both known and disagree by more than
//! [`DISAGREEMENT`], the result carries a warning naming both.

use serde::Serialize;

use crate::load::meta::PLAUSIBLE_DET_SAMPLING_MRAD;
use crate::load::Calibration;

/// Relative difference between the measured-disc and file-geometry samplings above which a
/// warning is given.
pub const DISAGREEMENT: f64 = 0.05;

/// Where a detector sampling came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingSource {
    /// Given by the caller (a hint or option).
    Given,
    /// Convergence semi-angle over the measured BF disc radius.
    SemiAngleOverDisc,
    /// Pixel size over detector distance, from the file.
    FileGeometry,
}

/// The detector sampling in use, with its source and any disagreement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorSampling {
    /// mrad per detector pixel.
    pub mrad_per_px: f64,
    /// Where it came from.
    pub source: SamplingSource,
    /// The rule with its numbers, for people (e.g. "convergence semi-angle 20 mrad / measured BF
    /// radius 9.508 px").
    pub rule: String,
    /// The file's geometry (pixel size / distance), mrad per pixel (row, col), when it has one.
    pub file_geometry_mrad_per_px: Option<[f64; 2]>,
    /// Set when the measured disc and the file's geometry disagree by more than [`DISAGREEMENT`].
    pub warning: Option<String>,
}

impl DetectorSampling {
    /// Å⁻¹ per detector pixel for an electron wavelength in Å (`θ / λ`, small angles).
    pub fn inv_a_per_px(&self, wavelength_a: f64) -> Option<f64> {
        (wavelength_a.is_finite() && wavelength_a > 0.0).then(|| self.mrad_per_px * 1e-3 / wavelength_a)
    }
}

/// The sampling of an acquisition with calibration `cal` and BF disc radius `bf_radius_px`
/// (measured or given; `None` when unknown), by the rule above; `None` when nothing gives one.
pub fn detector_sampling(cal: &Calibration, bf_radius_px: Option<f64>) -> Option<DetectorSampling> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let hinted = cal.from_hints.contains(&"det_sampling_mrad");
    // The file's geometry within the physical range only (a damaged pixel size of 1e308 m once gave an infinite,
    // null-in-JSON file_geometry_mrad_per_px); the acquisition has already warned about it.
    let plausible = |v: f64| v.is_finite() && *PLAUSIBLE_DET_SAMPLING_MRAD.start() < v && v <= *PLAUSIBLE_DET_SAMPLING_MRAD.end();
    let geometry = match (cal.pixel_size_m, cal.detector_distance_m) {
        (Some([pr, pc]), Some(d)) if positive(pr) && positive(pc) && positive(d) => Some([1e3 * pr / d, 1e3 * pc / d]),
        _ => None,
    }
    .filter(|[r, c]| plausible(*r) && plausible(*c));
    if hinted {
        let [r, c] = cal.det_sampling_mrad.filter(|[r, c]| positive(*r) && positive(*c))?;
        return Some(DetectorSampling {
            mrad_per_px: 0.5 * (r + c),
            source: SamplingSource::Given,
            rule: format!("given: {r} × {c} mrad/px (row × col)"),
            file_geometry_mrad_per_px: geometry,
            warning: None,
        });
    }
    let disc = match (cal.convergence_mrad, bf_radius_px) {
        (Some(a), Some(r)) if positive(a) && positive(r) => Some((a / r, format!("convergence semi-angle {a} mrad / BF disc radius {r:.4} px"))),
        _ => None,
    };
    match (disc, geometry) {
        (Some((m, rule)), g) => {
            let warning = g.map(|[gr, gc]| 0.5 * (gr + gc)).filter(|g| (g - m).abs() > DISAGREEMENT * m).map(|g| {
                format!("detector sampling: the file's geometry (pixel size / detector distance) gives {g:.4} mrad/px, the convergence semi-angle over the measured BF disc {m:.4} mrad/px ({:.0} % apart); using the measured disc", 100.0 * (g - m).abs() / m)
            });
            Some(DetectorSampling { mrad_per_px: m, source: SamplingSource::SemiAngleOverDisc, rule, file_geometry_mrad_per_px: g, warning })
        }
        (None, Some([gr, gc])) => Some(DetectorSampling {
            mrad_per_px: 0.5 * (gr + gc),
            source: SamplingSource::FileGeometry,
            rule: format!("file geometry: pixel size / detector distance = {gr:.4} × {gc:.4} mrad/px (row × col)"),
            file_geometry_mrad_per_px: geometry,
            warning: None,
        }),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal() -> Calibration {
        Calibration { convergence_mrad: Some(20.0), pixel_size_m: Some([75e-6; 2]), detector_distance_m: Some(0.075), ..Default::default() }
    }

    #[test]
    fn measured_disc_wins_and_disagreement_is_named() {
        let s = detector_sampling(&cal(), Some(9.5)).unwrap();
        assert_eq!(s.source, SamplingSource::SemiAngleOverDisc);
        assert!((s.mrad_per_px - 20.0 / 9.5).abs() < 1e-12);
        assert_eq!(s.file_geometry_mrad_per_px, Some([1.0, 1.0]));
        let w = s.warning.clone().unwrap();
        assert!(w.contains("1.0000 mrad/px") && w.contains("2.1053 mrad/px"), "{w}");
        assert!((s.inv_a_per_px(0.0196875).unwrap() - 0.106934).abs() < 1e-5);
    }

    #[test]
    fn geometry_without_disc_and_agreement_without_warning() {
        let s = detector_sampling(&cal(), None).unwrap();
        assert_eq!((s.source, s.mrad_per_px), (SamplingSource::FileGeometry, 1.0));
        let s = detector_sampling(&cal(), Some(20.0 / 1.04)).unwrap();
        assert!(s.warning.is_none(), "4 % apart is within the 5 % tolerance");
        let none = Calibration::default();
        assert!(detector_sampling(&none, Some(9.5)).is_none());
        let given = Calibration { det_sampling_mrad: Some([2.0, 2.0]), from_hints: vec!["det_sampling_mrad"], ..cal() };
        assert_eq!(detector_sampling(&given, Some(9.5)).unwrap().source, SamplingSource::Given);
    }
}

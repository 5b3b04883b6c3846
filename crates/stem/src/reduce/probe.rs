//! The probe (beam centre and bright-field radius) from the mean diffraction pattern: pixels
//! above mean + std are the disc; its centroid is the centre and `sqrt(area/π)` the radius (the
//! fixtures' `auto_probe` rule).

use super::ReduceError;

/// A bright-field disc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// Centre (row, col), pixels.
    pub center: [f64; 2],
    /// Radius, pixels.
    pub radius: f64,
}

/// The probe of a `det` = (rows, cols) mean pattern.
pub fn auto_probe(mean_dp: &[f64], det: [usize; 2]) -> Result<Probe, ReduceError> {
    let n = mean_dp.len();
    if n == 0 || n != det[0] * det[1] || mean_dp.iter().any(|v| !v.is_finite()) {
        return Err(ReduceError::new("auto_probe", format!("needs a finite {}×{} mean pattern (got {n} values)", det[0], det[1])));
    }
    let mean = mean_dp.iter().sum::<f64>() / n as f64;
    let std = (mean_dp.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    let threshold = mean + std;
    let (mut area, mut sr, mut sc) = (0usize, 0.0, 0.0);
    for (i, &v) in mean_dp.iter().enumerate() {
        if v > threshold {
            area += 1;
            sr += (i / det[1]) as f64;
            sc += (i % det[1]) as f64;
        }
    }
    if area == 0 {
        return Err(ReduceError::new("auto_probe", "no pixel of the mean pattern lies above mean + std (a flat pattern has no bright-field disc)"));
    }
    Ok(Probe { center: [sr / area as f64, sc / area as f64], radius: (area as f64 / std::f64::consts::PI).sqrt() })
}

/// Most frames [`sample_probe`] reads: enough that the disc of a small scan is measured from
/// every frame (then it equals the reduction's), few enough that `stem info` stays quick.
pub const PROBE_SAMPLE_FRAMES: usize = 256;

/// The probe of the mean of up to `max_frames` present frames spread evenly over `acq` (every
/// present frame when there are no more), bad pixels zeroed; returns it with the frames read.
pub fn sample_probe(acq: &crate::load::Acquisition, max_frames: usize) -> Result<(Probe, usize), ReduceError> {
    let present: Vec<u64> = acq.present_frames().iter().enumerate().filter(|(_, &p)| p).map(|(i, _)| i as u64).collect();
    let k = present.len().min(max_frames.max(1));
    if k == 0 {
        return Err(ReduceError::new("auto_probe", format!("{} has no frame to measure the probe on", acq.master())));
    }
    let det = acq.det_shape();
    let mut sum = vec![0.0; det[0] * det[1]];
    for i in 0..k {
        let f = present[i * present.len() / k];
        let frame = acq.frame_at(f, &crate::load::ReadOptions::default()).map_err(|e| ReduceError::new(acq.master(), e.to_string()))?;
        for (s, v) in sum.iter_mut().zip(frame.data.to_u64()) {
            *s += v as f64;
        }
    }
    sum.iter_mut().for_each(|s| *s /= k as f64);
    Ok((auto_probe(&sum, det)?, k))
}

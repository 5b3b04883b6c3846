//! diffBloch's coupled beam sets of a frame (`preprocess/coupling.py`: per-tilt, or unions over
//! tilt chunks split by adaptive bisection or into fixed even chunks) and the Klar (2023) scored
//! set (`preprocess/steps/beams.py::klar_beam_mask`).

use super::super::experiment::{CouplingMode, ExperimentConfig};
use super::super::pets::CollectionGeometry;
use crate::beams::{excitation_error, g_vector, norm, Hkl, Mat3};
use crate::frame::Segment;

/// diffBloch's `build_coupling_segments` for one frame: lab basis `basis` of the untilted
/// orientation, tilts `tilts`, wavevector `k`.
pub(super) fn coupling_segments(config: &ExperimentConfig, grid: &[Hkl], basis: &Mat3, tilts: &[Mat3], k: f64) -> Vec<Segment> {
    let bw = &config.blochwave;
    // |g| is tilt-invariant, so the radial cut is taken once, in the orientation metric.
    let pool: Vec<(Hkl, [f64; 3])> = grid.iter().map(|&h| (h, g_vector(h, basis))).filter(|(_, g)| norm(*g) < bw.g_max).collect();
    let mut cache: Vec<Option<Vec<bool>>> = vec![None; tilts.len()];
    let mut excited = |j: usize| -> Vec<bool> {
        if let Some(mask) = &cache[j] {
            return mask.clone();
        }
        let t = &tilts[j];
        // g at tilt j = T_j · g (lab column vectors): diffBloch's g_nominal @ T_jᵀ.
        let mask: Vec<bool> = pool
            .iter()
            .map(|(_, g)| {
                let gt: [f64; 3] = std::array::from_fn(|r| t[r][0] * g[0] + t[r][1] * g[1] + t[r][2] * g[2]);
                excitation_error(gt, k).abs() < bw.sg_max
            })
            .collect();
        cache[j] = Some(mask.clone());
        mask
    };
    let beams = |mask: &[bool]| -> Vec<Hkl> {
        let mut hkl: Vec<Hkl> = pool.iter().zip(mask).filter(|(_, m)| **m).map(|((h, _), _)| *h).collect();
        hkl.sort_unstable();
        hkl
    };
    let or = |a: &[bool], b: &[bool]| -> Vec<bool> { a.iter().zip(b).map(|(x, y)| *x || *y).collect() };
    let n = tilts.len();
    match bw.coupling_mode {
        CouplingMode::PerTilt => (0..n).map(|j| Segment { hkl: beams(&excited(j)), tilts: vec![j] }).collect(),
        CouplingMode::Union if bw.union_adaptive => {
            // Recursive bisection: split (a, b) at its midpoint while the midpoint's excited set
            // adds more than union_max_new_beams_pct new beams to the boundary union.
            let mut ranges = Vec::new();
            if n <= 1 {
                ranges.push((0, n.saturating_sub(1)));
            } else {
                let mut stack = vec![(0, n - 1)];
                while let Some((a, b)) = stack.pop() {
                    if b <= a + 1 {
                        ranges.push((a, b));
                        continue;
                    }
                    let mid = (a + b) / 2;
                    let mut union_end = or(&excited(a), &excited(b));
                    if !union_end.iter().any(|&m| m) {
                        union_end = or(&union_end, &excited(mid));
                    }
                    let new = excited(mid).iter().zip(&union_end).filter(|(m, u)| **m && !**u).count();
                    let total = union_end.iter().filter(|&&u| u).count().max(1);
                    if new as f64 / total as f64 > bw.union_max_new_beams_pct {
                        stack.push((mid + 1, b));
                        stack.push((a, mid));
                    } else {
                        ranges.push((a, b));
                    }
                }
                ranges.sort_unstable();
            }
            ranges.into_iter().map(|(a, b)| Segment { hkl: beams(&or(&excited(a), &excited(b))), tilts: (a..=b).collect() }).collect()
        }
        CouplingMode::Union => {
            let boundaries = fixed_boundaries(n, bw.fixed_n_segments);
            let last = boundaries.len().saturating_sub(2);
            (0..boundaries.len().saturating_sub(1))
                .map(|i| {
                    let (a, b) = (boundaries[i], boundaries[i + 1]);
                    let cover = if i == last { (a..n).collect() } else { (a..b).collect() };
                    Segment { hkl: beams(&or(&excited(a), &excited(b))), tilts: cover }
                })
                .collect()
        }
    }
}

/// diffBloch's `_fixed_segment_ranges`: even chunks, remainder first, last boundary n − 1.
fn fixed_boundaries(n: usize, segments: usize) -> Vec<usize> {
    let segments = segments.max(1);
    let mut boundaries: Vec<usize> = if segments >= n {
        (0..n).collect()
    } else {
        let (base, extra) = (n / segments, n % segments);
        let mut acc = vec![0];
        for i in 0..segments {
            acc.push(acc[i] + base + usize::from(i < extra));
        }
        if let Some(last) = acc.last_mut() {
            *last = n - 1;
        }
        acc
    };
    boundaries.sort_unstable();
    boundaries.dedup();
    if boundaries.len() < 2 {
        boundaries = vec![0, n.saturating_sub(1)];
    }
    boundaries
}

/// The Klar (2023) scored set of one frame (sorted), with 000.
pub(super) fn klar_set(config: &ExperimentConfig, seed: &[Hkl], basis: &Mat3, k: f64, semiangle_deg: f64, geometry: CollectionGeometry) -> Vec<Hkl> {
    let bw = &config.blochwave;
    let mut out: Vec<Hkl> = seed
        .iter()
        .copied()
        .filter(|&h| {
            if h == [0, 0, 0] {
                return true;
            }
            let g = g_vector(h, basis);
            // Distance from the rock axis (x) for rotation, from the beam (−z) for precession.
            let lever = match geometry {
                CollectionGeometry::ContinuousRotation => (g[1] * g[1] + g[2] * g[2]).sqrt(),
                CollectionGeometry::Precession => (g[0] * g[0] + g[1] * g[1]).sqrt(),
            };
            let sg = excitation_error(g, k).abs();
            let sg_lever = lever * semiangle_deg.to_radians();
            let relative = if sg_lever > 0.0 { sg / sg_lever } else { f64::INFINITY };
            relative < bw.rsg && sg_lever - sg > bw.dsg
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_boundaries_follow_diffbloch() {
        assert_eq!(fixed_boundaries(21, 12), vec![0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 19, 20]);
        assert_eq!(fixed_boundaries(5, 12), vec![0, 1, 2, 3, 4]);
        assert_eq!(fixed_boundaries(1, 3), vec![0, 0]);
    }
}

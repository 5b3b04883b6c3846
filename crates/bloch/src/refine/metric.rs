//! diffBloch 0.2.0rc1's agreement metrics (`core/losses.py`, `engine/forward.py`), per frame and
//! averaged over frames:
//! - wR2 (Klar et al. 2023): sqrt(Σ w²(I_c − I_o)² / Σ w² I_o²) with
//!   w = 1/sqrt(σ(√I_o)² + (μ√I_o)²), μ = 0.01, σ(√I_o) = σ/(2√I_o), or 5√σ for weak
//!   reflections (I_o < 0.01 σ); √I_o is taken of max(I_o, 1e-12).
//! - R_obs: Σ|√I_o − √I_c| / Σ√I_o over I_o > 3σ (negative values clamped to 0 under the roots).
//! - Each metric is taken at its own optimal intensity scale, found as diffBloch finds it: the
//!   minimum over the 100 scales linspace(0.02, 2, 100) × Σ I_o / Σ I_c (`optimal_scale`). The grid
//!   is coarse (2 % steps), and its minimum is what diffBloch reports, so it is reproduced rather
//!   than replaced by the continuous optimum.
//! - The experiment's value is the mean over frames of the per-frame values (frames whose value is
//!   not finite, e.g. no scored reflection, are left out of the mean, as diffBloch's objective does).

/// diffBloch's instability factor μ of the wR2 weights.
pub const MU: f64 = 0.01;
/// Scales tried by diffBloch's `optimal_scale`, relative to Σ I_o / Σ I_c.
pub const SCALE_GRID: (f64, f64, usize) = (0.02, 2.0, 100);

/// The wR2 weights w of observed intensities `observed` with uncertainties `sigmas`.
pub fn wr2_weights(observed: &[f64], sigmas: &[f64], mu: f64) -> Vec<f64> {
    observed
        .iter()
        .zip(sigmas)
        .map(|(&o, &s)| {
            let sqrt_obs = o.max(1e-12).sqrt();
            let sigma_sqrt = if o < 0.01 * s { 5.0 * s.sqrt() } else { 0.5 * s / sqrt_obs };
            1.0 / (sigma_sqrt * sigma_sqrt + (mu * sqrt_obs) * (mu * sqrt_obs)).sqrt()
        })
        .collect()
}

/// wR2 of `calculated` against `observed` (no scaling).
pub fn wr2(calculated: &[f64], observed: &[f64], sigmas: &[f64]) -> f64 {
    let w = wr2_weights(observed, sigmas, MU);
    let (mut num, mut den) = (0.0, 0.0);
    for ((&c, &o), &w) in calculated.iter().zip(observed).zip(&w) {
        num += (w * (c - o)) * (w * (c - o));
        den += (w * o) * (w * o);
    }
    (num / den).sqrt()
}

/// R_obs of `calculated` against `observed` over I_o > 3σ (no scaling).
pub fn r_obs(calculated: &[f64], observed: &[f64], sigmas: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for ((&c, &o), &s) in calculated.iter().zip(observed).zip(sigmas) {
        if o > 3.0 * s {
            let (so, sc) = (o.max(0.0).sqrt(), c.max(0.0).sqrt());
            num += (so - sc).abs();
            den += so;
        }
    }
    num / den
}

/// A metric at its grid-optimal scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaled {
    /// The absolute scale applied to the calculated intensities.
    pub scale: f64,
    /// The metric's value there.
    pub value: f64,
}

/// diffBloch's `optimal_scale`: `metric` minimised over the scales
/// linspace(0.02, 2, 100) · Σ I_o / Σ I_c (the first minimum on ties, as `torch.min`).
pub fn optimal_scale(calculated: &[f64], observed: &[f64], sigmas: &[f64], metric: fn(&[f64], &[f64], &[f64]) -> f64) -> Scaled {
    let ratio = observed.iter().sum::<f64>() / calculated.iter().sum::<f64>();
    let (lo, hi, n) = SCALE_GRID;
    let step = (hi - lo) / (n - 1) as f64;
    let mut best = Scaled { scale: f64::NAN, value: f64::NAN };
    let mut scaled = vec![0.0; calculated.len()];
    for i in 0..n {
        // numpy/torch linspace: start + i·step, the last point exactly `hi`.
        let factor = if i == n - 1 { hi } else { lo + i as f64 * step };
        let scale = factor * ratio;
        scaled.iter_mut().zip(calculated).for_each(|(s, c)| *s = scale * c);
        let value = metric(&scaled, observed, sigmas);
        // torch.min propagates NaN; a NaN anywhere makes the frame's value NaN.
        if value.is_nan() {
            return Scaled { scale, value };
        }
        if best.value.is_nan() || value < best.value {
            best = Scaled { scale, value };
        }
    }
    best
}

/// One frame's agreement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameMetrics {
    /// wR2 at its optimal scale.
    pub wr2: Scaled,
    /// R_obs at its optimal scale.
    pub r_obs: Scaled,
    /// Number of scored reflections.
    pub n: usize,
}

/// wR2 and R_obs of one frame, each at its own optimal scale.
pub fn frame_metrics(calculated: &[f64], observed: &[f64], sigmas: &[f64]) -> FrameMetrics {
    FrameMetrics { wr2: optimal_scale(calculated, observed, sigmas, wr2), r_obs: optimal_scale(calculated, observed, sigmas, r_obs), n: observed.len() }
}

/// Mean of the finite values (NaN when none is finite).
pub fn finite_mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, count) = values.into_iter().filter(|v| v.is_finite()).fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 {
        f64::NAN
    } else {
        sum / count as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_data_scores_zero_at_any_scale() {
        let obs = [100.0, 50.0, 4.0, 0.001];
        let sig = [2.0, 1.0, 0.5, 0.5];
        let calc: Vec<f64> = obs.iter().map(|o| o * 1e-4).collect();
        let m = frame_metrics(&calc, &obs, &sig);
        assert!(m.wr2.value < 1e-12 && m.r_obs.value < 1e-12, "{m:?}");
        assert!((m.wr2.scale - 1e4).abs() < 1e-6);
    }

    #[test]
    fn weights_follow_klar() {
        // Strong: σ(√I) = σ/(2√I); weak: 5√σ.
        let w = wr2_weights(&[100.0, 0.001], &[2.0, 1.0], 0.01);
        assert!((w[0] - 1.0 / (0.1f64.powi(2) + 0.1f64.powi(2)).sqrt()).abs() < 1e-12);
        assert!((w[1] - 1.0 / (25.0 + 1e-7_f64).sqrt()).abs() < 1e-9);
    }
}

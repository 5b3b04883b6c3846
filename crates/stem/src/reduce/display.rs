//! Display mapping as the fixtures define it: a value is normalised between `low` and `high`
//! in f32 (`clip((v − low)/(high − low), 0, 1)`), its 256-bin histogram bin is
//! `min(floor(norm·256), 255)` and its colormap (LUT) index `min(floor(norm·255), 255)`.

use super::ReduceError;

/// How values are transformed before normalising.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Scale {
    /// As is.
    #[default]
    Linear,
    /// `sign(v)·ln(1 + |v|)`.
    Log1pSigned,
    /// `sign(v)·sqrt(|v|)`.
    Sqrt,
    /// `sign(v)·|v|^γ`.
    Gamma(f64),
}

impl Scale {
    /// Applies the transform to one value.
    pub fn apply(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log1pSigned => v.signum() * v.abs().ln_1p(),
            Scale::Sqrt => v.signum() * v.abs().sqrt(),
            Scale::Gamma(g) => v.signum() * v.abs().powf(g),
        }
    }
}

/// `clip((v − low)/(high − low), 0, 1)` in f32, as the fixtures compute it.
pub fn normalise(v: f64, low: f64, high: f64) -> f32 {
    let (v, low, high) = (v as f32, low as f32, high as f32);
    let span = high - low;
    if span > 0.0 {
        ((v - low) / span).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The 256-bin histogram of `values` between `low` and `high`.
pub fn histogram256(values: &[f64], low: f64, high: f64) -> Result<[u32; 256], ReduceError> {
    check(low, high)?;
    let mut h = [0u32; 256];
    for &v in values {
        let bin = ((normalise(v, low, high) * 256.0).floor() as usize).min(255);
        h[bin] += 1;
    }
    Ok(h)
}

/// Colormap indices of `values` between `low` and `high`.
pub fn lut_indices(values: &[f64], low: f64, high: f64) -> Result<Vec<u8>, ReduceError> {
    check(low, high)?;
    Ok(values.iter().map(|&v| ((normalise(v, low, high) * 255.0).floor() as usize).min(255) as u8).collect())
}

/// Limits at the `lower`/`upper` percentiles of the finite values (autorange).
pub fn percentile_limits(values: &[f64], lower: f64, upper: f64) -> Result<(f64, f64), ReduceError> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() || !(0.0..=100.0).contains(&lower) || !(lower..=100.0).contains(&upper) {
        return Err(ReduceError::new("display limits", "need finite values and 0 ≤ lower ≤ upper ≤ 100"));
    }
    v.sort_by(f64::total_cmp);
    let at = |p: f64| {
        let pos = p / 100.0 * (v.len() - 1) as f64;
        let (i, f) = (pos.floor() as usize, pos - pos.floor());
        v[i] + f * (v[(i + 1).min(v.len() - 1)] - v[i])
    };
    Ok((at(lower), at(upper)))
}

fn check(low: f64, high: f64) -> Result<(), ReduceError> {
    if low.is_finite() && high.is_finite() && high > low {
        Ok(())
    } else {
        Err(ReduceError::new("display limits", format!("need finite low < high (got {low}, {high})")))
    }
}

//! The physical ranges and size budgets every reflectivity input is checked against, once, at the
//! boundary ([`crate::Stack::validate`], [`crate::CurveRequest::validate`], the model compiler, the
//! fit objective, the file readers).
//!
//! Why ranges at all: the recursion is exact in f64 only while its intermediate numbers stay
//! representable. A thickness of 1e200 Å, a roughness of 1e154 Å (σ² overflows), δ = 1e308 or an
//! energy of 1e12 eV turn every R into NaN, and ε = 0 (δ = ½, β = 0) divides by zero in the p mode.
//! The limits below are far outside anything a reflectivity measurement can see, so they never
//! reject real data; what they reject would have produced NaN or a meaningless number. Whatever
//! still overflows inside these ranges is caught by the output check ([`crate::Reflectivity::check_finite`]).

use crate::ReflError;

/// Lowest photon energy accepted, eV (below the vacuum ultraviolet the linear ε = 1 − 2δ + 2iβ is meaningless).
pub const MIN_ENERGY_EV: f64 = 1.0;
/// Highest photon energy accepted, eV (1 MeV; hard X-ray reflectometry ends near 100 keV).
pub const MAX_ENERGY_EV: f64 = 1.0e6;
/// Largest layer thickness, Å (1 mm: far beyond any coherent film).
pub const MAX_THICKNESS_A: f64 = 1.0e7;
/// Largest interface roughness, Å (1 µm: a Névot–Croce interface is long gone at that point).
pub const MAX_ROUGHNESS_A: f64 = 1.0e4;
/// Largest |δ| (X-ray and neutron-equivalent δ are below 0.1; ε = 1 − 2δ + 2iβ assumes small δ).
pub const MAX_ABS_DELTA: f64 = 1.0;
/// Largest |β| (same reasoning as [`MAX_ABS_DELTA`]).
pub const MAX_ABS_BETA: f64 = 1.0;
/// Smallest |ε| = |1 − 2δ + 2iβ| per axis: at ε = 0 the p-mode kz and u = kz/ε diverge. Chosen
/// well above f32 rounding so the GPU twin, which forms ε in f32, never sees an exact zero.
pub const MIN_ABS_EPSILON: f64 = 1.0e-6;
/// Most layers in one stack, fronting medium and substrate included (graded films sliced into
/// microslabs stay far below it).
pub const MAX_LAYERS: usize = 100_000;
/// Most q points in one curve (ten million; a measured curve has hundreds to thousands).
pub const MAX_Q_POINTS: usize = 10_000_000;
/// Largest relative density (`density_scale`) of a model layer.
pub const MAX_DENSITY_SCALE: f64 = 100.0;
/// Largest mass density of a compound material, g/cm³ (osmium, the densest element, is 22.6).
pub const MAX_MASS_DENSITY_G_CM3: f64 = 100.0;
/// Largest instrument `scale` of a dataset (large enough for data in raw counts).
pub const MAX_SCALE: f64 = 1.0e12;
/// Largest |background| of a dataset (same units as the data).
pub const MAX_ABS_BACKGROUND: f64 = 1.0e12;
/// Largest |R| of a measured data point (normalised R is ≤ ~1; raw counts stay far below this).
pub const MAX_ABS_DATA_R: f64 = 1.0e12;
/// Smallest uncertainty dR of a measured point: with |R| ≤ [`MAX_ABS_DATA_R`] every weighted
/// residual stays below ~1e112, so χ² cannot overflow even over [`MAX_Q_POINTS`] points.
pub const MIN_DATA_SIGMA: f64 = 1.0e-100;
/// Largest dR of a measured point.
pub const MAX_DATA_SIGMA: f64 = MAX_ABS_DATA_R;
/// Largest input file (cases, model, fit task) read into memory, bytes (256 MiB).
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// A number as messages show it: plain in the everyday range, in exponent form beyond it
/// (`1e154`, not 155 digits).
pub fn show(value: f64) -> String {
    let magnitude = value.abs();
    if value.is_finite() && value != 0.0 && !(1e-4..1e6).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// Checks a finite `value` against `[lo, hi]`; the error names `object`, the value, the limit and the unit.
pub fn check_range(object: impl FnOnce() -> String, value: f64, lo: f64, hi: f64, unit: &str) -> Result<f64, ReflError> {
    if !value.is_finite() {
        return Err(ReflError::input(object(), format!("not a finite number ({value})")));
    }
    if value < lo {
        return Err(ReflError::input(object(), format!("{}{unit} is below the limit {}{unit}", show(value), show(lo))));
    }
    if value > hi {
        return Err(ReflError::input(object(), format!("{}{unit} is above the limit {}{unit}", show(value), show(hi))));
    }
    Ok(value)
}

/// Checks a count derived from the input against its budget before anything of that size is allocated.
pub fn check_count(object: impl FnOnce() -> String, count: usize, limit: usize, what: &str) -> Result<(), ReflError> {
    if count > limit {
        return Err(ReflError::input(object(), format!("has {count} {what}, more than the limit of {limit}")));
    }
    Ok(())
}

/// Checks a photon energy against [`MIN_ENERGY_EV`]..[`MAX_ENERGY_EV`].
pub fn check_energy(object: impl FnOnce() -> String, energy_ev: f64) -> Result<f64, ReflError> {
    check_range(object, energy_ev, MIN_ENERGY_EV, MAX_ENERGY_EV, " eV")
}

/// Checks one layer's numbers: thickness, roughness, δ and β per principal axis, and ε ≠ 0 per
/// axis. `object` is the layer's name in messages (e.g. `"layer 3"`); `axes` names the axes.
pub fn check_layer(object: &str, thickness: f64, roughness: f64, delta: &[f64], beta: &[f64], axes: &[&str]) -> Result<(), ReflError> {
    check_range(|| format!("{object} thickness"), thickness, 0.0, MAX_THICKNESS_A, " Å")?;
    check_range(|| format!("{object} roughness"), roughness, 0.0, MAX_ROUGHNESS_A, " Å")?;
    for ((&d, &b), axis) in delta.iter().zip(beta).zip(axes) {
        check_range(|| format!("{object} delta{axis}"), d, -MAX_ABS_DELTA, MAX_ABS_DELTA, "")?;
        check_range(|| format!("{object} beta{axis}"), b, -MAX_ABS_BETA, MAX_ABS_BETA, "")?;
        let eps = (1.0 - 2.0 * d).hypot(2.0 * b);
        if eps < MIN_ABS_EPSILON {
            return Err(ReflError::input(
                format!("{object} delta{axis}, beta{axis}"),
                format!("δ = {}, β = {} give |ε| = |1 − 2δ + 2iβ| = {eps:e}, below the limit {MIN_ABS_EPSILON:e} (the p mode is singular at ε = 0)", show(d), show(b)),
            ));
        }
    }
    Ok(())
}

/// The checks every stack shares (the recursion's [`crate::Stack`] and the 4×4 method's
/// [`crate::general::GeneralStack`]): 2 to [`MAX_LAYERS`] layers; every named number of every
/// layer finite (`fields`); then each layer's physical ranges (`ranges`, given the layer's name).
/// One function, so both stacks reject the same input with the same message.
pub(crate) fn check_stack<L, I, N>(layers: &[L], fields: impl Fn(&L) -> I, ranges: impl Fn(&str, &L) -> Result<(), ReflError>) -> Result<(), ReflError>
where
    I: IntoIterator<Item = (N, f64)>,
    N: std::fmt::Display,
{
    if layers.len() < 2 {
        return Err(ReflError::input("stack", format!("needs at least 2 layers (fronting and substrate), got {}", layers.len())));
    }
    check_count(|| "stack".to_owned(), layers.len(), MAX_LAYERS, "layers")?;
    for (j, layer) in layers.iter().enumerate() {
        for (name, value) in fields(layer) {
            if !value.is_finite() {
                return Err(ReflError::input(format!("layer {j} {name}"), format!("not a finite number ({value})")));
            }
        }
        ranges(&format!("layer {j}"), layer)?;
    }
    Ok(())
}

//! Absorptive (imaginary) atomic form factors f'(s, B, E): diffBloch's fitted parametrisation
//! (`core/absorption.py` + `core/absorptive_parameters.py`, diffBloch 0.2.0rc1, MIT licence),
//! reproduced operation by operation so the numbers agree to float64 rounding.
//!
//! For each Z and each of 13 Debye–Waller knots B (0.1–4.0 Å²) a fit
//! f'_k(s) = Σ₁⁴ A_j exp(−|w_j| s²) + C (s = |g|/2 in Å⁻¹) is tabulated; f' at the atom's B is a
//! cubic Hermite interpolation across the knots, with knot derivatives from diffBloch's
//! weighted ("monotone") slope average, scaled by c/v and clipped at zero.

/// B knots (Å²).
const KNOTS: [f64; 13] = include!("../../data/absorptive_knots.rs");
/// [Z−1][knot] = [A₁, w₁, A₂, w₂, A₃, w₃, A₄, w₄, C].
static PARAMETERS: [[[f64; 9]; 13]; 103] = include!("../../data/absorptive.rs");
/// Electron rest energy (eV) as diffBloch writes it.
const ELECTRON_REST_ENERGY_EV: f64 = 510_998.95;
/// Keeps the slope weights positive where neighbouring slopes are equal (diffBloch's value).
const WEIGHT_FLOOR: f64 = 1e-10;

/// c/v of an electron of kinetic energy `energy_ev`: 1/sqrt(1 − γ⁻²), γ = 1 + E/(m c²).
pub fn c_over_v(energy_ev: f64) -> f64 {
    let gamma = 1.0 + energy_ev / ELECTRON_REST_ENERGY_EV;
    1.0 / (1.0 - gamma.powf(-2.0)).powf(0.5)
}

/// The interpolation cell of B: (lower knot index, t in [0, 1], knot spacing).
fn knot_cell(b_iso: f64) -> (usize, f64, f64) {
    let b = b_iso.clamp(KNOTS[0], KNOTS[KNOTS.len() - 1]);
    // torch.searchsorted(right=False): the first knot ≥ b, kept inside 1..=12.
    let upper = KNOTS.iter().position(|&k| k >= b).unwrap_or(KNOTS.len() - 1).clamp(1, KNOTS.len() - 1);
    let lower = upper - 1;
    let width = KNOTS[upper] - KNOTS[lower];
    (lower, (b - KNOTS[lower]) / width, width)
}

/// f'(s) for element `z` (1..=103) whose atoms have equivalent isotropic B `b_iso` (Å²,
/// clamped to the knot range), at s = |g|/2 (Å⁻¹), for electrons of `energy_ev`; in Å, ≥ 0.
pub fn absorptive_form_factor(z: u8, s_inv_a: f64, b_iso: f64, energy_ev: f64) -> Option<f64> {
    let table = PARAMETERS.get(usize::from(z).checked_sub(1)?)?;
    Some(c_over_v(energy_ev) * interpolate(table, s_inv_a, knot_cell(b_iso)).max(0.0))
}

/// f' for many s at once for one (Z, B), without the per-call setup (the structure-factor loop).
pub(crate) fn absorptive_curve(z: u8, s_inv_a: &[f64], b_iso: f64, energy_ev: f64) -> Option<Vec<f64>> {
    let table = PARAMETERS.get(usize::from(z).checked_sub(1)?)?;
    let scale = c_over_v(energy_ev);
    let cell = knot_cell(b_iso);
    Some(s_inv_a.iter().map(|&s| scale * interpolate(table, s, cell).max(0.0)).collect())
}

/// f'(s) and ∂f'/∂B (Å per Å²) for many s at once for one (Z, B): the derivative of the Hermite
/// cubic in B, 0 where B is clamped to the knot range or where f' is clipped at 0 (the
/// structure-factor gradients).
pub(crate) fn absorptive_curve_with_slope(z: u8, s_inv_a: &[f64], b_iso: f64, energy_ev: f64) -> Option<Vec<(f64, f64)>> {
    let table = PARAMETERS.get(usize::from(z).checked_sub(1)?)?;
    let scale = c_over_v(energy_ev);
    let cell = knot_cell(b_iso);
    let clamped = !(KNOTS[0]..=KNOTS[KNOTS.len() - 1]).contains(&b_iso);
    Some(
        s_inv_a
            .iter()
            .map(|&s| {
                let (value, slope_t) = interpolate_with_slope(table, s, cell);
                if value < 0.0 {
                    (0.0, 0.0)
                } else if clamped {
                    (scale * value, 0.0)
                } else {
                    (scale * value, scale * slope_t / cell.2)
                }
            })
            .collect(),
    )
}

fn interpolate(table: &[[f64; 9]; 13], s: f64, cell: (usize, f64, f64)) -> f64 {
    interpolate_with_slope(table, s, cell).0
}

/// The Hermite cubic at t and its derivative with respect to t.
fn interpolate_with_slope(table: &[[f64; 9]; 13], s: f64, (lower, t, width): (usize, f64, f64)) -> (f64, f64) {
    let s2 = s * s;
    let values: [f64; 13] = std::array::from_fn(|k| {
        let p = &table[k];
        (0..4).map(|j| p[2 * j] * (-p[2 * j + 1].abs() * s2).exp()).sum::<f64>() + p[8]
    });
    let slopes: [f64; 12] = std::array::from_fn(|k| (values[k + 1] - values[k]) / (KNOTS[k + 1] - KNOTS[k]));
    let weights: [f64; 11] = std::array::from_fn(|k| (slopes[k + 1] - slopes[k]).abs() + WEIGHT_FLOOR);
    // diffBloch pairs weight k with the *reversed* weight 10−k (`weights.flip(1)`), not with
    // its neighbour as Akima would; reproduced as is, since the fixtures are generated with it.
    let derivative = |k: usize| -> f64 {
        match k {
            0 => slopes[0],
            12 => slopes[11],
            _ => {
                let (i, r) = (k - 1, 10 - (k - 1));
                (weights[i] * slopes[i] + weights[r] * slopes[i + 1]) / (weights[i] + weights[r])
            }
        }
    };
    let (t2, t3) = (t * t, t * t * t);
    let (y0, y1) = (values[lower], values[lower + 1]);
    let (d0, d1) = (derivative(lower), derivative(lower + 1));
    let value = (2.0 * t3 - 3.0 * t2 + 1.0) * y0 + ((t3 - 2.0 * t2 + t) * width) * d0 + (-2.0 * t3 + 3.0 * t2) * y1 + ((t3 - t2) * width) * d1;
    let slope = (6.0 * t2 - 6.0 * t) * y0 + (3.0 * t2 - 4.0 * t + 1.0) * width * d0 + (-6.0 * t2 + 6.0 * t) * y1 + (3.0 * t2 - 2.0 * t) * width * d1;
    (value, slope)
}

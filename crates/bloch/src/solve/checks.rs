//! Validity of a propagation: thicknesses in a physical range, the matrix exponential inside the
//! range where scaling and squaring stays accurate, and every result checked before it leaves.
//!
//! Why: expm at 9e15 Å gave Σ I = 1.43, at 1e18 Å 1e21 and at 1.8e19 Å NaN (each squaring
//! doubles the rounding error, and s grows with log₂ ‖X‖) while the eigen solver stayed right.
//! A wrong answer must never leave a kernel: such a case is an error naming it and the thickness.

use scatterlab_core::InputError;

use crate::BlochError;

/// Largest crystal thickness accepted (Å): 100 µm. Fast electrons (≤ a few MeV) cross at most a
/// few µm of matter, so this is far beyond any transmission experiment, and it keeps expm's
/// squarings (and the f32 Taylor substeps on the GPU) within their accurate range.
pub const MAX_THICKNESS_A: f64 = 1e6;

/// Largest ‖X‖₁ = ‖(πt/K)·A‖₁ the Padé scaling-and-squaring exponential is used for: s ≈ log₂(‖X‖/θ₁₃)
/// squarings each double the rounding error, so its flux error grows like ‖X‖·u ≈ 1e-8 here, two
/// orders below [`FLUX_TOLERANCE`]. Beyond it the eigen solver (non-absorptive) stays exact.
pub const EXPM_MAX_NORM: f64 = 1e8;

/// Relative excess of Σ|ψ|² over the incident flux tolerated from f64 rounding (a Hermitian
/// structure matrix propagates unitarily, so the flux is exactly conserved in exact arithmetic).
pub const FLUX_TOLERANCE: f64 = 1e-6;

/// Checks a thickness list: finite, ≥ 0 (0 is the incident wave itself) and at most
/// [`MAX_THICKNESS_A`] each, naming the offending entry.
pub fn check_thicknesses(thicknesses: &[f64]) -> Result<(), BlochError> {
    for (i, &t) in thicknesses.iter().enumerate() {
        if !(t.is_finite() && t >= 0.0) {
            return Err(InputError::new(format!("thickness[{i}]"), format!("must be a finite non-negative number of Å (got {t})")).into());
        }
        if t > MAX_THICKNESS_A {
            return Err(InputError::new(
                format!("thickness[{i}]"),
                format!("{t} Å exceeds the physical limit of {MAX_THICKNESS_A:e} Å (100 µm; electrons cross at most a few µm)"),
            )
            .into());
        }
    }
    Ok(())
}

/// Checks that exp((iπt/K)·A) with ‖A‖₁ = `norm_a` and `phase_per_a` = π/K is inside the
/// accurate range of the Padé scaling and squaring ([`EXPM_MAX_NORM`]).
pub fn check_expm_range(norm_a: f64, phase_per_a: f64, thickness: f64, object: &str) -> Result<(), BlochError> {
    let norm = norm_a * phase_per_a * thickness;
    if norm <= EXPM_MAX_NORM {
        return Ok(());
    }
    Err(BlochError::Numerical {
        object: format!("{object}, thickness {thickness} Å"),
        message: format!(
            "expm is out of its accurate range: ‖(πt/K)·A‖₁ = {norm:.3e} > {EXPM_MAX_NORM:e} (each of its ~{:.0} squarings doubles \
             the rounding error); use the eigen solver (non-absorptive cases) or a smaller thickness",
            (norm / 5.37).log2().ceil()
        ),
    })
}

/// Checks one propagated row before it is reported: every intensity finite, and, when `flux`
/// (Σ|ψ|² in the matrix's own basis) is given, no more than `incident` × (1 + `tolerance`).
/// The error names `object` (the case and tilt) and the thickness.
pub fn check_propagated(row: &[f64], flux: Option<f64>, incident: f64, tolerance: f64, object: &str, thickness: f64) -> Result<(), BlochError> {
    let error = |message: String| BlochError::Numerical { object: format!("{object}, thickness {thickness} Å"), message };
    if let Some(beam) = row.iter().position(|v| !v.is_finite()) {
        return Err(error(format!("intensity of beam {beam} is not finite ({})", row[beam])));
    }
    match flux {
        Some(f) if !(f.is_finite() && f <= incident * (1.0 + tolerance)) => {
            Err(error(format!("Σ|ψ|² = {f} exceeds the incident flux {incident} (tolerance {tolerance:e}): the propagation lost accuracy")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thicknesses_ranges_and_rows_are_checked() {
        assert!(check_thicknesses(&[0.0, 800.0, MAX_THICKNESS_A]).is_ok());
        for bad in [-1.0, f64::NAN, f64::INFINITY, 9e15] {
            let message = check_thicknesses(&[100.0, bad]).unwrap_err().to_string();
            assert!(message.contains("thickness[1]"), "{message}");
        }
        assert!(check_expm_range(10.0, 0.08, 1000.0, "x").is_ok());
        let message = check_expm_range(10.0, 0.08, 9e15, "case \"c\"").unwrap_err().to_string();
        assert!(message.contains("case \"c\", thickness 9000000000000000 Å") && message.contains("eigen"), "{message}");
        assert!(check_propagated(&[0.5, 0.5], Some(1.0), 1.0, FLUX_TOLERANCE, "x", 1.0).is_ok());
        assert!(check_propagated(&[1.43, 0.0], Some(1.43), 1.0, FLUX_TOLERANCE, "x", 1.0).unwrap_err().to_string().contains("1.43"));
        assert!(check_propagated(&[f64::NAN], None, 1.0, FLUX_TOLERANCE, "x", 1.0).unwrap_err().to_string().contains("not finite"));
        assert!(check_propagated(&[0.5], Some(f64::NAN), 1.0, FLUX_TOLERANCE, "x", 1.0).is_err());
    }
}

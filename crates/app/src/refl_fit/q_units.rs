//! The q axis of loaded text data: Å⁻¹ (the model's unit), nm⁻¹, or the scattering angle 2θ in
//! degrees at the dataset's photon energy. The user picks it before attaching, and the columns
//! are converted once, on attach, so the model always holds q in Å⁻¹.

use scatterlab_core::units::photon_k0;
use scatterlab_refl::data::Dataset;

/// The unit of a loaded file's first (and dQ) column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QUnit {
    /// q in Å⁻¹.
    #[default]
    InverseAngstrom,
    /// q in nm⁻¹.
    InverseNanometre,
    /// Scattering angle 2θ in degrees (dQ: FWHM of 2θ in degrees).
    TwoThetaDeg,
}

impl QUnit {
    /// Every unit, in selector order.
    pub const ALL: [QUnit; 3] = [QUnit::InverseAngstrom, QUnit::InverseNanometre, QUnit::TwoThetaDeg];

    /// The selector's label.
    pub fn label(self) -> &'static str {
        match self {
            QUnit::InverseAngstrom => "q (Å⁻¹)",
            QUnit::InverseNanometre => "q (nm⁻¹)",
            QUnit::TwoThetaDeg => "2θ (deg)",
        }
    }
}

/// `data` with q (and dQ) in Å⁻¹. For 2θ, q = 2k₀ sin θ at `energy_ev` and dQ = k₀ cos θ · d(2θ)
/// (radians); angles outside (0°, 180°) are an error naming the dataset and the point.
pub fn to_inverse_angstrom(data: &Dataset, unit: QUnit, energy_ev: f64) -> Result<Dataset, String> {
    let mut out = data.clone();
    match unit {
        QUnit::InverseAngstrom => {}
        QUnit::InverseNanometre => {
            out.q.iter_mut().for_each(|q| *q /= 10.0);
            if let Some(dq) = &mut out.dq {
                dq.iter_mut().for_each(|d| *d /= 10.0);
            }
        }
        QUnit::TwoThetaDeg => {
            if !(energy_ev.is_finite() && energy_ev > 0.0) {
                return Err(format!("{}: 2θ needs a positive photon energy, got {energy_ev} eV", data.name));
            }
            let k0 = photon_k0(energy_ev);
            for (i, tth) in data.q.iter().enumerate() {
                if !(*tth > 0.0 && *tth < 180.0) {
                    return Err(format!("{}: 2θ[{i}] = {tth}° is not within (0°, 180°)", data.name));
                }
            }
            let theta = |tth: f64| 0.5 * tth.to_radians();
            out.q = data.q.iter().map(|&t| 2.0 * k0 * theta(t).sin()).collect();
            if let (Some(dq), Some(d2t)) = (&mut out.dq, &data.dq) {
                *dq = data.q.iter().zip(d2t).map(|(&t, &d)| k0 * theta(t).cos() * d.to_radians()).collect();
            }
        }
    }
    Ok(out)
}

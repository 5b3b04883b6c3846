//! The refinable parameters and how a step along one changes the asymmetric unit.

use scatterlab_core::InputError;

use crate::crystal::{AsymmetricUnit, Displacement};
use crate::BlochError;

/// One scalar parameter of a [`super::GradientModel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    /// Fractional position of `site` along its free direction `dir`
    /// ([`AsymmetricUnit::position_basis`]).
    Position {
        /// Site index.
        site: usize,
        /// Index into the site's position basis.
        dir: usize,
    },
    /// U_iso (Å²) of an isotropic site.
    Uiso {
        /// Site index.
        site: usize,
    },
    /// CIF U_ij (Å²) of an anisotropic site along its free direction `dir`
    /// ([`AsymmetricUnit::adp_basis`]).
    Uaniso {
        /// Site index.
        site: usize,
        /// Index into the site's ADP basis.
        dir: usize,
    },
    /// Occupancy of `site`.
    Occupancy {
        /// Site index.
        site: usize,
    },
    /// A common offset (Å) of every thickness of frame `frame`.
    Thickness {
        /// Frame index.
        frame: usize,
    },
    /// A small lab rotation ω_axis (rad) of frame `frame`: O → R_axis(ω)·O (before the tilts).
    Orientation {
        /// Frame index.
        frame: usize,
        /// 0, 1, 2: about lab x, y, z.
        axis: usize,
    },
}

impl Param {
    /// The site a structural parameter belongs to (`None` for thickness and orientation).
    pub fn site(&self) -> Option<usize> {
        match *self {
            Param::Position { site, .. } | Param::Uiso { site } | Param::Uaniso { site, .. } | Param::Occupancy { site } => Some(site),
            Param::Thickness { .. } | Param::Orientation { .. } => None,
        }
    }
}

fn bad(asu: &AsymmetricUnit, param: &Param, problem: impl Into<String>) -> BlochError {
    InputError::new(format!("crystal {:?}: parameter {param:?}", asu.name), problem).into()
}

/// The free direction of `param` as (position direction, CIF-U direction), checked against the
/// site (an index out of range or a U_iso/U_aniso kind that does not match the site is an error).
pub(crate) fn structural_direction(asu: &AsymmetricUnit, param: &Param) -> Result<([f64; 3], [f64; 6]), BlochError> {
    let Some(site) = param.site() else { return Ok(([0.0; 3], [0.0; 6])) };
    let atom = asu.sites.get(site).ok_or_else(|| bad(asu, param, format!("no such site ({} sites)", asu.sites.len())))?;
    match (*param, atom.displacement) {
        (Param::Position { dir, .. }, _) => {
            let basis = asu.position_basis(site)?;
            let u = basis.get(dir).ok_or_else(|| bad(asu, param, format!("the site has {} free position directions", basis.len())))?;
            Ok((*u, [0.0; 6]))
        }
        (Param::Uaniso { dir, .. }, Displacement::Aniso(_)) => {
            let basis = asu.adp_basis(site)?;
            let u = basis.get(dir).ok_or_else(|| bad(asu, param, format!("the site has {} free ADP directions", basis.len())))?;
            Ok(([0.0; 3], *u))
        }
        (Param::Uiso { .. }, Displacement::Iso(_)) | (Param::Occupancy { .. }, _) => Ok(([0.0; 3], [0.0; 6])),
        (Param::Uiso { .. }, Displacement::Aniso(_)) => Err(bad(asu, param, "the site is anisotropic: use Uaniso")),
        (Param::Uaniso { .. }, Displacement::Iso(_)) => Err(bad(asu, param, "the site is isotropic: use Uiso")),
        _ => Ok(([0.0; 3], [0.0; 6])),
    }
}

/// A copy of `asu` moved by `step` along structural parameter `param` (thickness and orientation
/// leave it unchanged): the finite-difference tests and refinement steps use it.
pub fn displaced(asu: &AsymmetricUnit, param: &Param, step: f64) -> Result<AsymmetricUnit, BlochError> {
    let (position, adp) = structural_direction(asu, param)?;
    let mut out = asu.clone();
    let Some(site) = param.site() else { return Ok(out) };
    let atom = &mut out.sites[site];
    match (*param, &mut atom.displacement) {
        (Param::Position { .. }, _) => {
            for (x, d) in atom.frac.iter_mut().zip(position) {
                *x += step * d;
            }
        }
        (Param::Uiso { .. }, Displacement::Iso(u)) => *u += step,
        (Param::Uaniso { .. }, Displacement::Aniso(u)) => {
            for (x, d) in u.iter_mut().zip(adp) {
                *x += step * d;
            }
        }
        (Param::Occupancy { .. }, _) => atom.occupancy += step,
        _ => {}
    }
    Ok(out)
}

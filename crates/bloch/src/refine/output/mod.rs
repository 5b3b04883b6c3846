//! The refinement's written outputs (issue 18, deliverable 5): the refined CIF and the observed
//! vs calculated intensities (CSV).
//!
//! `refined.cif` keeps the source's space group, setting and operators by copying their text
//! ([`symmetry_text`]), writes the cell the model was refined in, and the atom sites with
//! standard uncertainties in parentheses; `_atom_site_U_iso_or_equiv` is always present (U_eq
//! for anisotropic sites) and `_atom_site_aniso_U_*` rows follow for anisotropic sites. Tags are
//! spelled as diffBloch and gemmi look them up (diffBloch's reader is case-sensitive).

mod numbers;
mod symmetry_text;

use crate::crystal::{element_symbol, parse_cif_asymmetric, AsymmetricUnit, Atom, Displacement};

use super::{Evaluation, RefineError};

pub use numbers::{cif_string, format_plain, format_with_su, u_equivalent, u_equivalent_su};
pub use symmetry_text::symmetry_text;

/// Standard uncertainties of one refined site, in the units of its parameters (fractional
/// coordinates, Å², occupancy fraction). 0 means not refined (fixed, or fixed by symmetry):
/// the value is then written without parentheses.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SiteUncertainty {
    /// s.u. of x, y, z.
    pub frac: [f64; 3],
    /// s.u. of U_iso; for an anisotropic site the s.u. of U_eq when known from the full
    /// covariance (0: propagated from `u_aniso` as if uncorrelated).
    pub u_iso: f64,
    /// s.u. of U11, U22, U33, U12, U13, U23 (anisotropic sites).
    pub u_aniso: [f64; 6],
    /// s.u. of the occupancy.
    pub occupancy: f64,
}

impl SiteUncertainty {
    /// Every s.u. must be finite and ≥ 0; the error names the site and parameter.
    fn check(&self, label: &str) -> Result<(), RefineError> {
        let named = [("x", self.frac[0]), ("y", self.frac[1]), ("z", self.frac[2]), ("U_iso", self.u_iso), ("occupancy", self.occupancy)];
        let aniso = ["U11", "U22", "U33", "U12", "U13", "U23"].into_iter().zip(self.u_aniso);
        match named.into_iter().chain(aniso).find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            Some((name, v)) => {
                Err(RefineError::Inconsistent { item: format!("site {label:?}: standard uncertainty of {name}"), message: format!("{v} (must be finite and ≥ 0)") })
            }
            None => Ok(()),
        }
    }
}

/// One site as written: the atom and its s.u. (zero for sites carried from the source).
struct Row<'a> {
    atom: &'a Atom,
    su: SiteUncertainty,
}

/// The refined structure as a CIF.
///
/// - Space group, setting and operators: the `_symmetry_*` / `_space_group_*` items and the
///   operator loop of the source block copied verbatim ([`symmetry_text`]).
/// - Cell: `refined.cell` (the cell the model was refined in, e.g. the PETS cell).
/// - Sites in source order. A site of `refined` replaces the source site with the same label;
///   source sites absent from `refined` (hydrogens the experiment does not load) are written
///   unchanged with the source's values (their source s.u. are not kept) and named in a
///   comment; sites of `refined` absent from the source follow at the end.
/// - `su[i]` belongs to `refined.sites[i]`; an empty slice writes no s.u. at all.
///
/// Errors: the source does not parse, `su` has the wrong length or a negative / non-finite
/// entry, a site has no element symbol or a non-finite value.
pub fn refined_cif(source_cif: &str, refined: &AsymmetricUnit, su: &[SiteUncertainty]) -> Result<String, RefineError> {
    let source = parse_cif_asymmetric(&refined.name, source_cif).map_err(|e| RefineError::Structure { file: "source CIF".to_string(), source: e })?;
    if !su.is_empty() && su.len() != refined.sites.len() {
        return Err(RefineError::Inconsistent { item: "standard uncertainties".to_string(), message: format!("{} given for {} refined sites", su.len(), refined.sites.len()) });
    }
    let su_of = |i: usize| su.get(i).copied().unwrap_or_default();
    let mut used = vec![false; refined.sites.len()];
    let mut rows = Vec::new();
    let mut carried = Vec::new();
    for site in &source.sites {
        match refined.sites.iter().enumerate().position(|(i, r)| !used[i] && r.label == site.label) {
            Some(i) => {
                used[i] = true;
                rows.push(Row { atom: &refined.sites[i], su: su_of(i) });
            }
            None => {
                carried.push(site.label.as_str());
                rows.push(Row { atom: site, su: SiteUncertainty::default() });
            }
        }
    }
    let added: Vec<usize> = (0..refined.sites.len()).filter(|&i| !used[i]).collect();
    rows.extend(added.iter().map(|&i| Row { atom: &refined.sites[i], su: su_of(i) }));
    for row in &rows {
        row.su.check(&row.atom.label)?;
        let values = row.atom.frac.into_iter().chain([row.atom.occupancy]).chain(match row.atom.displacement {
            Displacement::Iso(u) => vec![u],
            Displacement::Aniso(u) => u.to_vec(),
        });
        if values.into_iter().any(|v| !v.is_finite()) {
            return Err(RefineError::Inconsistent { item: format!("site {:?}", row.atom.label), message: "a refined value is not finite".to_string() });
        }
    }

    let name: String = refined.name.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
    let version = env!("CARGO_PKG_VERSION");
    let mut out = String::from("#\\#CIF_1.1\n");
    out.push_str(&format!("# Refined by scatterlab {version} (Bloch-wave dynamical refinement against 3D ED intensities).\n"));
    out.push_str("# Space group, setting and symmetry operators copied verbatim from the source CIF.\n");
    out.push_str("# Standard uncertainties in parentheses; values without them were not refined.\n");
    if !carried.is_empty() {
        out.push_str(&format!("# Not in the refined model, copied unchanged from the source: {}.\n", carried.join(", ")));
    }
    if !added.is_empty() {
        let labels: Vec<&str> = added.iter().map(|&i| refined.sites[i].label.as_str()).collect();
        out.push_str(&format!("# Not in the source CIF (added by the refinement): {}.\n", labels.join(", ")));
    }
    out.push_str(&format!("data_{}\n\n", if name.is_empty() { "refined" } else { &name }));
    out.push_str(&format!("_computing_structure_refinement {}\n\n", cif_string(&format!("scatterlab {version}"))));
    let tags = ["_cell_length_a", "_cell_length_b", "_cell_length_c", "_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"];
    let cell = refined.cell.lengths.iter().chain(&refined.cell.angles_deg);
    for (tag, value) in tags.iter().zip(cell) {
        out.push_str(&format!("{tag} {}\n", format_plain(*value)));
    }
    out.push('\n');
    let symmetry = symmetry_text(source_cif, &refined.name);
    if !symmetry.is_empty() {
        out.push_str(&symmetry);
        out.push_str("\n\n");
    }
    out.push_str(&atom_site_loop(&rows, refined)?);
    out.push_str(&aniso_loop(&rows));
    Ok(out)
}

fn atom_site_loop(rows: &[Row], refined: &AsymmetricUnit) -> Result<String, RefineError> {
    let mut out = String::from("loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_U_iso_or_equiv\n_atom_site_adp_type\n_atom_site_occupancy\n");
    for Row { atom, su } in rows {
        let symbol =
            element_symbol(atom.z).ok_or_else(|| RefineError::Inconsistent { item: format!("site {:?}", atom.label), message: format!("no element with Z = {}", atom.z) })?;
        let (u, u_su, kind) = match atom.displacement {
            Displacement::Iso(u) => (u, su.u_iso, "Uiso"),
            Displacement::Aniso(uij) => {
                let (u_eq, coefficients) = u_equivalent(uij, &refined.cell);
                (u_eq, if su.u_iso > 0.0 { su.u_iso } else { u_equivalent_su(su.u_aniso, coefficients) }, "Uani")
            }
        };
        let frac: Vec<String> = atom.frac.iter().zip(su.frac).map(|(&x, s)| format_with_su(x, s)).collect();
        out.push_str(&format!("{} {symbol} {} {} {kind} {}\n", cif_string(&atom.label), frac.join(" "), format_with_su(u, u_su), format_with_su(atom.occupancy, su.occupancy)));
    }
    Ok(out)
}

fn aniso_loop(rows: &[Row]) -> String {
    let aniso: Vec<(&Row, [f64; 6])> = rows.iter().filter_map(|r| if let Displacement::Aniso(u) = r.atom.displacement { Some((r, u)) } else { None }).collect();
    if aniso.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nloop_\n_atom_site_aniso_label\n_atom_site_aniso_U_11\n_atom_site_aniso_U_22\n_atom_site_aniso_U_33\n_atom_site_aniso_U_12\n_atom_site_aniso_U_13\n_atom_site_aniso_U_23\n");
    for (row, u) in aniso {
        let values: Vec<String> = u.iter().zip(row.su.u_aniso).map(|(&v, s)| format_with_su(v, s)).collect();
        out.push_str(&format!("{} {}\n", cif_string(&row.atom.label), values.join(" ")));
    }
    out
}

/// Observed against calculated intensities, one row per scored reflection in plan order:
/// `frame,h,k,l,I_obs,sigma,I_calc,I_calc_unscaled`, where `I_calc` is the calculated intensity
/// times the frame's optimal wR2 scale ([`super::FrameMetrics`]) and `I_calc_unscaled` the
/// model's fraction of the incident beam.
pub fn observed_vs_calculated_csv(evaluation: &Evaluation) -> String {
    let mut out = String::from("frame,h,k,l,I_obs,sigma,I_calc,I_calc_unscaled\n");
    for frame in &evaluation.frames {
        let scale = frame.metrics.wr2.scale;
        for (((hkl, &obs), &sigma), &calc) in frame.hkl.iter().zip(&frame.observed).zip(&frame.sigmas).zip(&frame.calculated) {
            out.push_str(&format!("{},{},{},{},{},{},{},{}\n", frame.id, hkl[0], hkl[1], hkl[2], csv_number(obs), csv_number(sigma), csv_number(scale * calc), csv_number(calc)));
        }
    }
    out
}

/// Shortest round-trip decimal, in exponent form outside [1e-4, 1e15) so that small beam
/// fractions do not turn into long runs of zeros.
fn csv_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

//! The geometry beside each case's intensities in `bloch simulate`'s results: thicknesses, the
//! orientation, K_n, the lab-frame g vectors and the excitation errors of the listed beams, so a
//! results file can be read (and plotted) without the cases file next to it.

use scatterlab_bloch::beams::{excitation_error, g_vector, lab_reciprocal_basis, Hkl};
use scatterlab_bloch::geometry::Optics;
use scatterlab_bloch::simulate::{CaseInput, CasesFile};
use scatterlab_bloch::{parse_cif, Limits, StructureFactors};
use serde_json::{json, Value};

/// What the geometry keys mean, for the results file's top level.
pub const DESCRIPTION: &str = "per case: thicknesses_A (the rows of I), orientation O (lab = O · crystal Cartesian), \
K_n_invA = sqrt(1/λ² + U0), g_invA = lab-frame g of each beam (hkl · reciprocal(cell · Oᵀ), Å⁻¹, no 2π; beam along −z), \
Sg_invA = excitation error (K² − |K + g|²)/(2K) with K = (0, 0, −K_n); rocking cases: at the untilted orientation";

/// Lab g and Sg of `hkl` for `case` (its crystal from `file`).
fn geometry(file: &CasesFile, case: &CaseInput, hkl: &[Hkl], limits: &Limits) -> Result<Value, String> {
    let entry = file.crystals.get(&case.crystal).ok_or_else(|| format!("crystal {:?} not in the file", case.crystal))?;
    let crystal = parse_cif(&case.crystal, &entry.cif).map_err(|e| e.to_string())?;
    // F(000) alone (a grid of radius 0): the mean inner potential that sets K_n, as in the run.
    let f000 = StructureFactors::compute_within(&crystal, 0.0, case.energy_ev, case.absorption, limits).map_err(|e| e.to_string())?.f000();
    let optics = Optics::new(case.energy_ev, f000).map_err(|e| e.to_string())?;
    let basis = lab_reciprocal_basis(&crystal.cell.direct_matrix(), &case.orientation).map_err(|e| e.to_string())?;
    let g: Vec<[f64; 3]> = hkl.iter().map(|&h| g_vector(h, &basis)).collect();
    let sg: Vec<f64> = g.iter().map(|&g| excitation_error(g, optics.k_n_inv_a)).collect();
    Ok(json!({
        "thicknesses_A": case.thicknesses_a,
        "orientation": case.orientation,
        "g_max_invA": case.g_solve_inv_a,
        "sg_max_invA": case.sg_max_inv_a,
        "K_n_invA": optics.k_n_inv_a,
        "g_invA": g,
        "Sg_invA": sg,
    }))
}

/// Adds the geometry keys to every case of `cases` (the results' `"cases"` array, in the order
/// of `file.cases`) that has beams; a case whose geometry cannot be computed gets
/// `"geometry_error"` rather than failing a run whose intensities are fine.
pub fn annotate(file: &CasesFile, cases: &mut Value, limits: &Limits) {
    let Some(cases) = cases.as_array_mut() else { return };
    for (out, case) in cases.iter_mut().zip(&file.cases) {
        let Some(hkl) = out.get("hkl").and_then(|h| serde_json::from_value::<Vec<Hkl>>(h.clone()).ok()) else { continue };
        let Some(object) = out.as_object_mut() else { continue };
        match geometry(file, case, &hkl, limits) {
            Ok(Value::Object(extra)) => object.extend(extra),
            Ok(_) => {}
            Err(e) => {
                object.insert("geometry_error".to_owned(), e.into());
            }
        }
    }
}

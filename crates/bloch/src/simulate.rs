//! The cases file (the fixture's format) → simulations → the results file.
//!
//! Input: `{"crystals": {name: {"cif": text, ...}}, "cases": [{...}]}`. Each case reads only
//! `id`, `crystal`, `kind` (`static` | `rocking`), `energy_eV`, `orientation`, `g_solve_invA`,
//! `sg_max_invA`, `thicknesses_A`, `absorption`, optionally `structure_factor_grid_g_max_invA`
//! (default 2·g_solve + 0.5), and for rocking curves `tilt_angles_deg` (or `tilt_semiangle_deg`
//! with `n_tilts`) and `coupling` (`per_tilt` default, or `union`). Every other key, notably the
//! reference `beams`, `intensities` and checks, is skipped unread.
//! Output: `{"solver", "conventions", "cases": [{"id", "hkl": [[h,k,l], …], "I": [[per beam] per
//! thickness]}]}`; a case that fails carries `"error"` instead, and the others still run.

use std::collections::BTreeMap;

use num_complex::Complex64;
use scatterlab_core::InputError;
use serde::{Deserialize, Serialize};

use crate::beams::{tilt_angles_deg, Hkl, Mat3};
use crate::limits::Limits;
use crate::matrix::{Conventions, StructureFactorTable};
use crate::pattern::{Method, Simulation};
use crate::rocking::{Coupling, Rocking};
use crate::solve::Solver;
use crate::{parse_cif, BlochError, Crystal, StructureFactors};

/// Most tilts one rocking case may ask for through `n_tilts` (a guard against absurd input).
pub const MAX_TILTS: usize = 100_000;

impl StructureFactorTable for StructureFactors {
    fn hkl_list(&self) -> &[Hkl] {
        self.hkl()
    }
    fn value(&self, hkl: Hkl) -> Option<Complex64> {
        self.get(hkl)
    }
    fn f000(&self) -> Complex64 {
        StructureFactors::f000(self)
    }
    fn index_of(&self, hkl: Hkl) -> Option<usize> {
        StructureFactors::index_of(self, hkl)
    }
    fn value_at(&self, index: usize) -> Option<Complex64> {
        self.values().get(index).copied()
    }
    fn dense_values(&self) -> Option<&[Complex64]> {
        Some(self.values())
    }
    fn difference_indices(&self, beams: &[Hkl]) -> Result<Vec<u32>, Hkl> {
        self.box_difference_indices(beams)
    }
}

/// A crystal entry of the cases file: its complete CIF text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrystalEntry {
    /// CIF text (symmetry operators, fractional coordinates, occupancy, U_iso or U_aniso).
    pub cif: String,
}

/// Static (one orientation) or rocking (summed over tilts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One orientation.
    #[default]
    Static,
    /// A rocking curve about lab x.
    Rocking,
}

/// One case: only the inputs of the simulation (never the reference results).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseInput {
    /// Case id.
    pub id: String,
    /// Key into `crystals`.
    pub crystal: String,
    /// Static or rocking.
    #[serde(default)]
    pub kind: Kind,
    /// Beam energy (eV).
    #[serde(rename = "energy_eV")]
    pub energy_ev: f64,
    /// Orientation O (lab = O · crystal Cartesian).
    pub orientation: Mat3,
    /// Beam radius (Å⁻¹).
    #[serde(rename = "g_solve_invA")]
    pub g_solve_inv_a: f64,
    /// Excitation-error radius (Å⁻¹).
    #[serde(rename = "sg_max_invA")]
    pub sg_max_inv_a: f64,
    /// Thicknesses (Å).
    #[serde(rename = "thicknesses_A")]
    pub thicknesses_a: Vec<f64>,
    /// Absorptive structure factors (expm only).
    #[serde(default)]
    pub absorption: bool,
    /// Structure-factor grid radius (Å⁻¹); default 2·g_solve + 0.5.
    #[serde(rename = "structure_factor_grid_g_max_invA", default)]
    pub grid_g_max_inv_a: Option<f64>,
    /// Rocking: explicit tilt angles (degrees).
    #[serde(default)]
    pub tilt_angles_deg: Option<Vec<f64>>,
    /// Rocking: semi-angle (degrees) for linspace(−semi, +semi, n_tilts) when no explicit angles.
    #[serde(default)]
    pub tilt_semiangle_deg: Option<f64>,
    /// Rocking: number of tilts with `tilt_semiangle_deg`.
    #[serde(default)]
    pub n_tilts: Option<usize>,
    /// Rocking: per-tilt (default) or union coupling.
    #[serde(default)]
    pub coupling: Coupling,
}

/// The cases file (serialised as it is read: the app sends its cases to the npm Worker so).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CasesFile {
    /// Crystals by name.
    pub crystals: BTreeMap<String, CrystalEntry>,
    /// The cases, in order.
    pub cases: Vec<CaseInput>,
}

/// One case's result (or its error).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseOutput {
    /// Case id.
    pub id: String,
    /// Beams, sorted by (h, k, l).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hkl: Option<Vec<Hkl>>,
    /// `I[thickness][beam]`.
    #[serde(rename = "I", skip_serializing_if = "Option::is_none")]
    pub intensities: Option<Vec<Vec<f64>>>,
    /// Why the case failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The results file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultsFile {
    /// The solver used.
    pub solver: Solver,
    /// The conventions used.
    pub conventions: Conventions,
    /// One entry per input case, same order.
    pub cases: Vec<CaseOutput>,
}

impl CaseInput {
    /// The simulation this case describes, for `crystal`.
    pub fn simulation(&self, crystal: &Crystal) -> Result<Simulation, BlochError> {
        let rocking = match self.kind {
            Kind::Static => None,
            Kind::Rocking => {
                let angles = match (&self.tilt_angles_deg, self.tilt_semiangle_deg, self.n_tilts) {
                    (Some(angles), _, _) => angles.clone(),
                    (None, Some(semi), Some(n)) if (1..=MAX_TILTS).contains(&n) && semi.is_finite() => tilt_angles_deg(semi, n),
                    _ => {
                        return Err(InputError::new(
                            format!("case {:?}", self.id),
                            format!("a rocking case needs tilt_angles_deg (or tilt_semiangle_deg and 1 ≤ n_tilts ≤ {MAX_TILTS})"),
                        )
                        .into())
                    }
                };
                Some(Rocking { tilt_angles_deg: angles, coupling: self.coupling })
            }
        };
        Ok(Simulation {
            name: self.id.clone(),
            direct: crystal.cell.direct_matrix(),
            orientation: self.orientation,
            energy_ev: self.energy_ev,
            g_solve_inv_a: self.g_solve_inv_a,
            sg_max_inv_a: self.sg_max_inv_a,
            thicknesses_a: self.thicknesses_a.clone(),
            absorption: self.absorption,
            rocking,
        })
    }

    /// The structure-factor grid radius: the given one, else 2·g_solve + 0.5.
    pub fn grid_radius(&self) -> f64 {
        self.grid_g_max_inv_a.unwrap_or(2.0 * self.g_solve_inv_a + 0.5)
    }

    /// Runs the case on `crystal` with `method`, within the default [`Limits`].
    pub fn run(&self, crystal: &Crystal, method: Method) -> Result<(Vec<Hkl>, Vec<Vec<f64>>), BlochError> {
        self.run_within(crystal, method, &Limits::default())
    }

    /// [`CaseInput::run`] with the structure-factor grid and every simulation size held to `limits`.
    pub fn run_within(&self, crystal: &Crystal, method: Method, limits: &Limits) -> Result<(Vec<Hkl>, Vec<Vec<f64>>), BlochError> {
        self.run_reusing(crystal, method, limits, &mut None)
    }

    /// [`CaseInput::run_within`], taking the structure factors from `last` when it holds this
    /// case's table (same crystal, grid radius, energy and absorption) and leaving this case's
    /// table there: a file of many cases on one crystal (thickness or orientation series)
    /// computes the grid once instead of per case, which dominated such files (2000 small cases
    /// took minutes). One table is held, so memory stays that of one case.
    fn run_reusing(&self, crystal: &Crystal, method: Method, limits: &Limits, last: &mut Option<(TableKey, StructureFactors)>) -> Result<(Vec<Hkl>, Vec<Vec<f64>>), BlochError> {
        if self.absorption && method.solver == Solver::Eigen {
            return Err(BlochError::Numerical {
                object: format!("case {:?}", self.id),
                message: "absorptive case: the structure matrix is not Hermitian, use --solver expm".to_owned(),
            });
        }
        let simulation = self.simulation(crystal)?;
        let key: TableKey = (self.crystal.clone(), self.grid_radius().to_bits(), self.energy_ev.to_bits(), self.absorption);
        let table = match last.take() {
            Some((held, table)) if held == key => table,
            _ => StructureFactors::compute_within(crystal, self.grid_radius(), self.energy_ev, self.absorption, limits)?,
        };
        let pattern = simulation.run_within(&table, method, limits);
        *last = Some((key, table));
        let pattern = pattern?;
        Ok((pattern.hkl, pattern.intensities))
    }
}

/// What a structure-factor table depends on besides the CIF: crystal name, grid radius and
/// energy (bit patterns: equal inputs only), absorption.
type TableKey = (String, u64, u64, bool);

/// Parses a cases file (an error names the file's structural problem).
pub fn parse_cases(text: &str) -> Result<CasesFile, BlochError> {
    serde_json::from_str(text).map_err(|e| InputError::new("cases file", e.to_string()).into())
}

/// Runs every case of `file` within the default [`Limits`]; a failing case (unknown crystal, bad
/// CIF, bad input, a size over its limit, eigen on an absorptive case, …) gets its error and the
/// others still run.
pub fn simulate(file: &CasesFile, method: Method) -> ResultsFile {
    simulate_within(file, method, &Limits::default())
}

/// [`simulate`] with every case held to `limits`.
pub fn simulate_within(file: &CasesFile, method: Method, limits: &Limits) -> ResultsFile {
    simulate_with_progress(file, method, limits, &mut |_, _| {})
}

/// [`simulate_within`] reporting `(cases done, cases in the file)` after each case, for a
/// progress bar over long files (rocking cases take seconds each).
pub fn simulate_with_progress(file: &CasesFile, method: Method, limits: &Limits, progress: &mut dyn FnMut(usize, usize)) -> ResultsFile {
    let mut crystals: BTreeMap<&str, Result<Crystal, BlochError>> = BTreeMap::new();
    let mut last_table = None;
    let total = file.cases.len();
    let cases = file
        .cases
        .iter()
        .enumerate()
        .map(|(done, case)| {
            let crystal = crystals.entry(case.crystal.as_str()).or_insert_with(|| match file.crystals.get(&case.crystal) {
                Some(entry) => parse_cif(&case.crystal, &entry.cif),
                None => Err(InputError::new(format!("case {:?}: crystal {:?}", case.id, case.crystal), "not in the file's crystals").into()),
            });
            let result = crystal.as_ref().map_err(Clone::clone).and_then(|crystal| case.run_reusing(crystal, method, limits, &mut last_table));
            progress(done + 1, total);
            match result {
                Ok((hkl, intensities)) => CaseOutput { id: case.id.clone(), hkl: Some(hkl), intensities: Some(intensities), error: None },
                Err(e) => CaseOutput { id: case.id.clone(), hkl: None, intensities: None, error: Some(e.to_string()) },
            }
        })
        .collect();
    ResultsFile { solver: method.solver, conventions: method.conventions, cases }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CIF: &str = "data_toy\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0 0 0 0.005\n";

    fn case(id: &str, crystal: &str, extra: &str) -> String {
        format!(
            r#"{{"id":"{id}","crystal":"{crystal}","energy_eV":200000,"orientation":[[1,0,0],[0,0.9998,-0.02],[0,0.02,0.9998]],
               "g_solve_invA":0.8,"sg_max_invA":0.05,"thicknesses_A":[100,200]{extra}}}"#
        )
    }

    #[test]
    fn failing_cases_fail_alone_with_named_errors() {
        let cases = [
            case("good", "toy", ""),
            case("missing", "nope", ""),
            case("rocking-without-tilts", "toy", r#","kind":"rocking""#),
            case("rocking", "toy", r#","kind":"rocking","tilt_semiangle_deg":0.2,"n_tilts":3"#),
            case("absorptive", "toy", r#","absorption":true"#),
        ];
        let text = format!(r#"{{"crystals":{{"toy":{{"cif":{}}}}},"cases":[{}]}}"#, serde_json::to_string(CIF).unwrap(), cases.join(","));
        let file = parse_cases(&text).unwrap();
        let eigen = simulate(&file, Method { solver: Solver::Eigen, conventions: Conventions::DiffBloch });
        let errors: Vec<Option<&str>> = eigen.cases.iter().map(|c| c.error.as_deref()).collect();
        assert!(errors[0].is_none() && errors[3].is_none(), "{errors:?}");
        assert!(errors[1].is_some_and(|e| e.contains("\"nope\"")), "{errors:?}");
        assert!(errors[2].is_some_and(|e| e.contains("tilt_angles_deg")), "{errors:?}");
        assert!(errors[4].is_some_and(|e| e.contains("expm")), "{errors:?}");
        let good = &eigen.cases[0];
        let (hkl, intensities) = (good.hkl.as_ref().unwrap(), good.intensities.as_ref().unwrap());
        assert_eq!(intensities.len(), 2);
        assert!(intensities.iter().all(|row| row.len() == hkl.len() && (row.iter().sum::<f64>() - 1.0).abs() < 1e-12));
        let expm = simulate(&file, Method::default());
        assert!(expm.cases[4].error.is_none(), "{:?}", expm.cases[4].error);
        let json = serde_json::to_value(&expm).unwrap();
        assert_eq!(json["solver"], "expm");
        assert_eq!(json["cases"][0]["I"].as_array().unwrap().len(), 2);
        assert!(json["cases"][1].get("I").is_none() && json["cases"][1]["error"].is_string());
        assert!(parse_cases("{\"cases\": 3}").is_err());
    }

    #[test]
    fn a_reused_structure_factor_table_gives_the_case_alone_bit_for_bit() {
        // Cases 1 and 2 reuse case 0's table (same crystal, radius, energy); case 3 (other energy)
        // and case 4 (absorptive) compute their own; each equals the case run alone.
        let cases = [
            case("a", "toy", ""),
            case("b", "toy", r#","kind":"rocking","tilt_semiangle_deg":0.2,"n_tilts":3"#),
            case("c", "toy", ""),
            case("d", "toy", "").replace("200000", "300000"),
            case("e", "toy", r#","absorption":true"#),
        ];
        let file = |cases: &[String]| parse_cases(&format!(r#"{{"crystals":{{"toy":{{"cif":{}}}}},"cases":[{}]}}"#, serde_json::to_string(CIF).unwrap(), cases.join(","))).unwrap();
        let together = simulate(&file(&cases), Method::default());
        for (i, alone) in cases.iter().enumerate() {
            let single = simulate(&file(std::slice::from_ref(alone)), Method::default());
            assert!(single.cases[0].error.is_none(), "{:?}", single.cases[0].error);
            assert_eq!(together.cases[i], single.cases[0], "case {i}");
        }
        assert_ne!(together.cases[0].intensities, together.cases[3].intensities);
    }
}

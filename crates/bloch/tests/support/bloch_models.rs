//! Fixture models shared by the gradient tests: the frozen `GradientModel` of a fixture case.

use std::sync::OnceLock;

use scatterlab_bloch::crystal::{parse_cif_asymmetric, AsymmetricUnit};
use scatterlab_bloch::geometry::Optics;
use scatterlab_bloch::gradient::{FramePlan, GradientModel};
use scatterlab_bloch::pattern::Simulation;
use scatterlab_bloch::simulate::{parse_cases, CasesFile};
use scatterlab_bloch::StructureFactors;

pub fn fixture() -> &'static CasesFile {
    static FIXTURE: OnceLock<CasesFile> = OnceLock::new();
    FIXTURE.get_or_init(|| parse_cases(&scatterlab_testkit::read_fixture_text("bloch/reference.json")).expect("parse the cases"))
}

pub fn asu(crystal: &str) -> AsymmetricUnit {
    parse_cif_asymmetric(crystal, &fixture().crystals[crystal].cif).expect("fixture CIF")
}

/// The frozen model of `simulation` on `crystal`: optics from the start structure's F(000).
pub fn model_of(crystal: &str, simulation: &Simulation, grid: f64) -> GradientModel {
    let asu = asu(crystal);
    let table = StructureFactors::compute(&asu.expand().0, grid, simulation.energy_ev, simulation.absorption).unwrap();
    let optics = Optics::new(simulation.energy_ev, table.f000()).unwrap();
    let frame = FramePlan::from_simulation(simulation, &table, &optics).unwrap();
    GradientModel::new(asu, optics, vec![frame], grid, simulation.absorption).unwrap()
}

pub fn case_model(id: &str) -> GradientModel {
    case_model_at(id, None)
}

/// The case's model, optionally with fewer thicknesses (the Taylor path's cost grows with t).
pub fn case_model_at(id: &str, thicknesses: Option<&[f64]>) -> GradientModel {
    let case = fixture().cases.iter().find(|c| c.id == id).unwrap();
    let crystal = scatterlab_bloch::parse_cif(&case.crystal, &fixture().crystals[&case.crystal].cif).unwrap();
    let mut simulation = case.simulation(&crystal).unwrap();
    if let Some(t) = thicknesses {
        simulation.thicknesses_a = t.to_vec();
    }
    model_of(&case.crystal, &simulation, case.grid_radius())
}

//! The Bloch structure matrix A of a beam set, in diffBloch's or abTEM's conventions.
//!
//! diffBloch (the fixture's `I_ref`): K = K_n = sqrt(1/λ² + U0);
//! A_ij = p·M_i·M_j·F(g_j − g_i) (i ≠ j), A_ii = 2K·Sg_i·M_i (M once on the diagonal),
//! with absorption A_ii += i·p·Im F(000)·M_i; ψ(t) = exp(iπt/K · A) e₀ and I = |ψ|².
//! abTEM (`I_abtem`): K = 1/λ (no U0), A = M(2K·diag(Sg) + p·F)M, so A_ii = 2K·Sg_i·M_i²;
//! physical amplitudes are M·ψ′ with ψ′ = exp(iπt/K · A) M⁻¹e₀.
//! p = σ/(κλπ), M_i = 1/sqrt(1 − g_z,i/K), Sg_i = g_z,i − |g_i|²/(2K).

use faer::Mat;
use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::beams::{excitation_error, g_vector, mii, Hkl, Mat3};
use crate::geometry::Optics;
use crate::BlochError;

/// Structure factors F(g) (Å⁻²) on an hkl grid, as the matrix needs them.
pub trait StructureFactorTable {
    /// Every tabulated hkl (the candidates for beam selection).
    fn hkl_list(&self) -> &[Hkl];
    /// F(hkl), or `None` outside the grid.
    fn value(&self, hkl: Hkl) -> Option<Complex64>;
    /// F(000).
    fn f000(&self) -> Complex64;
    /// Position of `hkl` in [`StructureFactorTable::hkl_list`], or `None` when not tabulated
    /// (tables with a dense index answer in O(1); this default searches).
    fn index_of(&self, hkl: Hkl) -> Option<usize> {
        self.hkl_list().iter().position(|h| *h == hkl)
    }
    /// F at position `index` of [`StructureFactorTable::hkl_list`].
    fn value_at(&self, index: usize) -> Option<Complex64> {
        self.value(*self.hkl_list().get(index)?)
    }
    /// Every F in [`StructureFactorTable::hkl_list`] order, when the table stores them so
    /// (matrix assembly then reads the slice instead of N² calls).
    fn dense_values(&self) -> Option<&[Complex64]> {
        None
    }
    /// Positions of F(`beams[j]` − `beams[i]`) for every pair, column-major (entry j·N + i), as
    /// matrix assembly and its reverse pass read them; `Err` names the first difference the
    /// table lacks. Tables with a dense hkl box gather these in one tight loop.
    fn difference_indices(&self, beams: &[Hkl]) -> Result<Vec<u32>, Hkl> {
        let mut out = Vec::with_capacity(beams.len() * beams.len());
        for b in beams {
            for a in beams {
                let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                out.push(self.index_of(d).and_then(|i| u32::try_from(i).ok()).ok_or(d)?);
            }
        }
        Ok(out)
    }
}

/// Which code's conventions the structure matrix and amplitudes follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Conventions {
    /// diffBloch 0.2: U0 in K, M once on the diagonal, amplitudes ψ as propagated.
    #[default]
    DiffBloch,
    /// abTEM 1.0: K = 1/λ, M² on the diagonal, physical amplitudes M·ψ′.
    Abtem,
}

impl Conventions {
    /// The wavevector K (Å⁻¹) used in Sg, M and the propagation phase.
    pub fn wavevector(self, optics: &Optics) -> f64 {
        match self {
            Conventions::DiffBloch => optics.k_n_inv_a,
            Conventions::Abtem => optics.k_vacuum_inv_a(),
        }
    }
}

/// A structure matrix with what propagation needs besides it.
#[derive(Debug, Clone)]
pub struct StructureMatrix {
    /// The beams (rows/columns), in order.
    pub hkl: Vec<Hkl>,
    /// A (Å⁻²), complex N×N.
    pub a: Mat<Complex64>,
    /// M_i per beam.
    pub mii: Vec<f64>,
    /// Excitation errors Sg_i (Å⁻¹).
    pub sg: Vec<f64>,
    /// The wavevector K (Å⁻¹): the propagation phase is iπt/K.
    pub k: f64,
    /// Index of the 000 beam (the incident wave).
    pub index_000: usize,
    /// Whether A is Hermitian by construction (no absorption): the eigen solver needs it.
    pub hermitian: bool,
    /// The conventions it was built in (decides how amplitudes are read out).
    pub conventions: Conventions,
}

/// Inputs of [`StructureMatrix::build`] that describe the experiment.
#[derive(Debug, Clone, Copy)]
pub struct MatrixSetup<'a> {
    /// Lab reciprocal basis at this orientation (rows a*, b*, c*).
    pub basis: &'a Mat3,
    /// Energy-derived constants with U0.
    pub optics: &'a Optics,
    /// Add the absorptive diagonal term (F itself carries the absorptive part).
    pub absorption: bool,
    /// diffBloch or abTEM.
    pub conventions: Conventions,
}

/// What the structure matrix needs of each beam, shared by [`StructureMatrix::build_indexed`] and
/// the frame assembler (`frame::assemble`), so both build A from the same numbers.
pub(crate) struct BeamGeometry {
    /// Position of the 000 beam.
    pub(crate) index_000: usize,
    /// The wavevector K of the conventions (Å⁻¹).
    pub(crate) k: f64,
    /// Excitation error per beam (Å⁻¹).
    pub(crate) sg: Vec<f64>,
    /// The obliquity factor M_ii per beam.
    pub(crate) m: Vec<f64>,
}

impl BeamGeometry {
    /// The geometry of `beams` in `setup`; errors name a beam set without 000 or the beam whose
    /// obliquity factor fails.
    pub(crate) fn of(beams: &[Hkl], setup: &MatrixSetup<'_>) -> Result<Self, BlochError> {
        let index_000 = beams.iter().position(|h| *h == [0, 0, 0]).ok_or_else(|| InputError::new("beam set", "does not contain the 000 beam"))?;
        let k = setup.conventions.wavevector(setup.optics);
        let n = beams.len();
        let mut sg = Vec::with_capacity(n);
        let mut m = Vec::with_capacity(n);
        for &hkl in beams {
            let g = g_vector(hkl, setup.basis);
            sg.push(excitation_error(g, k));
            m.push(mii(g, k).map_err(|e| match e {
                BlochError::Input(inner) => InputError::new(format!("beam {hkl:?}"), inner.problem).into(),
                other => other,
            })?);
        }
        Ok(Self { index_000, k, sg, m })
    }
}

/// The diagonal entry of A for a beam of excitation error `sg` and obliquity `m`: 2K·s_g·M
/// (diffBloch) or 2K·s_g·M² (abTEM), with the absorptive mean potential `absorptive_u0` (scaled
/// alike) on the imaginary part when the setup absorbs.
pub(crate) fn diagonal(setup: &MatrixSetup<'_>, k: f64, sg: f64, m: f64, absorptive_u0: f64) -> Complex64 {
    match setup.conventions {
        Conventions::DiffBloch => Complex64::new(2.0 * k * sg * m, if setup.absorption { absorptive_u0 * m } else { 0.0 }),
        Conventions::Abtem => Complex64::new(2.0 * k * sg * (m * m), if setup.absorption { absorptive_u0 * (m * m) } else { 0.0 }),
    }
}

impl StructureMatrix {
    /// Builds A for `beams` (which must contain 000) from structure factors `table`.
    /// A beam difference g_j − g_i missing from the table is an error naming it (the grid must
    /// reach 2·g_solve).
    pub fn build(beams: &[Hkl], table: &dyn StructureFactorTable, setup: &MatrixSetup<'_>) -> Result<Self, BlochError> {
        let indices = table.difference_indices(beams).map_err(|d| {
            // Name the first pair of beams with that difference (error path only).
            let pair = beams.iter().flat_map(|a| beams.iter().map(move |b| (a, b))).find(|(a, b)| [b[0] - a[0], b[1] - a[1], b[2] - a[2]] == d);
            let beams = pair.map_or(String::new(), |(a, b)| format!(" (beams {a:?} → {b:?})"));
            InputError::new(format!("structure factor F{d:?}{beams}"), "outside the structure-factor grid: the grid radius must reach 2·g_solve")
        })?;
        Self::build_indexed(beams, table, setup, &indices)
    }

    /// [`StructureMatrix::build`] with the difference positions already gathered
    /// (`indices` = `table.difference_indices(beams)`, which the reverse pass reuses).
    pub fn build_indexed(beams: &[Hkl], table: &dyn StructureFactorTable, setup: &MatrixSetup<'_>, indices: &[u32]) -> Result<Self, BlochError> {
        if indices.len() != beams.len() * beams.len() {
            return Err(InputError::new("structure-factor indices", format!("{} for {} beams", indices.len(), beams.len())).into());
        }
        let BeamGeometry { index_000, k, sg, m } = BeamGeometry::of(beams, setup)?;
        let n = beams.len();
        let p = setup.optics.prefactor;
        let absorptive_u0 = p * table.f000().im;
        let dense = table.dense_values();
        let missing = |index: u32| -> BlochError { InputError::new("structure-factor indices", format!("position {index} is not in the table")).into() };
        let mut a = Mat::<Complex64>::zeros(n, n);
        for (j, column_indices) in indices.chunks_exact(n).enumerate() {
            // Column j: F(g_i − g_j)·p·M_j·M_i, contiguous (the diagonal is set below).
            let scale = p * m[j];
            let column = a.col_as_slice_mut(j);
            match dense {
                Some(values) => {
                    for ((out, &index), &mi) in column.iter_mut().zip(column_indices).zip(&m) {
                        *out = *values.get(index as usize).ok_or_else(|| missing(index))? * (scale * mi);
                    }
                }
                None => {
                    for ((out, &index), &mi) in column.iter_mut().zip(column_indices).zip(&m) {
                        *out = table.value_at(index as usize).ok_or_else(|| missing(index))? * (scale * mi);
                    }
                }
            }
            column[j] = diagonal(setup, k, sg[j], m[j], absorptive_u0);
        }
        Ok(Self { hkl: beams.to_vec(), a, mii: m, sg, k, index_000, hermitian: !setup.absorption, conventions: setup.conventions })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A structure-factor table from explicit values, F(−h) = conj F(h) unless absorptive.
    pub(crate) struct Table {
        pub hkl: Vec<Hkl>,
        pub values: HashMap<Hkl, Complex64>,
    }

    impl StructureFactorTable for Table {
        fn hkl_list(&self) -> &[Hkl] {
            &self.hkl
        }
        fn value(&self, hkl: Hkl) -> Option<Complex64> {
            self.values.get(&hkl).copied()
        }
        fn f000(&self) -> Complex64 {
            self.values.get(&[0, 0, 0]).copied().unwrap_or_default()
        }
    }

    /// A small cubic table of a "two-atom" crystal: F(h) = f(|h|)·(1 + e^{iπ(h+k+l)/2}).
    pub(crate) fn toy_table(radius: i32, absorptive: bool) -> Table {
        let mut values = HashMap::new();
        let mut hkl = Vec::new();
        for h in -radius..=radius {
            for k in -radius..=radius {
                for l in -radius..=radius {
                    let s2 = f64::from(h * h + k * k + l * l);
                    let f = 0.3 / (1.0 + 0.2 * s2);
                    let phase = std::f64::consts::FRAC_PI_2 * f64::from(h + k + l);
                    let mut v = Complex64::new(f, 0.0) * (Complex64::new(1.0, 0.0) + Complex64::from_polar(1.0, phase));
                    if absorptive {
                        v += Complex64::new(0.0, 0.02 * f) * (Complex64::new(1.0, 0.0) + Complex64::from_polar(1.0, phase));
                    }
                    values.insert([h, k, l], v);
                    hkl.push([h, k, l]);
                }
            }
        }
        Table { hkl, values }
    }

    pub(crate) const BASIS: Mat3 = [[0.25, 0.0, 0.0], [0.0, 0.25, 0.0], [0.0, 0.0, 0.25]];

    fn setup<'a>(optics: &'a Optics, absorption: bool, conventions: Conventions) -> MatrixSetup<'a> {
        MatrixSetup { basis: &BASIS, optics, absorption, conventions }
    }

    #[test]
    fn hermitian_without_absorption_and_diagonal_conventions() {
        let table = toy_table(4, false);
        let optics = Optics::new(200e3, table.f000()).unwrap();
        let beams: Vec<Hkl> = vec![[-1, 0, 0], [0, 0, 0], [1, 0, 1], [0, 2, -1]];
        let a = StructureMatrix::build(&beams, &table, &setup(&optics, false, Conventions::DiffBloch)).unwrap();
        assert!(a.hermitian);
        assert_eq!(a.index_000, 1);
        for i in 0..4 {
            for j in 0..4 {
                assert!((a.a[(i, j)] - a.a[(j, i)].conj()).norm() < 1e-15);
            }
            assert!((a.a[(i, i)].re - 2.0 * a.k * a.sg[i] * a.mii[i]).abs() < 1e-15);
        }
        let b = StructureMatrix::build(&beams, &table, &setup(&optics, false, Conventions::Abtem)).unwrap();
        assert_eq!(b.k, 1.0 / optics.wavelength_a);
        for i in 0..4 {
            assert!((b.a[(i, i)].re - 2.0 * b.k * b.sg[i] * b.mii[i] * b.mii[i]).abs() < 1e-13);
        }
        // Off-diagonal: p·M_i·M_j·F(g_j − g_i).
        let expected = table.values[&[1, 0, 1]] * (optics.prefactor * a.mii[1] * a.mii[2]);
        assert!((a.a[(1, 2)] - expected).norm() < 1e-16);
    }

    #[test]
    fn absorption_adds_an_imaginary_diagonal() {
        let table = toy_table(4, true);
        let optics = Optics::new(200e3, table.f000()).unwrap();
        let beams: Vec<Hkl> = vec![[0, 0, 0], [1, 1, 0]];
        let a = StructureMatrix::build(&beams, &table, &setup(&optics, true, Conventions::DiffBloch)).unwrap();
        assert!(!a.hermitian);
        assert!((a.a[(1, 1)].im - optics.prefactor * table.f000().im * a.mii[1]).abs() < 1e-16);
    }

    #[test]
    fn errors_name_the_missing_difference_and_the_missing_000() {
        let table = toy_table(1, false);
        let optics = Optics::new(200e3, table.f000()).unwrap();
        let err = StructureMatrix::build(&[[0, 0, 0], [1, 0, 0], [-1, 0, 0]], &table, &setup(&optics, false, Conventions::DiffBloch)).unwrap_err();
        assert!(err.to_string().contains("F[2, 0, 0]") && err.to_string().contains("outside the structure-factor grid"), "{err}");
        let err = StructureMatrix::build(&[[1, 0, 0]], &table, &setup(&optics, false, Conventions::DiffBloch)).unwrap_err();
        assert!(err.to_string().contains("000"), "{err}");
    }
}

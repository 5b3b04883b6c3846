//! The asymmetric unit of a crystal and its site map: which CIF site and symmetry operator made
//! each P1 atom, the stabiliser of a site, and the directions in which a site's position and
//! displacement tensor may move without breaking the space group (the free parameters of a
//! refinement, as diffBloch's `core/constraints.py::apply_symmetry_projection` defines them).

use scatterlab_core::InputError;

use super::cell::{aniso_components, aniso_matrix};
use super::symmetry::{coincide, expand_with_images, rotate_aniso, SymOp};
use super::{Atom, Cell, Crystal};
use crate::BlochError;

/// Entries of a projector below this are rounding noise of the operator average.
const PROJECTOR_ZERO: f64 = 1e-9;

/// Which site and operator made one P1 atom: r_j = wrap(R·x_site + t).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageOf {
    /// Index of the site in [`AsymmetricUnit::sites`].
    pub site: usize,
    /// The operator applied to it.
    pub op: SymOp,
}

/// A crystal before symmetry expansion: the cell, the CIF sites as written and the operators.
#[derive(Debug, Clone, PartialEq)]
pub struct AsymmetricUnit {
    /// Name (as [`Crystal::name`]).
    pub name: String,
    /// The unit cell.
    pub cell: Cell,
    /// The sites of the atom-site loop, in file order (fractional coordinates as written).
    pub sites: Vec<Atom>,
    /// Every symmetry operator of the space group (the identity included).
    pub ops: Vec<SymOp>,
}

impl AsymmetricUnit {
    /// The P1 crystal (the same atoms in the same order as [`crate::parse_cif`]) and, per atom,
    /// the site and operator that made it.
    pub fn expand(&self) -> (Crystal, Vec<ImageOf>) {
        let expanded = expand_with_images(&self.sites, &self.ops, &self.cell);
        let images = expanded.iter().map(|(_, site, op)| ImageOf { site: *site, op: *op }).collect();
        let atoms = expanded.into_iter().map(|(atom, _, _)| atom).collect();
        (Crystal { name: self.name.clone(), cell: self.cell, atoms }, images)
    }

    /// Whether an operator is the inversion through the origin (R = −I, t ≡ 0 mod 1): then F
    /// is real for every structure that keeps the symmetry (elastic), and so is every ∂F along
    /// the free directions of [`AsymmetricUnit::position_basis`] and [`AsymmetricUnit::adp_basis`].
    pub fn centrosymmetric_at_origin(&self) -> bool {
        self.ops.iter().any(|op| {
            let inverts = (0..3).all(|i| (0..3).all(|j| op.rotation[i][j] == if i == j { -1.0 } else { 0.0 }));
            inverts && op.translation.iter().all(|t| (t - t.round()).abs() < 1e-9)
        })
    }

    fn site(&self, site: usize) -> Result<&Atom, BlochError> {
        self.sites.get(site).ok_or_else(|| InputError::new(format!("crystal {:?}: site {site}", self.name), format!("out of range ({} sites)", self.sites.len())).into())
    }

    /// The operators that map site `site` onto itself modulo lattice translations (within
    /// [`super::DUPLICATE_TOLERANCE_FRAC`]); the identity is always among them.
    pub fn stabiliser(&self, site: usize) -> Result<Vec<SymOp>, BlochError> {
        let x = self.site(site)?.frac;
        Ok(self.ops.iter().copied().filter(|op| coincide(op.apply(x), x)).collect())
    }

    /// Free fractional directions of site `site`: a basis of the subspace every stabiliser
    /// rotation leaves invariant (P = mean of the stabiliser's R), in reduced row-echelon form,
    /// so each direction has a 1 on "its" coordinate (quartz Si1 (0, y, 5/6) → [(0, 1, 0)]).
    pub fn position_basis(&self, site: usize) -> Result<Vec<[f64; 3]>, BlochError> {
        let stabiliser = self.stabiliser(site)?;
        let count = stabiliser.len() as f64;
        // Rows of Pᵀ span the column space of P, the invariant subspace.
        let rows: Vec<Vec<f64>> = (0..3).map(|col| (0..3).map(|row| stabiliser.iter().map(|op| op.rotation[row][col]).sum::<f64>() / count).collect()).collect();
        Ok(row_echelon(rows).into_iter().map(|r| [r[0], r[1], r[2]]).collect())
    }

    /// Free CIF-U directions (order U11, U22, U33, U12, U13, U23) of site `site`: the basis of
    /// the tensors the stabiliser leaves invariant (U* → R·U*·Rᵀ in the fractional frame), in
    /// reduced row-echelon form. Meaningful for anisotropic sites; an isotropic site has the
    /// single free parameter U_iso whatever this returns.
    pub fn adp_basis(&self, site: usize) -> Result<Vec<[f64; 6]>, BlochError> {
        let stabiliser = self.stabiliser(site)?;
        let d = self.cell.reciprocal_lengths();
        let count = stabiliser.len() as f64;
        // Column c of the averaging operator is the average image of the unit tensor c.
        let columns: Vec<[f64; 6]> = (0..6)
            .map(|c| {
                let unit = aniso_components(&aniso_matrix(std::array::from_fn(|k| f64::from(u8::from(k == c)))));
                let mut sum = [0.0; 6];
                for op in &stabiliser {
                    for (s, v) in sum.iter_mut().zip(rotate_aniso(unit, &op.rotation, d)) {
                        *s += v / count;
                    }
                }
                sum
            })
            .collect();
        Ok(row_echelon(columns.iter().map(|c| c.to_vec()).collect()).into_iter().map(|r| std::array::from_fn(|k| r[k])).collect())
    }
}

/// The nonzero rows of the reduced row-echelon form of `rows` (partial pivoting; entries below
/// [`PROJECTOR_ZERO`] count as 0 and come out as exact zeros).
fn row_echelon(mut rows: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let width = rows.first().map_or(0, Vec::len);
    let mut rank = 0;
    for col in 0..width {
        let Some(pivot) = (rank..rows.len()).max_by(|&a, &b| rows[a][col].abs().total_cmp(&rows[b][col].abs())) else { break };
        if rows[pivot][col].abs() < PROJECTOR_ZERO {
            continue;
        }
        rows.swap(rank, pivot);
        let lead = rows[rank][col];
        for v in rows[rank].iter_mut() {
            *v /= lead;
        }
        let pivot_row = rows[rank].clone();
        for (r, row) in rows.iter_mut().enumerate() {
            if r != rank {
                let factor = row[col];
                for (v, p) in row.iter_mut().zip(&pivot_row) {
                    *v -= factor * p;
                }
            }
        }
        rank += 1;
    }
    rows.truncate(rank);
    for v in rows.iter_mut().flatten() {
        if v.abs() < PROJECTOR_ZERO {
            *v = 0.0;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use crate::crystal::parse_cif_asymmetric;

    const QUARTZ: &str = "data_q\n_cell_length_a 4.9226\n_cell_length_b 4.9226\n_cell_length_c 5.4003\n_cell_angle_alpha 90\n\
_cell_angle_beta 90\n_cell_angle_gamma 120\nloop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\n'-y,x-y,z+2/3'\n'-x+y,-x,z+1/3'\n'y,x,-z'\n\
'x-y,-y,-z+1/3'\n'-x,-x+y,-z+2/3'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0.000000 0.471256 0.833333 0.0092\nO1 O 0.854729 0.585819 0.618682 0.0158\n\
loop_\n_atom_site_aniso_label\n_atom_site_aniso_U_11\n_atom_site_aniso_U_22\n_atom_site_aniso_U_33\n_atom_site_aniso_U_23\n\
_atom_site_aniso_U_13\n_atom_site_aniso_U_12\nSi1 0.012306 0.011452 0.005230 -0.000532 -0.001064 0.006153\n";

    #[test]
    fn quartz_site_map_and_free_directions() {
        let asu = parse_cif_asymmetric("q", QUARTZ).unwrap();
        let (crystal, images) = asu.expand();
        assert_eq!(crystal.atoms.len(), 9);
        assert_eq!(images.iter().filter(|i| i.site == 0).count(), 3);
        assert_eq!(asu.position_basis(0).unwrap(), vec![[0.0, 1.0, 0.0]]);
        assert_eq!(asu.position_basis(1).unwrap().len(), 3);
        // Si1 on the 2-fold axis: U11 = 2·U12 (the tensor's x, xy coupled), U13 = 2·U23.
        let adp = asu.adp_basis(0).unwrap();
        assert_eq!(adp.len(), 4, "{adp:?}");
        assert!(asu.position_basis(5).is_err());
    }
}

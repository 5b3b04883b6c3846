//! Symmetry operators (`x,y,z` strings) and the expansion of CIF sites to the P1 cell.

use super::cell::{aniso_components, aniso_matrix, congruence, Mat3};
use super::{Atom, Cell, Displacement};

/// Two images of one site closer than this in every fractional coordinate (modulo 1) are the
/// same atom (diffBloch's `symprec`): CIFs with 4-decimal coordinates put special-position
/// images ~1e-4 apart, so a tighter tolerance would double-count them.
pub const DUPLICATE_TOLERANCE_FRAC: f64 = 1e-3;

/// A symmetry operation x' = R·x + t in fractional coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SymOp {
    /// R (rows act on the column vector x).
    pub rotation: Mat3,
    /// t.
    pub translation: [f64; 3],
}

/// Parses a number or fraction (`1/2`, `0.25`, `3`).
fn parse_constant(text: &str) -> Option<f64> {
    let valid = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    match text.split_once('/') {
        Some((num, den)) if valid(num) && valid(den) => {
            let (n, d) = (num.parse::<f64>().ok()?, den.parse::<f64>().ok()?);
            (d != 0.0).then_some(n / d)
        }
        None if valid(text) => text.parse().ok(),
        _ => None,
    }
}

/// Parses one component (`-x+y+1/3`) into a row of R and a translation.
fn parse_component(text: &str) -> Option<([f64; 3], f64)> {
    let mut row = [0.0; 3];
    let mut shift = 0.0;
    let mut any = false;
    let mut rest = text;
    while !rest.is_empty() {
        let sign = match rest.as_bytes()[0] {
            b'+' => 1.0,
            b'-' => -1.0,
            _ if !any => 1.0,
            _ => return None,
        };
        if matches!(rest.as_bytes()[0], b'+' | b'-') {
            rest = &rest[1..];
        }
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let term = &rest[..end];
        rest = &rest[end..];
        if let Some(axis) = term.find(['x', 'y', 'z']) {
            let coefficient = term[..axis].trim_end_matches('*');
            if axis + 1 != term.len() {
                return None;
            }
            let c = if coefficient.is_empty() { 1.0 } else { parse_constant(coefficient)? };
            row[usize::from(term.as_bytes()[axis] - b'x')] += sign * c;
        } else {
            shift += sign * parse_constant(term)?;
        }
        any = true;
    }
    any.then_some((row, shift))
}

impl SymOp {
    /// The identity.
    pub const IDENTITY: SymOp = SymOp { rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], translation: [0.0; 3] };

    /// Parses an operator such as `-y+1/4, x+3/4, z` (case-insensitive, spaces ignored,
    /// fractions or decimals, `1/2+x` order allowed). R must have determinant ±1.
    pub fn parse(text: &str) -> Result<SymOp, String> {
        let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
        let parts: Vec<&str> = cleaned.split(',').collect();
        if parts.len() != 3 {
            return Err(format!("symmetry operator {text:?} does not have three comma-separated parts"));
        }
        let mut op = SymOp { rotation: [[0.0; 3]; 3], translation: [0.0; 3] };
        for (i, part) in parts.iter().enumerate() {
            let (row, shift) = parse_component(part).ok_or_else(|| format!("cannot read {part:?} in symmetry operator {text:?}"))?;
            op.rotation[i] = row;
            op.translation[i] = shift;
        }
        let r = op.rotation;
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        if (det.abs() - 1.0).abs() > 1e-9 {
            return Err(format!("symmetry operator {text:?} has determinant {det}, not ±1"));
        }
        Ok(op)
    }

    /// R·x + t (not wrapped).
    pub fn apply(&self, x: [f64; 3]) -> [f64; 3] {
        let r = &self.rotation;
        [0, 1, 2].map(|i| r[i][0] * x[0] + r[i][1] * x[1] + r[i][2] * x[2] + self.translation[i])
    }
}

/// Wraps a fractional coordinate into [0, 1).
pub fn wrap_unit(x: f64) -> f64 {
    let w = x - x.floor();
    // x − floor(x) rounds to 1.0 for tiny negative x.
    if w >= 1.0 {
        0.0
    } else {
        w
    }
}

/// Whether two fractional positions coincide modulo lattice translations.
pub(crate) fn coincide(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|i| {
        let d = a[i] - b[i];
        (d - d.round()).abs() < DUPLICATE_TOLERANCE_FRAC
    })
}

/// Transforms CIF U_ij by R: U*' = R U* Rᵀ in the fractional frame (U* = D U_cif D,
/// D = diag(|a*|, |b*|, |c*|)), returned in CIF order again.
pub(crate) fn rotate_aniso(u: [f64; 6], rotation: &Mat3, d: [f64; 3]) -> [f64; 6] {
    let m = aniso_matrix(u);
    let mut star = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            star[i][j] = m[i][j] * (d[i] * d[j]);
        }
    }
    let rotated = congruence(rotation, &star, rotation);
    let mut cif = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            cif[i][j] = rotated[i][j] / (d[i] * d[j]);
        }
    }
    aniso_components(&cif)
}

/// Applies every operator to every site (atom-major, operator-minor, as diffBloch orders its
/// expansion), wraps into [0, 1) and drops images that coincide with an earlier image of the
/// same site. Distinct sites on one position (mixed occupancy) are all kept.
pub fn expand_to_p1(sites: &[Atom], ops: &[SymOp], cell: &Cell) -> Vec<Atom> {
    expand_with_images(sites, ops, cell).into_iter().map(|(atom, _, _)| atom).collect()
}

/// [`expand_to_p1`] with, per P1 atom, the index of its site and the operator that made it
/// (the site map the gradients need: ∂r_j/∂x_site = R_j).
pub(crate) fn expand_with_images(sites: &[Atom], ops: &[SymOp], cell: &Cell) -> Vec<(Atom, usize, SymOp)> {
    let d = cell.reciprocal_lengths();
    let mut atoms: Vec<(Atom, usize, SymOp)> = Vec::with_capacity(sites.len() * ops.len());
    for (index, site) in sites.iter().enumerate() {
        let first = atoms.len();
        for op in ops {
            let frac = op.apply(site.frac).map(wrap_unit);
            if atoms[first..].iter().any(|(a, _, _)| coincide(a.frac, frac)) {
                continue;
            }
            let displacement = match site.displacement {
                Displacement::Iso(u) => Displacement::Iso(u),
                Displacement::Aniso(u) => Displacement::Aniso(rotate_aniso(u, &op.rotation, d)),
            };
            atoms.push((Atom { frac, displacement, ..site.clone() }, index, *op));
        }
    }
    atoms
}

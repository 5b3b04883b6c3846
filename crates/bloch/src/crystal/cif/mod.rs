//! The CIF reader: one data block → [`Crystal`] expanded to P1.
//!
//! Reads the cell, symmetry operators (`_symmetry_equiv_pos_as_xyz` or
//! `_space_group_symop_operation_xyz`; without them only an explicit P1 is accepted, see
//! [`operators`]), atom sites (label, type symbol, fractional coordinates, occupancy, U_iso /
//! B_iso) and the aniso loop (U_ij or B_ij). Numbers may carry standard uncertainties
//! (`0.1234(5)`). Values are validated where they are read, so an error names the tag, the site
//! and the line: a non-degenerate cell, 0 ≤ occupancy ≤ 1, U_iso ≥ 0, a positive semi-definite
//! U tensor, at least one site.

mod document;
// Shared with the `.cif_pets` reader (`refine::pets`): one CIF tokenizer in the crate.
pub(crate) mod lexer;
mod operators;

use document::{parse_document, Block, Loop, Value};

use super::elements::{atomic_number, atomic_number_strict};
use super::sites::AsymmetricUnit;
use super::symmetry::expand_to_p1;
use super::validate::{check_aniso, check_occupancy, check_u_iso};
use super::{Atom, Cell, Crystal, Displacement};
use crate::BlochError;
use operators::read_symops;

/// U = B / (8π²).
const B_TO_U: f64 = 1.0 / (8.0 * std::f64::consts::PI * std::f64::consts::PI);

const CELL_TAGS: [&str; 6] = ["_cell_length_a", "_cell_length_b", "_cell_length_c", "_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"];
const SYMOP_TAGS: [&str; 2] = ["_symmetry_equiv_pos_as_xyz", "_space_group_symop_operation_xyz"];
const HM_TAGS: [&str; 3] = ["_symmetry_space_group_name_h-m", "_space_group_name_h-m_alt", "_space_group_name_h-m_full"];
const NUMBER_TAGS: [&str; 2] = ["_symmetry_int_tables_number", "_space_group_it_number"];
const ANISO_U: [&str; 6] = ["_atom_site_aniso_u_11", "_atom_site_aniso_u_22", "_atom_site_aniso_u_33", "_atom_site_aniso_u_12", "_atom_site_aniso_u_13", "_atom_site_aniso_u_23"];
const ANISO_B: [&str; 6] = ["_atom_site_aniso_b_11", "_atom_site_aniso_b_22", "_atom_site_aniso_b_33", "_atom_site_aniso_b_12", "_atom_site_aniso_b_13", "_atom_site_aniso_b_23"];

/// Builds `BlochError::Cif` for this crystal.
struct Errors<'a> {
    crystal: &'a str,
}

impl Errors<'_> {
    fn at(&self, line: usize, tag: &str, message: impl Into<String>) -> BlochError {
        BlochError::Cif { crystal: self.crystal.to_string(), line, tag: tag.to_string(), message: message.into() }
    }

    /// A CIF number, with an optional standard uncertainty in parentheses (`1.234(5)`).
    fn number(&self, value: &Value, tag: &str) -> Result<f64, BlochError> {
        let text = value.text.as_str();
        let nominal = match text.find('(') {
            Some(open) if text.ends_with(')') && text[open + 1..text.len() - 1].chars().all(|c| c.is_ascii_digit()) => &text[..open],
            Some(_) => return Err(self.at(value.line, tag, format!("malformed standard uncertainty in {text:?}"))),
            None => text,
        };
        // Digits, one optional sign, point and exponent only: Rust's parser would also take
        // `inf`/`NaN`, which are not CIF numbers.
        let plain = nominal.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E'));
        match nominal.parse::<f64>() {
            Ok(x) if plain && x.is_finite() && nominal.chars().any(|c| c.is_ascii_digit()) => Ok(x),
            _ if value.is_null() => Err(self.at(value.line, tag, "value is missing ('.' or '?')")),
            _ => Err(self.at(value.line, tag, format!("not a number: {text:?}"))),
        }
    }
}

/// Picks the block: the only one, else the one(s) with an atom-site loop, preferring the
/// block named `name`.
fn select_block<'b>(blocks: &'b [Block], name: &str, errors: &Errors) -> Result<&'b Block, BlochError> {
    if let [block] = blocks {
        return Ok(block);
    }
    let candidates: Vec<&Block> = blocks.iter().filter(|b| b.find_loop("_atom_site_fract_x").is_some()).collect();
    match candidates.as_slice() {
        [] if blocks.is_empty() => Err(errors.at(1, "data_", "no data_ block")),
        [] => Err(errors.at(blocks[0].line, "_atom_site_fract_x", "no block has an atom-site loop")),
        [block] => Ok(block),
        many => many.iter().copied().find(|b| b.name == name).ok_or_else(|| {
            let names: Vec<&str> = many.iter().map(|b| b.name.as_str()).collect();
            errors.at(many[0].line, "data_", format!("several blocks with atom sites ({names:?}); none is named {name:?}"))
        }),
    }
}

fn read_cell(block: &Block, errors: &Errors) -> Result<Cell, BlochError> {
    let mut values = [0.0; 6];
    for (slot, tag) in values.iter_mut().zip(CELL_TAGS) {
        *slot = match block.value(tag) {
            Some(v) => errors.number(v, tag)?,
            None => return Err(errors.at(block.line, tag, "missing cell parameter")),
        };
    }
    let cell = Cell { lengths: [values[0], values[1], values[2]], angles_deg: [values[3], values[4], values[5]] };
    let line = block.value(CELL_TAGS[0]).map_or(block.line, |v| v.line);
    cell.validate().map_err(|m| errors.at(line, "_cell_length_a", m))?;
    Ok(cell)
}

/// One column of the atom-site loop, if present.
fn column_value<'r>(lp: &Loop, row: &'r [Value], tag: &str) -> Option<&'r Value> {
    lp.column(tag).and_then(|c| row.get(c))
}

/// One row of the aniso loop: site label, line, the loop's first U (or B) tag, U in CIF order.
type AnisoRow = (String, usize, &'static str, [f64; 6]);

/// Aniso U (CIF order U11, U22, U33, U12, U13, U23) by site label.
fn read_aniso(block: &Block, errors: &Errors) -> Result<Vec<AnisoRow>, BlochError> {
    let Some(lp) = block.find_loop("_atom_site_aniso_label") else { return Ok(Vec::new()) };
    let (tags, scale) = if lp.column(ANISO_U[0]).is_some() { (ANISO_U, 1.0) } else { (ANISO_B, B_TO_U) };
    let mut out = Vec::new();
    for row in &lp.rows {
        let label = column_value(lp, row, "_atom_site_aniso_label").map_or(String::new(), |v| v.text.clone());
        let mut u = [0.0; 6];
        for (slot, tag) in u.iter_mut().zip(tags) {
            let v = column_value(lp, row, tag).ok_or_else(|| errors.at(lp.line, tag, "aniso loop lacks this column"))?;
            *slot = errors.number(v, tag)? * scale;
        }
        out.push((label, row.first().map_or(lp.line, |v| v.line), tags[0], u));
    }
    Ok(out)
}

/// Reads the asymmetric-unit sites (before symmetry expansion) of a crystal with `cell`,
/// validating occupancy and displacements where they are read.
fn read_sites(block: &Block, cell: &Cell, errors: &Errors) -> Result<Vec<Atom>, BlochError> {
    let lp = block.find_loop("_atom_site_fract_x").ok_or_else(|| errors.at(block.line, "_atom_site_fract_x", "no atom-site loop with fractional coordinates"))?;
    if lp.rows.is_empty() {
        return Err(errors.at(lp.line, "_atom_site_fract_x", "the atom-site loop has no atoms"));
    }
    let mut aniso = read_aniso(block, errors)?;
    let mut sites = Vec::with_capacity(lp.rows.len());
    for (index, row) in lp.rows.iter().enumerate() {
        let line = row.first().map_or(lp.line, |v| v.line);
        let label = column_value(lp, row, "_atom_site_label").map_or_else(|| format!("site{}", index + 1), |v| v.text.clone());
        let z = match column_value(lp, row, "_atom_site_type_symbol").filter(|v| !v.is_null()) {
            Some(v) => atomic_number_strict(&v.text).ok_or_else(|| errors.at(v.line, "_atom_site_type_symbol", format!("unknown element {:?}", v.text)))?,
            None => atomic_number(&label).ok_or_else(|| errors.at(line, "_atom_site_label", format!("no element in label {label:?}")))?,
        };
        let mut frac = [0.0; 3];
        for (slot, tag) in frac.iter_mut().zip(["_atom_site_fract_x", "_atom_site_fract_y", "_atom_site_fract_z"]) {
            let v = column_value(lp, row, tag).ok_or_else(|| errors.at(lp.line, tag, "atom-site loop lacks this column"))?;
            *slot = errors.number(v, tag)?;
        }
        let occupancy = match column_value(lp, row, "_atom_site_occupancy").filter(|v| !v.is_null()) {
            Some(v) => {
                let occupancy = errors.number(v, "_atom_site_occupancy")?;
                check_occupancy(occupancy).map_err(|m| errors.at(v.line, "_atom_site_occupancy", format!("site {label:?}: {m}")))?;
                occupancy
            }
            None => 1.0,
        };
        let iso = match (column_value(lp, row, "_atom_site_u_iso_or_equiv").filter(|v| !v.is_null()), column_value(lp, row, "_atom_site_b_iso_or_equiv").filter(|v| !v.is_null())) {
            (Some(v), _) => Some((errors.number(v, "_atom_site_u_iso_or_equiv")?, "_atom_site_u_iso_or_equiv", v.line)),
            (None, Some(v)) => Some((errors.number(v, "_atom_site_b_iso_or_equiv")? * B_TO_U, "_atom_site_b_iso_or_equiv", v.line)),
            (None, None) => None,
        };
        let displacement = match (aniso.iter().position(|(l, _, _, _)| *l == label), iso) {
            (Some(k), _) => {
                let (_, aniso_line, tag, u) = aniso.remove(k);
                check_aniso(u, cell).map_err(|m| errors.at(aniso_line, tag, format!("site {label:?}: {m}")))?;
                Displacement::Aniso(u)
            }
            (None, Some((u, tag, u_line))) => {
                check_u_iso(u).map_err(|m| errors.at(u_line, tag, format!("site {label:?}: {m}")))?;
                Displacement::Iso(u)
            }
            (None, None) => return Err(errors.at(line, "_atom_site_u_iso_or_equiv", format!("site {label:?} has no displacement parameter (U_iso, B_iso or an aniso row)"))),
        };
        sites.push(Atom { label, z, frac, occupancy, displacement });
    }
    if let Some((label, line, _, _)) = aniso.first() {
        return Err(errors.at(*line, "_atom_site_aniso_label", format!("aniso row {label:?} matches no atom site")));
    }
    Ok(sites)
}

/// Parses CIF `text` into a crystal expanded to P1. `name` names the crystal in errors and
/// in the result (the data block's name when `name` is empty), and picks the block when
/// several carry atom sites.
pub fn parse_cif(name: &str, text: &str) -> Result<Crystal, BlochError> {
    let asymmetric = parse_cif_asymmetric(name, text)?;
    let atoms = expand_to_p1(&asymmetric.sites, &asymmetric.ops, &asymmetric.cell);
    Ok(Crystal { name: asymmetric.name, cell: asymmetric.cell, atoms })
}

/// Parses CIF `text` into its asymmetric unit (cell, sites as written, symmetry operators),
/// before expansion; [`AsymmetricUnit::expand`] gives the same P1 atoms as [`parse_cif`].
/// `name` is used as in [`parse_cif`].
pub fn parse_cif_asymmetric(name: &str, text: &str) -> Result<AsymmetricUnit, BlochError> {
    let errors = Errors { crystal: name };
    let blocks = parse_document(text).map_err(|(line, tag, message)| errors.at(line, &tag, message))?;
    let block = select_block(&blocks, name, &errors)?;
    let crystal_name = if name.is_empty() { block.name.clone() } else { name.to_string() };
    let errors = Errors { crystal: &crystal_name };
    let cell = read_cell(block, &errors)?;
    let ops = read_symops(block, &errors)?;
    let sites = read_sites(block, &cell, &errors)?;
    Ok(AsymmetricUnit { name: crystal_name, cell, sites, ops })
}

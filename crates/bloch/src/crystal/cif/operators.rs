//! The symmetry operators of a CIF block: the operator loop, else an explicitly stated P1.
//!
//! Why no look-up by symbol or number: one symbol names several settings (origin choices 1 and 2
//! of `F d -3 m`, hexagonal or rhombohedral axes of `R -3 m`, the cell choices of monoclinic
//! groups), so operators taken from a table may silently not be the file's: the fixture's Si,
//! written in origin choice 2, came out as a wrong structure from the table's origin choice 1
//! when its operator loop was removed. A file without operators must say P1.

use super::document::{Block, Value};
use super::{Errors, HM_TAGS, NUMBER_TAGS, SYMOP_TAGS};
use crate::crystal::spacegroups::{operators_for_number, operators_for_symbol};
use crate::crystal::symmetry::SymOp;
use crate::BlochError;

/// Hall symbols (P1 is `P 1`).
const HALL_TAGS: [&str; 2] = ["_space_group_name_hall", "_symmetry_space_group_name_hall"];

/// A symbol compared without spaces, underscores, case and a setting suffix (`P 1`, `p1`, `P1:1`).
fn normalise(symbol: &str) -> String {
    let base = symbol.split(':').next().unwrap_or(symbol);
    base.chars().filter(|c| !c.is_whitespace() && *c != '_').collect::<String>().to_ascii_lowercase()
}

/// One space-group statement of the block: its tag, value and whether it says P1.
struct Statement<'b> {
    tag: &'static str,
    value: &'b Value,
    p1: bool,
    /// Operators of the built-in table's default setting of that group, when it has one.
    table_operators: Option<usize>,
}

fn statements<'b>(block: &'b Block, errors: &Errors) -> Result<Vec<Statement<'b>>, BlochError> {
    let mut out = Vec::new();
    for tag in HM_TAGS.into_iter().chain(HALL_TAGS) {
        if let Some(value) = block.value(tag).filter(|v| !v.is_null()) {
            let p1 = normalise(&value.text) == "p1";
            let table_operators = if HM_TAGS.contains(&tag) { operators_for_symbol(&value.text).map(<[&str]>::len) } else { None };
            out.push(Statement { tag, value, p1, table_operators });
        }
    }
    for tag in NUMBER_TAGS {
        if let Some(value) = block.value(tag).filter(|v| !v.is_null()) {
            let number = errors.number(value, tag)?;
            let table_operators = (number.fract() == 0.0 && (1.0..=230.0).contains(&number)).then(|| operators_for_number(number as u16)).flatten().map(<[&str]>::len);
            out.push(Statement { tag, value, p1: number == 1.0, table_operators });
        }
    }
    Ok(out)
}

/// The block's operators: its `_space_group_symop_operation_xyz` (or `_symmetry_equiv_pos_as_xyz`)
/// list, else the identity when the block states P1 (H-M or Hall symbol, or number 1) and nothing
/// contradicts it; any other block without operators is an error naming the tag and line.
pub(super) fn read_symops(block: &Block, errors: &Errors) -> Result<Vec<SymOp>, BlochError> {
    for tag in SYMOP_TAGS {
        let values: Vec<&Value> = match (block.find_loop(tag), block.value(tag)) {
            (Some(lp), _) => lp.column(tag).map_or(Vec::new(), |c| lp.rows.iter().filter_map(|r| r.get(c)).collect()),
            // A single operator may be written as a scalar item.
            (None, Some(v)) => vec![v],
            (None, None) => continue,
        };
        if values.is_empty() {
            return Err(errors.at(block.line, tag, "symmetry loop has no operators"));
        }
        return values.into_iter().map(|v| SymOp::parse(&v.text).map_err(|m| errors.at(v.line, tag, m))).collect();
    }
    let stated = statements(block, errors)?;
    if stated.is_empty() {
        return Err(errors.at(
            block.line,
            SYMOP_TAGS[1],
            "no symmetry operators: list them in a _space_group_symop_operation_xyz loop, or state P 1 explicitly \
             (_space_group_name_H-M_alt 'P 1' or _space_group_IT_number 1)",
        ));
    }
    if let Some(other) = stated.iter().find(|s| !s.p1) {
        let table = other.table_operators.map_or(String::new(), |n| format!("; the built-in table's default setting has {n} operators"));
        return Err(errors.at(
            other.value.line,
            other.tag,
            format!(
                "space group {:?} is stated but its operators are not listed: a symbol names several settings and origin \
                 choices, so they are not assumed{table}; list them in a _space_group_symop_operation_xyz loop",
                other.value.text
            ),
        ));
    }
    SymOp::parse("x,y,z").map(|identity| vec![identity]).map_err(|m| errors.at(stated[0].value.line, stated[0].tag, m))
}

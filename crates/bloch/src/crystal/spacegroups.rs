//! Symmetry operators of common space groups, for CIFs that give only a Hermann–Mauguin
//! symbol or an International Tables number. Generated from gemmi's tables (the default
//! setting gemmi picks for each name, as diffBloch does) by `data/extract_tables.py`.

/// (full H-M symbol, short H-M symbol, IT number, operators).
type SpaceGroupRow = (&'static str, &'static str, u16, &'static [&'static str]);

const SPACE_GROUPS: &[SpaceGroupRow] = include!("../../data/spacegroups.rs");

/// Compares H-M symbols ignoring spaces, underscores and case (`P 21/c`, `P2_1/c`, `p21/c`),
/// and a trailing setting suffix like `:1` or `:H` (the table holds gemmi's default setting).
fn normalise(symbol: &str) -> String {
    let base = symbol.split(':').next().unwrap_or(symbol);
    base.chars().filter(|c| !c.is_whitespace() && *c != '_').collect::<String>().to_ascii_lowercase()
}

/// Operators of the space group named `symbol` (full or short H-M), if tabulated.
pub fn operators_for_symbol(symbol: &str) -> Option<&'static [&'static str]> {
    let key = normalise(symbol);
    if key.is_empty() {
        return None;
    }
    SPACE_GROUPS.iter().find(|(full, short, _, _)| normalise(full) == key || normalise(short) == key).map(|row| row.3)
}

/// Operators of space group number `number` (gemmi's default setting), if tabulated.
pub fn operators_for_number(number: u16) -> Option<&'static [&'static str]> {
    SPACE_GROUPS.iter().find(|row| row.2 == number).map(|row| row.3)
}

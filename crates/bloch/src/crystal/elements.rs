//! Element symbols → atomic number (Z = 1..=103, the range of the Lobato and absorptive tables).

const SYMBOLS: [&str; 103] = [
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga",
    "Ge", "As", "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd",
    "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac",
    "Th", "Pa", "U", "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr",
];

/// The element symbol of atomic number `z` (1..=103).
pub fn element_symbol(z: u8) -> Option<&'static str> {
    SYMBOLS.get(usize::from(z).checked_sub(1)?).copied()
}

/// Atomic number of a bare element symbol, case-insensitive (`D`/`T` count as hydrogen).
fn lookup(symbol: &str) -> Option<u8> {
    if symbol.eq_ignore_ascii_case("D") || symbol.eq_ignore_ascii_case("T") {
        return Some(1);
    }
    let index = SYMBOLS.iter().position(|s| s.eq_ignore_ascii_case(symbol))?;
    u8::try_from(index + 1).ok()
}

/// Atomic number from a CIF type symbol or label: the leading letters, so that charges and
/// site numbers are ignored (`Sr2+` → 38, `O1` → 8, `Si4+` → 14). Two letters are tried
/// before one (`Si1` → Si), except for a label like `OW1`, where `Ow` is no element and `O` is.
pub fn atomic_number(symbol: &str) -> Option<u8> {
    let letters: String = symbol.trim().chars().take_while(char::is_ascii_alphabetic).collect();
    match letters.len() {
        0 => None,
        1 => lookup(&letters),
        _ => lookup(&letters[..2]).or_else(|| lookup(&letters[..1])),
    }
}

/// Atomic number from a CIF `_atom_site_type_symbol`: the leading letters must name an element
/// (charges like `O2-` allowed, but `Xx` is an error rather than a guess).
pub fn atomic_number_strict(symbol: &str) -> Option<u8> {
    let letters: String = symbol.trim().chars().take_while(char::is_ascii_alphabetic).collect();
    if letters.is_empty() || letters.len() > 2 {
        return None;
    }
    lookup(&letters)
}

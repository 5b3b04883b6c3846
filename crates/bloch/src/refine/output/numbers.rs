//! CIF number and string formatting for the refinement outputs: values with standard
//! uncertainties in parentheses (the IUCr rounding rule), plain values, quoted strings, and the
//! equivalent isotropic U of an anisotropic tensor.

use crate::crystal::Cell;

/// Most decimals written for a value without a standard uncertainty: 1e-8 in a fractional
/// coordinate is 1e-7 Å, far below any refinement's precision, and keeps special positions such
/// as 5/6 to well within every reader's tolerance.
pub const PLAIN_DECIMALS: usize = 8;

/// A value without a standard uncertainty: its shortest round-trip decimal form when that has at
/// most [`PLAIN_DECIMALS`] decimals (`0.0085`, `0.833333`, `1.0`), else rounded to
/// [`PLAIN_DECIMALS`] decimals (5/6 → `0.83333333`). Never an exponent, never `-0`.
pub fn format_plain(value: f64) -> String {
    let shortest = format!("{value}");
    let decimals = shortest.split_once('.').map_or(0, |(_, d)| d.len());
    let text = if decimals <= PLAIN_DECIMALS {
        if shortest.contains('.') {
            shortest
        } else {
            format!("{shortest}.0")
        }
    } else {
        format!("{value:.PLAIN_DECIMALS$}")
    };
    strip_negative_zero(text)
}

/// `-0.000` → `0.000`: a rounded-away sign carries no information and reads as noise.
fn strip_negative_zero(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// A value with its standard uncertainty in CIF parentheses notation, rounded by the IUCr rule:
/// the s.u. keeps two significant digits when they read 10–19, else one (0.000034 → 3 in the
/// fifth decimal, 0.019 → 19 in the third), and the value is rounded to the s.u.'s last digit:
/// (0.471256, 0.000034) → `0.47126(3)`, (0.0085, 0.00042) → `0.0085(4)`, (1.234, 0.019) →
/// `1.234(19)`. An s.u. of 0 (or not finite, or negative: callers validate first) gives
/// [`format_plain`]. An s.u. ≥ 10 rounds the value to tens or more (`1200(300)`).
pub fn format_with_su(value: f64, su: f64) -> String {
    if !(su.is_finite() && su > 0.0 && value.is_finite()) {
        return format_plain(value);
    }
    // Decimal exponent of the s.u.'s leading digit, corrected for log10 rounding at powers of 10.
    let mut exponent = su.log10().floor() as i32;
    if su / 10f64.powi(exponent) >= 10.0 {
        exponent += 1;
    } else if su / 10f64.powi(exponent) < 1.0 {
        exponent -= 1;
    }
    let two_digits = (su / 10f64.powi(exponent - 1)).round();
    // decimals: position of the s.u.'s last digit (negative: tens, hundreds, …).
    let (mut decimals, mut digits) = if two_digits <= 19.0 { (1 - exponent, two_digits) } else { (-exponent, (su / 10f64.powi(exponent)).round()) };
    if digits >= 10.0 && two_digits > 19.0 {
        // 9.6 → 10: one significant digit one place up.
        decimals -= 1;
        digits = 1.0;
    }
    if decimals >= 0 {
        let text = format!("{value:.*}", decimals as usize);
        format!("{}({})", strip_negative_zero(text), digits as u64)
    } else {
        let unit = 10f64.powi(-decimals);
        let rounded = (value / unit).round() * unit;
        let zeros = "0".repeat((-decimals) as usize);
        format!("{}({}{zeros})", strip_negative_zero(format!("{rounded:.0}")), digits as u64)
    }
}

/// U_eq = 1/3 Σ_ij U^ij a*_i a*_j (a_i·a_j) (Fischer & Tillmanns 1988) of CIF U_ij
/// (U11, U22, U33, U12, U13, U23) in `cell`, and the coefficient of each component in it (so
/// that a standard uncertainty can be propagated).
pub fn u_equivalent(u: [f64; 6], cell: &Cell) -> (f64, [f64; 6]) {
    let direct = cell.direct_matrix();
    let star = cell.reciprocal_lengths();
    let g = |i: usize, j: usize| (0..3).map(|k| direct[i][k] * direct[j][k]).sum::<f64>();
    // Off-diagonal components appear twice in the double sum.
    let pairs = [(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (0, 1, 2.0), (0, 2, 2.0), (1, 2, 2.0)];
    let coefficients = pairs.map(|(i, j, m)| m * star[i] * star[j] * g(i, j) / 3.0);
    (coefficients.iter().zip(u).map(|(c, u)| c * u).sum(), coefficients)
}

/// The s.u. of U_eq from those of the U_ij, treating them as uncorrelated (the covariances are
/// not passed to the writer; for the usual site symmetries the diagonal terms dominate).
pub fn u_equivalent_su(su: [f64; 6], coefficients: [f64; 6]) -> f64 {
    coefficients.iter().zip(su).map(|(c, s)| (c * s) * (c * s)).sum::<f64>().sqrt()
}

/// A CIF string value: bare when that reads back as the same text, else quoted (`'…'`, `"…"`),
/// else a `;` text field.
pub fn cif_string(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let special_start = text.starts_with(['_', '#', '$', '\'', '"', '[', ']', ';']);
    let reserved = lower == "loop_" || lower == "global_" || lower == "stop_" || lower.starts_with("data_") || lower.starts_with("save_");
    let bare = !text.is_empty() && !special_start && !reserved && text != "." && text != "?" && !text.chars().any(char::is_whitespace);
    if bare {
        text.to_string()
    } else {
        quoted(text)
    }
}

/// `text` always quoted (for values the source quoted, where `.` is text, not null).
pub fn quoted(text: &str) -> String {
    // A quote closes only when followed by whitespace or the end of the line.
    let closes = |q: char| text.contains(&format!("{q} ")) || text.contains(&format!("{q}\t")) || text.ends_with(q);
    if text.contains('\n') || (closes('\'') && closes('"')) {
        format!("\n;{text}\n;\n")
    } else if !closes('\'') {
        format!("'{text}'")
    } else {
        format!("\"{text}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_keep_their_digits() {
        assert_eq!(format_plain(0.0085), "0.0085");
        assert_eq!(format_plain(1.0), "1.0");
        assert_eq!(format_plain(5.0 / 6.0), "0.83333333");
        assert_eq!(format_plain(-1e-12), "0.00000000");
        assert_eq!(format_plain(-0.25), "-0.25");
    }

    #[test]
    fn strings_are_quoted_when_needed() {
        assert_eq!(cif_string("Si1"), "Si1");
        assert_eq!(cif_string("P 32 2 1"), "'P 32 2 1'");
        assert_eq!(cif_string("_x"), "'_x'");
        assert_eq!(cif_string("."), "'.'");
        assert_eq!(cif_string("it's a b"), "'it's a b'");
        assert_eq!(cif_string("a' b"), "\"a' b\"");
    }
}

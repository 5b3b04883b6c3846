//! The shipped element data: standard atomic weights and the Henke/CXRO f1, f2 tables (Z = 1..92),
//! embedded from `crates/refl/data/henke/` and parsed once, on first use.
//!
//! Interpolation follows the CXRO practice that periodictable also uses: f2 log–log in energy,
//! because between edges f2 ∝ photoabsorption cross-section × E, a near power law in E that
//! log–log interpolation follows exactly on the ~1.6 % tabulation mesh; f1 linearly in energy,
//! because f1 changes sign and swings through anomalous-dispersion dips at edges, where a
//! logarithm is undefined. Rows whose f1 is `-9999.` (below ~29 eV: f1 not tabulated) are skipped,
//! so an element's usable range starts at its first row with f1.

use crate::ReflError;
use std::sync::OnceLock;

const ELEMENTS_TXT: &str = include_str!("../../data/henke/elements.txt");
const F1F2_TXT: &str = include_str!("../../data/henke/f1f2.txt");

/// The marker the Henke files use for "f1 not tabulated".
const F1_MISSING: f64 = -9999.0;

/// One element: symbol and standard atomic weight (g/mol).
#[derive(Clone, Debug)]
pub(crate) struct Element {
    pub(crate) symbol: String,
    pub(crate) mass: f64,
}

/// The f1, f2 table of one element, energies non-decreasing (equal energies = an edge step).
#[derive(Clone, Debug, Default)]
pub(crate) struct ScatteringTable {
    energy: Vec<f64>,
    f1: Vec<f64>,
    ln_energy: Vec<f64>,
    ln_f2: Vec<f64>,
}

impl ScatteringTable {
    /// The energy range (eV) where both f1 and f2 are tabulated.
    pub(crate) fn range(&self) -> (f64, f64) {
        (self.energy.first().copied().unwrap_or(f64::NAN), self.energy.last().copied().unwrap_or(f64::NAN))
    }

    /// (f1, f2) at `energy_ev`, or `None` outside [`Self::range`].
    pub(crate) fn at(&self, energy_ev: f64) -> Option<(f64, f64)> {
        let (lo, hi) = self.range();
        if !(energy_ev >= lo && energy_ev <= hi) {
            return None;
        }
        let n = self.energy.len();
        // Segment [j − 1, j] with energy[j − 1] ≤ E < energy[j]; the top end uses the last segment.
        let j = self.energy.partition_point(|&e| e <= energy_ev).clamp(1, n - 1);
        let f1 = lerp(self.energy[j - 1], self.energy[j], self.f1[j - 1], self.f1[j], energy_ev);
        let ln_f2 = lerp(self.ln_energy[j - 1], self.ln_energy[j], self.ln_f2[j - 1], self.ln_f2[j], energy_ev.ln());
        Some((f1, ln_f2.exp()))
    }
}

/// numpy.interp's formula, so the oracle (periodictable) is reproduced to rounding.
fn lerp(x0: f64, x1: f64, y0: f64, y1: f64, x: f64) -> f64 {
    if x1 == x0 {
        return y1;
    }
    (y1 - y0) / (x1 - x0) * (x - x0) + y0
}

/// Everything in `data/henke/`, indexed by Z − 1.
#[derive(Debug)]
pub(crate) struct HenkeData {
    pub(crate) elements: Vec<Element>,
    pub(crate) tables: Vec<ScatteringTable>,
}

impl HenkeData {
    /// Z (1-based) of an element symbol, exact case.
    pub(crate) fn atomic_number(&self, symbol: &str) -> Option<usize> {
        self.elements.iter().position(|e| e.symbol == symbol).map(|i| i + 1)
    }
}

/// The parsed shipped data (parsed on the first call). The data is trusted, but a defect is still
/// reported as an error rather than a panic.
pub(crate) fn data() -> Result<&'static HenkeData, ReflError> {
    static DATA: OnceLock<Result<HenkeData, String>> = OnceLock::new();
    DATA.get_or_init(|| parse(ELEMENTS_TXT, F1F2_TXT))
        .as_ref()
        .map_err(|message| ReflError::Format { what: "shipped Henke data (crates/refl/data/henke)".into(), message: message.clone() })
}

fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn number(file: &str, line: usize, field: Option<&str>) -> Result<f64, String> {
    let field = field.ok_or_else(|| format!("{file} line {line}: missing field"))?;
    field.parse::<f64>().map_err(|_| format!("{file} line {line}: {field:?} is not a number"))
}

fn parse(elements_txt: &str, f1f2_txt: &str) -> Result<HenkeData, String> {
    let mut elements = Vec::new();
    for (line, text) in data_lines(elements_txt) {
        let mut fields = text.split_whitespace();
        let z = number("elements.txt", line, fields.next())?;
        let symbol = fields.next().ok_or_else(|| format!("elements.txt line {line}: missing symbol"))?;
        let mass = number("elements.txt", line, fields.next())?;
        if z != (elements.len() + 1) as f64 || !(mass.is_finite() && mass > 0.0) {
            return Err(format!("elements.txt line {line}: expected Z = {} with a positive mass", elements.len() + 1));
        }
        elements.push(Element { symbol: symbol.to_string(), mass });
    }
    let mut tables: Vec<ScatteringTable> = Vec::with_capacity(elements.len());
    let mut current: Option<(usize, String, usize)> = None; // (Z, symbol, rows promised)
    let mut rows = 0usize;
    let finish = |tables: &[ScatteringTable], current: &Option<(usize, String, usize)>, rows: usize| match current {
        Some((z, symbol, n)) if *n != rows => Err(format!("f1f2.txt: {symbol} (Z = {z}) promises {n} rows, has {rows}")),
        Some((_, symbol, _)) if tables.last().map_or(0, |t| t.energy.len()) < 2 => Err(format!("f1f2.txt: {symbol} has fewer than 2 rows with f1")),
        _ => Ok(()),
    };
    for (line, text) in data_lines(f1f2_txt) {
        let mut fields = text.split_whitespace();
        if let Some(header) = text.strip_prefix('=') {
            finish(&tables, &current, rows)?;
            let mut h = header.split_whitespace();
            let z = number("f1f2.txt", line, h.next())? as usize;
            let symbol = h.next().unwrap_or_default().to_string();
            let n = number("f1f2.txt", line, h.next())? as usize;
            if z != tables.len() + 1 || elements.get(z - 1).map(|e| e.symbol.as_str()) != Some(symbol.as_str()) {
                return Err(format!("f1f2.txt line {line}: block {symbol} (Z = {z}) out of order or not in elements.txt"));
            }
            tables.push(ScatteringTable::default());
            current = Some((z, symbol, n));
            rows = 0;
            continue;
        }
        let table = tables.last_mut().ok_or_else(|| format!("f1f2.txt line {line}: data before the first block header"))?;
        let (e, f1, f2) = (number("f1f2.txt", line, fields.next())?, number("f1f2.txt", line, fields.next())?, number("f1f2.txt", line, fields.next())?);
        rows += 1;
        if f1 == F1_MISSING {
            if !table.energy.is_empty() {
                return Err(format!("f1f2.txt line {line}: f1 missing after tabulated rows"));
            }
            continue;
        }
        if !(e > 0.0 && f1.is_finite() && f2 > 0.0 && f2.is_finite()) || table.energy.last().is_some_and(|&prev| e < prev) {
            return Err(format!("f1f2.txt line {line}: need E > 0 ascending, finite f1, f2 > 0"));
        }
        table.energy.push(e);
        table.f1.push(f1);
        table.ln_energy.push(e.ln());
        table.ln_f2.push(f2.ln());
    }
    finish(&tables, &current, rows)?;
    if tables.len() != elements.len() {
        return Err(format!("f1f2.txt has {} elements, elements.txt {}", tables.len(), elements.len()));
    }
    Ok(HenkeData { elements, tables })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_data_parses_and_covers_z_1_to_92() {
        let d = data().expect("shipped data parses");
        assert_eq!(d.elements.len(), 92);
        assert_eq!(d.atomic_number("Si"), Some(14));
        assert_eq!(d.atomic_number("U"), Some(92));
        // Carbon: first f1 row at 29.2 eV (rows below are -9999.), last at 30 keV.
        let (lo, hi) = d.tables[5].range();
        assert!(lo > 28.8 && lo < 30.0 && hi == 30000.0, "{lo} {hi}");
        // Exact on a tabulated row: C at 284.100 eV has f1 = -4.04882, f2 = 0.146163.
        let (f1, f2) = d.tables[5].at(284.1).expect("in range");
        assert!((f1 + 4.04882).abs() < 1e-12 && (f2 - 0.146163).abs() < 1e-12, "{f1} {f2}");
        assert!(d.tables[5].at(10.0).is_none() && d.tables[5].at(30000.1).is_none());
    }

    #[test]
    fn defects_are_errors_not_panics() {
        let el = "1 H 1.008\n";
        assert!(parse("1 H -1\n", "= 1 H 2\n10 1 1\n20 1 1\n").is_err());
        assert!(parse(el, "= 1 H 3\n10 1 1\n20 1 1\n").is_err()); // row count
        assert!(parse(el, "= 1 H 2\n20 1 1\n10 1 1\n").is_err()); // descending
        assert!(parse(el, "= 1 H 2\n10 1 0\n20 1 1\n").is_err()); // f2 = 0
        assert!(parse(el, "10 1 1\n").is_err()); // no header
        assert!(parse(el, "= 1 H 2\n10 1 1\n20 -9999. 1\n").is_err()); // f1 missing mid-table
        assert!(parse(el, "= 1 He 2\n10 1 1\n20 1 1\n").is_err()); // wrong symbol
        assert!(parse(el, "= 1 H 2\n10 1 1\n20 x 1\n").is_err());
        assert!(parse(el, "= 1 H 2\n10 1 1\n20 1 1\n").is_ok());
    }
}

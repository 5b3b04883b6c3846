//! User-supplied optical constants vs photon energy (the PRSoXR workflow): four columns
//! δ_o, β_o, δ_e, β_e on an ascending energy grid, interpolated linearly or by monotone PCHIP.

use super::interp;
use super::OpticalConstants;
use crate::ReflError;

/// How [`OpticalTable::at`] interpolates between tabulated energies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interpolation {
    /// Piecewise linear in energy (the default).
    #[default]
    Linear,
    /// Monotone piecewise-cubic Hermite (Fritsch–Carlson, as scipy's PchipInterpolator): smooth,
    /// and no overshoot next to an absorption edge.
    Pchip,
}

/// User-supplied optical constants vs energy (the PRSoXR workflow), uniaxial.
#[derive(Clone, Debug, PartialEq)]
pub struct OpticalTable {
    name: String,
    energy: Vec<f64>,
    /// Columns δ_o, β_o, δ_e, β_e.
    columns: [Vec<f64>; 4],
    interpolation: Interpolation,
    /// PCHIP knot derivatives per column (empty unless `interpolation` is `Pchip`).
    slopes: [Vec<f64>; 4],
}

fn to_array(c: &OpticalConstants) -> [f64; 4] {
    [c.delta_o, c.beta_o, c.delta_e, c.beta_e]
}

const COLUMN_NAMES: [&str; 4] = ["delta_o", "beta_o", "delta_e", "beta_e"];

impl OpticalTable {
    /// From columns; energies must be finite, strictly ascending; ≥ 2 rows; all constants finite.
    /// Errors name the table and the row (0-based).
    pub fn new(name: &str, energy_ev: Vec<f64>, values: Vec<OpticalConstants>) -> Result<Self, ReflError> {
        if energy_ev.len() != values.len() {
            return Err(ReflError::input(format!("optical table '{name}'"), format!("has {} energies but {} rows of constants", energy_ev.len(), values.len())));
        }
        Self::build(name, energy_ev, values, |i| format!("optical table '{name}' row {i}"))
    }

    /// Parses text: whitespace/comma separated columns `energy delta_o beta_o delta_e beta_e` (or
    /// 3 columns `energy delta beta` = isotropic); '#' starts a comment; blank lines are skipped.
    /// Errors name the table and the 1-based line number.
    pub fn parse_text(name: &str, text: &str) -> Result<Self, ReflError> {
        let (mut energy, mut values, mut lines) = (Vec::new(), Vec::new(), Vec::new());
        let mut width = None;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let object = || format!("optical table '{name}' line {line}");
            let content = raw.split('#').next().unwrap_or_default();
            let fields: Vec<&str> = content.split(|c: char| c == ',' || c.is_whitespace()).filter(|f| !f.is_empty()).collect();
            if fields.is_empty() {
                continue;
            }
            let numbers = fields
                .iter()
                .map(|f| f.parse::<f64>().map_err(|_| ReflError::input(object(), format!("{f:?} is not a number (comment lines start with '#')"))))
                .collect::<Result<Vec<f64>, _>>()?;
            if numbers.len() != 3 && numbers.len() != 5 {
                return Err(ReflError::input(object(), format!("has {} columns; expected energy delta_o beta_o delta_e beta_e, or energy delta beta", numbers.len())));
            }
            if *width.get_or_insert(numbers.len()) != numbers.len() {
                return Err(ReflError::input(object(), format!("has {} columns but earlier lines have {}", numbers.len(), width.unwrap_or(0))));
            }
            energy.push(numbers[0]);
            values.push(match numbers[..] {
                [_, delta, beta] => OpticalConstants { delta_o: delta, beta_o: beta, delta_e: delta, beta_e: beta },
                [_, delta_o, beta_o, delta_e, beta_e] => OpticalConstants { delta_o, beta_o, delta_e, beta_e },
                _ => OpticalConstants::default(),
            });
            lines.push(line);
        }
        Self::build(name, energy, values, |i| format!("optical table '{name}' line {}", lines.get(i).copied().unwrap_or(0)))
    }

    fn build(name: &str, energy: Vec<f64>, values: Vec<OpticalConstants>, row: impl Fn(usize) -> String) -> Result<Self, ReflError> {
        if energy.len() < 2 {
            return Err(ReflError::input(format!("optical table '{name}'"), format!("needs at least 2 rows, has {}", energy.len())));
        }
        for (i, &e) in energy.iter().enumerate() {
            if !(e.is_finite() && e > 0.0) {
                return Err(ReflError::input(row(i), format!("energy {e} eV must be a finite positive number")));
            }
            if i > 0 && e <= energy[i - 1] {
                return Err(ReflError::input(row(i), format!("energy {e} eV is not above the previous row's {} eV (energies must ascend strictly)", energy[i - 1])));
            }
            if let Some(k) = to_array(&values[i]).iter().position(|v| !v.is_finite()) {
                return Err(ReflError::input(row(i), format!("{} is not a finite number", COLUMN_NAMES[k])));
            }
        }
        let columns = std::array::from_fn(|k| values.iter().map(|v| to_array(v)[k]).collect());
        Ok(OpticalTable { name: name.to_string(), energy, columns, interpolation: Interpolation::Linear, slopes: Default::default() })
    }

    /// The same table interpolated with `interpolation`.
    pub fn with_interpolation(mut self, interpolation: Interpolation) -> Self {
        self.interpolation = interpolation;
        self.slopes = match interpolation {
            Interpolation::Linear => Default::default(),
            Interpolation::Pchip => std::array::from_fn(|k| interp::pchip_slopes(&self.energy, &self.columns[k])),
        };
        self
    }

    /// Interpolated constants at `energy_ev`; outside the table range → error naming the table and energy.
    pub fn at(&self, energy_ev: f64) -> Result<OpticalConstants, ReflError> {
        let (lo, hi) = self.energy_range();
        if !(energy_ev >= lo && energy_ev <= hi) {
            return Err(ReflError::input(format!("optical table '{}' energy", self.name), format!("{energy_ev} eV is outside the table range {lo}–{hi} eV")));
        }
        let j = interp::segment(&self.energy, energy_ev);
        let v: [f64; 4] = std::array::from_fn(|k| match self.interpolation {
            Interpolation::Linear => interp::linear(&self.energy, &self.columns[k], j, energy_ev),
            Interpolation::Pchip => interp::hermite(&self.energy, &self.columns[k], &self.slopes[k], j, energy_ev),
        });
        Ok(OpticalConstants { delta_o: v[0], beta_o: v[1], delta_e: v[2], beta_e: v[3] })
    }

    /// The table's name, as used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tabulated energies (eV), strictly ascending.
    pub fn energies(&self) -> &[f64] {
        &self.energy
    }

    /// The tabulated constants, one per energy.
    pub fn values(&self) -> Vec<OpticalConstants> {
        (0..self.energy.len())
            .map(|i| OpticalConstants { delta_o: self.columns[0][i], beta_o: self.columns[1][i], delta_e: self.columns[2][i], beta_e: self.columns[3][i] })
            .collect()
    }

    /// The interpolation in use.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// (first, last) tabulated energy, eV.
    pub fn energy_range(&self) -> (f64, f64) {
        (self.energy[0], self.energy[self.energy.len() - 1])
    }
}

//! Measured reflectivity data from plain text columns: q, R [, dR [, dQ]].
//!
//! Columns are separated by whitespace, commas or semicolons; lines that are blank or start with
//! `#`, `%` or `//` are comments. Every line must have the same number of columns (2 to 4). Units
//! are Å⁻¹ for q and dQ (dQ is the FWHM, see [`crate::resolution`]). Anything malformed is an
//! error naming the file and the line. (ORSO `.ort` files come with the reflectivity engine issue.)

use crate::ReflError;

/// One measured curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    /// Where it came from (file name), used in error messages.
    pub name: String,
    /// Momentum transfer, Å⁻¹.
    pub q: Vec<f64>,
    /// Reflectivity.
    pub r: Vec<f64>,
    /// One-standard-deviation uncertainty of R, when given.
    pub dr: Option<Vec<f64>>,
    /// Resolution (FWHM, Å⁻¹) per point, when given.
    pub dq: Option<Vec<f64>>,
}

fn is_comment(line: &str) -> bool {
    line.is_empty() || line.starts_with('#') || line.starts_with('%') || line.starts_with("//")
}

/// Parses column text; `name` labels errors (`"run42.dat line 17: ..."`).
pub fn parse_columns(text: &str, name: &str) -> Result<Dataset, ReflError> {
    let mut data = Dataset { name: name.to_owned(), ..Default::default() };
    let (mut dr, mut dq) = (Vec::new(), Vec::new());
    let mut n_columns = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if is_comment(line) {
            continue;
        }
        let object = || format!("{name} line {}", index + 1);
        let fields: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|f| !f.is_empty()).collect();
        let values = fields.iter().map(|f| f.parse::<f64>().map_err(|_| ReflError::input(object(), format!("{f:?} is not a number")))).collect::<Result<Vec<f64>, _>>()?;
        if !(2..=4).contains(&values.len()) {
            return Err(ReflError::input(object(), format!("has {} columns; expected q R [dR [dQ]]", values.len())));
        }
        match n_columns {
            None => n_columns = Some(values.len()),
            Some(n) if n != values.len() => {
                return Err(ReflError::input(object(), format!("has {} columns but earlier lines have {n}", values.len())));
            }
            Some(_) => {}
        }
        if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
            return Err(ReflError::input(object(), format!("column {} is not finite", bad + 1)));
        }
        if values[0] <= 0.0 {
            return Err(ReflError::input(object(), format!("q = {} must be > 0", values[0])));
        }
        if values.len() >= 3 && values[2] <= 0.0 {
            return Err(ReflError::input(object(), format!("dR = {} must be > 0", values[2])));
        }
        if values.len() == 4 && values[3] < 0.0 {
            return Err(ReflError::input(object(), format!("dQ = {} must be ≥ 0", values[3])));
        }
        data.q.push(values[0]);
        data.r.push(values[1]);
        if let Some(&v) = values.get(2) {
            dr.push(v);
        }
        if let Some(&v) = values.get(3) {
            dq.push(v);
        }
    }
    if data.q.is_empty() {
        return Err(ReflError::input(name, "contains no data lines"));
    }
    data.dr = (!dr.is_empty()).then_some(dr);
    data.dq = (!dq.is_empty()).then_some(dq);
    Ok(data)
}

/// Writes the dataset as tab-separated columns with a header comment (round-trips through
/// [`parse_columns`] exactly: values are printed with full precision).
pub fn write_columns(data: &Dataset) -> String {
    let mut header = String::from("# q_inv_A\tR");
    if data.dr.is_some() {
        header.push_str("\tdR");
    }
    if data.dq.is_some() {
        header.push_str("\tdQ_fwhm_inv_A");
    }
    let mut out = header + "\n";
    for i in 0..data.q.len() {
        out.push_str(&format!("{:e}\t{:e}", data.q[i], data.r[i]));
        for column in [&data.dr, &data.dq].into_iter().flatten() {
            out.push_str(&format!("\t{:e}", column[i]));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &str) -> String {
        match parse_columns(text, "run.dat") {
            Err(ReflError::Input(e)) => format!("{}: {}", e.object, e.problem),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn reads_two_to_four_columns_with_comments() {
        let d = parse_columns("# header\n0.01 0.9\n\n0.02, 0.5\n", "a").unwrap();
        assert_eq!((d.q, d.r, d.dr, d.dq), (vec![0.01, 0.02], vec![0.9, 0.5], None, None));
        let d = parse_columns("% x\n0.01\t0.9\t0.01\t1e-4\n0.02;0.5;0.02;2e-4\n", "b").unwrap();
        assert_eq!(d.dr, Some(vec![0.01, 0.02]));
        assert_eq!(d.dq, Some(vec![1e-4, 2e-4]));
        assert_eq!(parse_columns(&write_columns(&d), "c").unwrap().dq, d.dq);
    }

    #[test]
    fn malformed_lines_are_named() {
        assert!(object("0.01 0.9\n0.02 abc\n").starts_with("run.dat line 2: \"abc\""));
        assert!(object("0.01 0.9\n0.02 0.5 0.1\n").starts_with("run.dat line 2: has 3 columns but earlier"));
        assert!(object("0.01\n").starts_with("run.dat line 1: has 1 columns"));
        assert!(object("# c\n-0.01 0.9\n").starts_with("run.dat line 2: q = -0.01"));
        assert!(object("0.01 0.9 0\n").starts_with("run.dat line 1: dR = 0"));
        assert!(object("0.01 NaN\n").starts_with("run.dat line 1: column 2"));
        assert!(object("# only a comment\n").starts_with("run.dat: contains no data"));
    }
}

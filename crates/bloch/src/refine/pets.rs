//! PETS2 `.cif_pets` files: the cell, wavelength, UB matrix, the virtual-frame geometry loop
//! (`_diffrn_zone_axis_*`) and the reflection loop (`h k l I sigma frame`), read as diffBloch
//! 0.2.0rc1 reads them (`io/pets.py`, `io/record.py`), with its validation, and errors that name
//! the file and the line.
//!
//! The file is CIF syntax, but only a small part of it is used, so a focused reader is kept here
//! rather than reusing the crystal CIF reader (whose document model is private to the crystal
//! module and tuned to atom sites): data block, `_tag value` items, `;` text fields, quoted values
//! and `loop_` tables. PETS2 writes its processing summary (`rotation axis position`, `data
//! collection geometry`, `dstarmax`, `mosaicity`) as free text inside a text field; it is searched
//! for those keys as diffBloch does, in `_diffrn_measurement_details` then
//! `_diffrn_reflns_reduction_process`.

use std::collections::HashMap;

use super::RefineError;

/// How the virtual frames were collected (PETS2's `data collection geometry:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionGeometry {
    /// Continuous rotation about the goniometer axis (lab x after the axis correction).
    ContinuousRotation,
    /// Precession about the beam at a fixed cone semi-angle.
    Precession,
}

/// One virtual frame (a `_diffrn_zone_axis` row).
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneAxis {
    /// `_diffrn_zone_axis_id`.
    pub id: i64,
    /// Zone axis u, v, w.
    pub uvw: [f64; 3],
    /// Integration semi-angle (degrees); diffBloch uses the first frame's for every frame.
    pub precession_angle_deg: f64,
    /// Goniometer α, β, ω (degrees).
    pub alpha_deg: f64,
    /// Goniometer β (degrees).
    pub beta_deg: f64,
    /// Goniometer ω (degrees).
    pub omega_deg: f64,
    /// PETS frame scale (read, unused by diffBloch's metric).
    pub scale: f64,
    /// 1-based line of the row.
    pub line: usize,
}

/// One measured reflection (a `_refln` row).
#[derive(Debug, Clone, PartialEq)]
pub struct Reflection {
    /// Miller indices.
    pub hkl: [i32; 3],
    /// Integrated intensity.
    pub intensity: f64,
    /// Its standard uncertainty (≥ 0).
    pub sigma: f64,
    /// The frame (`_refln_zone_axis_id`).
    pub frame_id: i64,
    /// 1-based line of the row.
    pub line: usize,
}

/// A parsed `.cif_pets` file.
#[derive(Debug, Clone, PartialEq)]
pub struct PetsData {
    /// The file, as named in errors.
    pub file: String,
    /// a, b, c (Å), α, β, γ (degrees).
    pub cell: [f64; 6],
    /// Electron wavelength (Å).
    pub wavelength_a: f64,
    /// UB matrix (rows), Å⁻¹.
    pub ub: [[f64; 3]; 3],
    /// Collection geometry (continuous rotation when the file does not say).
    pub geometry: CollectionGeometry,
    /// PETS2's `rotation axis position:` (degrees), when written.
    pub rotation_axis_position_deg: Option<f64>,
    /// PETS2's `dstarmax:` (Å⁻¹), when written.
    pub dstar_max: Option<f64>,
    /// PETS2's `mosaicity:` (degrees), when written.
    pub mosaicity_deg: Option<f64>,
    /// The virtual frames, in file order.
    pub frames: Vec<ZoneAxis>,
    /// The reflections, in file order.
    pub reflections: Vec<Reflection>,
}

impl PetsData {
    /// The integration semi-angle (degrees): the first frame's precession angle, as diffBloch
    /// (`ExperimentalRecord.integration_semiangle`); [`PetsData::parse`] checked they agree.
    pub fn semiangle_deg(&self) -> f64 {
        self.frames.first().map_or(f64::NAN, |f| f.precession_angle_deg)
    }

    /// The rotation-axis azimuth, which diffBloch refuses to assume: an error naming the file
    /// when PETS did not write it.
    pub fn require_rotation_axis_position(&self) -> Result<f64, RefineError> {
        self.rotation_axis_position_deg.ok_or_else(|| RefineError::Pets {
            file: self.file.clone(),
            line: 0,
            message: "a 'rotation axis position:' value is required (every rocking-curve tilt is composed about x, so the goniometer-axis azimuth cannot be assumed)".to_owned(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `_tag`.
    Tag,
    /// `loop_`.
    Loop,
    /// `data_name`.
    Data,
    /// Any value (bare, quoted or a text field).
    Value,
}

#[derive(Debug, Clone)]
struct Token {
    text: String,
    line: usize,
    kind: Kind,
}

/// The file's CIF tokens with their 1-based lines, from the crate's CIF lexer (a `.cif_pets` is
/// CIF 1.1): tags lower-cased, text fields and quoted strings as values.
fn tokenize(file: &str, text: &str) -> Result<Vec<Token>, RefineError> {
    use crate::crystal::cif::lexer::{self, TokenKind};
    let err = |line: usize, message: String| RefineError::Pets { file: file.to_owned(), line, message };
    let tokens = lexer::tokenize(text).map_err(|(line, token, message)| err(line, format!("{message} ({token})")))?;
    tokens
        .into_iter()
        .map(|t| {
            let (text, kind) = match t.kind {
                TokenKind::Tag(tag) => (tag, Kind::Tag),
                TokenKind::Value { text, .. } => (text, Kind::Value),
                TokenKind::Loop => ("loop_".to_owned(), Kind::Loop),
                TokenKind::Data(name) => (format!("data_{name}"), Kind::Data),
                TokenKind::Unsupported(word) => return Err(err(t.line, format!("{word}: not used in PETS files"))),
            };
            Ok(Token { text, line: t.line, kind })
        })
        .collect()
}

/// A `loop_` table: lower-cased tags and rows of (value, line).
struct Table {
    tags: Vec<String>,
    rows: Vec<Vec<(String, usize)>>,
    line: usize,
}

/// The single data block: items by lower-cased tag, and loops.
struct Block {
    items: HashMap<String, (String, usize)>,
    loops: Vec<Table>,
}

fn parse_block(file: &str, tokens: &[Token]) -> Result<Block, RefineError> {
    let err = |line: usize, message: String| RefineError::Pets { file: file.to_owned(), line, message };
    let mut block = Block { items: HashMap::new(), loops: Vec::new() };
    let mut seen_data = false;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        match token.kind {
            Kind::Data => {
                // diffBloch reads the file's sole block (gemmi `sole_block`).
                if seen_data {
                    return Err(err(token.line, format!("a second data block ({}); a PETS file holds one", token.text)));
                }
                seen_data = true;
                i += 1;
            }
            Kind::Tag => {
                let Some(value) = tokens.get(i + 1).filter(|t| t.kind == Kind::Value) else {
                    return Err(err(token.line, format!("{}: has no value", token.text)));
                };
                let tag = token.text.to_ascii_lowercase();
                if block.items.contains_key(&tag) {
                    return Err(err(token.line, format!("{}: given twice", token.text)));
                }
                block.items.insert(tag, (value.text.clone(), value.line));
                i += 2;
            }
            Kind::Loop => {
                let line = token.line;
                i += 1;
                let mut tags = Vec::new();
                while let Some(t) = tokens.get(i).filter(|t| t.kind == Kind::Tag) {
                    tags.push(t.text.to_ascii_lowercase());
                    i += 1;
                }
                if tags.is_empty() {
                    return Err(err(line, "loop_ without tags".to_owned()));
                }
                let mut values = Vec::new();
                while let Some(t) = tokens.get(i).filter(|t| t.kind == Kind::Value) {
                    values.push((t.text.clone(), t.line));
                    i += 1;
                }
                if values.len() % tags.len() != 0 {
                    // Name the line of the incomplete last row.
                    let start = values.len() - values.len() % tags.len();
                    return Err(err(
                        values[start].1,
                        format!("loop row has {} value(s) where the loop ({}, …) has {} column(s)", values.len() % tags.len(), tags[0], tags.len()),
                    ));
                }
                let rows = values.chunks(tags.len()).map(<[_]>::to_vec).collect::<Vec<_>>();
                // A row split across lines is legal CIF, but PETS writes one row per line; a row
                // spread over several lines almost always means a missing value on the line above.
                for row in &rows {
                    if row.iter().any(|(_, l)| *l != row[0].1) {
                        return Err(err(row[0].1, format!("loop row does not have the {} values of the loop ({}, …) on its line", tags.len(), tags[0])));
                    }
                }
                block.loops.push(Table { tags, rows, line });
            }
            Kind::Value => return Err(err(token.line, format!("value {:?} without a tag", token.text))),
        }
    }
    if !seen_data {
        return Err(err(1, "no data_ block".to_owned()));
    }
    Ok(block)
}

/// A CIF number: the nominal value of `1.234(5)`; `?` and `.` are missing.
fn number(text: &str) -> Option<f64> {
    let nominal = match text.find('(') {
        Some(p) if text.ends_with(')') => &text[..p],
        _ => text,
    };
    nominal.parse::<f64>().ok()
}

struct Reader<'a> {
    file: &'a str,
    block: &'a Block,
}

impl Reader<'_> {
    fn err(&self, line: usize, message: String) -> RefineError {
        RefineError::Pets { file: self.file.to_owned(), line, message }
    }

    fn required_number(&self, tag: &str) -> Result<f64, RefineError> {
        let (text, line) = self.block.items.get(tag).ok_or_else(|| self.err(0, format!("{tag}: required item is missing")))?;
        let value = number(text).ok_or_else(|| self.err(*line, format!("{tag}: not a number ({text:?})")))?;
        if value.is_finite() { Ok(value) } else { Err(self.err(*line, format!("{tag}: must be finite ({text:?})"))) }
    }

    /// The loop holding `first_tag`, with the column index of each of `columns`.
    fn table(&self, first_tag: &str, columns: &[&str]) -> Result<(&Table, Vec<usize>), RefineError> {
        let table = self
            .block
            .loops
            .iter()
            .find(|t| t.tags.iter().any(|tag| tag == first_tag))
            .ok_or_else(|| self.err(0, format!("no loop with {first_tag}")))?;
        let index = columns
            .iter()
            .map(|c| table.tags.iter().position(|t| t == c).ok_or_else(|| self.err(table.line, format!("the {first_tag} loop has no {c} column"))))
            .collect::<Result<Vec<_>, _>>()?;
        if table.rows.is_empty() {
            return Err(self.err(table.line, format!("the {first_tag} loop has no rows")));
        }
        Ok((table, index))
    }

    /// The free-text summary value after `key:` in the first details field that mentions it.
    fn summary(&self, key: &str) -> Option<(String, usize)> {
        ["_diffrn_measurement_details", "_diffrn_reflns_reduction_process"].iter().find_map(|tag| {
            let (text, line) = self.block.items.get(*tag)?;
            summary_value(text, key).map(|v| (v, *line))
        })
    }

    fn summary_number(&self, key: &str) -> Result<Option<f64>, RefineError> {
        match self.summary(key) {
            None => Ok(None),
            Some((text, line)) => {
                let word = text.split_whitespace().next().unwrap_or("");
                let value = word.parse::<f64>().map_err(|_| self.err(line, format!("'{key}:' is not followed by a number ({word:?})")))?;
                Ok(Some(value))
            }
        }
    }
}

/// The text after `key` (one or more words separated by any whitespace, then a colon, case
/// insensitive) up to the end of its line, as diffBloch's regular expressions find it.
fn summary_value(text: &str, key: &str) -> Option<String> {
    let words: Vec<String> = key.split_whitespace().map(str::to_ascii_lowercase).collect();
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        let Some(colon) = lower.find(':') else { continue };
        let head: Vec<&str> = lower[..colon].split_whitespace().collect();
        if head.len() >= words.len() && head[head.len() - words.len()..].iter().zip(&words).all(|(a, b)| a == b) {
            return Some(line[colon + 1..].trim().to_owned());
        }
    }
    None
}

fn int_in(reader: &Reader<'_>, tag: &str, (text, line): &(String, usize)) -> Result<i64, RefineError> {
    text.parse::<i64>().map_err(|_| reader.err(*line, format!("{tag}: not an integer ({text:?})")))
}

fn float_in(reader: &Reader<'_>, tag: &str, (text, line): &(String, usize)) -> Result<f64, RefineError> {
    match number(text) {
        Some(v) if v.is_finite() => Ok(v),
        _ => Err(reader.err(*line, format!("{tag}: not a finite number ({text:?})"))),
    }
}

impl PetsData {
    /// Parses the text of a `.cif_pets` file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, RefineError> {
        let tokens = tokenize(file, text)?;
        let block = parse_block(file, &tokens)?;
        let reader = Reader { file, block: &block };
        let cell_tags = ["_cell_length_a", "_cell_length_b", "_cell_length_c", "_cell_angle_alpha", "_cell_angle_beta", "_cell_angle_gamma"];
        let mut cell = [0.0; 6];
        for (value, tag) in cell.iter_mut().zip(cell_tags) {
            *value = reader.required_number(tag)?;
        }
        let wavelength_a = reader.required_number("_diffrn_radiation_wavelength")?;
        if wavelength_a <= 0.0 {
            return Err(reader.err(block.items["_diffrn_radiation_wavelength"].1, "_diffrn_radiation_wavelength: must be positive".to_owned()));
        }
        let mut ub = [[0.0; 3]; 3];
        for (r, row) in ub.iter_mut().enumerate() {
            for (c, value) in row.iter_mut().enumerate() {
                *value = reader.required_number(&format!("_diffrn_orient_matrix_ub_{}{}", r + 1, c + 1))?;
            }
        }
        let geometry = match reader.summary("data collection geometry") {
            None => CollectionGeometry::ContinuousRotation,
            Some((value, line)) => {
                let canonical: String = value.split(|c: char| c.is_whitespace() || c == '_' || c == '-' || c == ';').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_").to_ascii_lowercase();
                match canonical.as_str() {
                    "continuous_rotation" => CollectionGeometry::ContinuousRotation,
                    "precession" => CollectionGeometry::Precession,
                    _ => return Err(reader.err(line, format!("data collection geometry must be 'continuous rotation' or 'precession' (got {value:?})"))),
                }
            }
        };
        let rotation_axis_position_deg = match reader.summary_number("rotation axis position")? {
            Some(v) => Some(v),
            None => reader.summary_number("tilt axis position")?,
        };
        let dstar_max = reader.summary_number("dstarmax")?;
        let mosaicity_deg = reader.summary_number("mosaicity")?;

        let zone_columns = [
            "_diffrn_zone_axis_id",
            "_diffrn_zone_axis_u",
            "_diffrn_zone_axis_v",
            "_diffrn_zone_axis_w",
            "_diffrn_zone_axis_precession_angle",
            "_diffrn_zone_axis_alpha",
            "_diffrn_zone_axis_beta",
            "_diffrn_zone_axis_omega",
            "_diffrn_zone_axis_scale",
        ];
        let (table, col) = reader.table("_diffrn_zone_axis_id", &zone_columns)?;
        let mut frames = Vec::with_capacity(table.rows.len());
        for row in &table.rows {
            let f = |k: usize| float_in(&reader, zone_columns[k], &row[col[k]]);
            let line = row[0].1;
            let frame = ZoneAxis {
                id: int_in(&reader, zone_columns[0], &row[col[0]])?,
                uvw: [f(1)?, f(2)?, f(3)?],
                precession_angle_deg: f(4)?,
                alpha_deg: f(5)?,
                beta_deg: f(6)?,
                omega_deg: f(7)?,
                scale: f(8)?,
                line,
            };
            if frame.precession_angle_deg <= 0.0 {
                return Err(reader.err(line, format!("frame {}: the precession (integration) angle must be positive", frame.id)));
            }
            if let Some(first) = frames.first().map(|f: &ZoneAxis| f.precession_angle_deg) {
                // diffBloch uses one integration semi-angle for every frame (atol 1e-9).
                if (frame.precession_angle_deg - first).abs() > 1e-9 {
                    return Err(reader.err(line, format!("frame {}: precession angle {} differs from the first frame's {first}; it must be constant", frame.id, frame.precession_angle_deg)));
                }
            }
            if let Some(other) = frames.iter().find(|f: &&ZoneAxis| f.id == frame.id) {
                return Err(reader.err(line, format!("frame id {} already used on line {}", frame.id, other.line)));
            }
            frames.push(frame);
        }

        let refl_columns = ["_refln_index_h", "_refln_index_k", "_refln_index_l", "_refln_intensity_meas", "_refln_intensity_sigma", "_refln_zone_axis_id"];
        let (table, col) = reader.table("_refln_index_h", &refl_columns)?;
        let mut reflections = Vec::with_capacity(table.rows.len());
        for row in &table.rows {
            let line = row[0].1;
            let index = |k: usize| -> Result<i32, RefineError> {
                let v = int_in(&reader, refl_columns[k], &row[col[k]])?;
                i32::try_from(v).ok().filter(|v| v.abs() < 1 << 20).ok_or_else(|| reader.err(line, format!("{}: {v} is out of range", refl_columns[k])))
            };
            let reflection = Reflection {
                hkl: [index(0)?, index(1)?, index(2)?],
                intensity: float_in(&reader, refl_columns[3], &row[col[3]])?,
                sigma: float_in(&reader, refl_columns[4], &row[col[4]])?,
                frame_id: int_in(&reader, refl_columns[5], &row[col[5]])?,
                line,
            };
            if reflection.sigma < 0.0 {
                return Err(reader.err(line, format!("_refln_intensity_sigma: must be non-negative (got {})", reflection.sigma)));
            }
            if !frames.iter().any(|f| f.id == reflection.frame_id) {
                return Err(reader.err(line, format!("reflection {:?} names frame {}, which the _diffrn_zone_axis loop does not declare", reflection.hkl, reflection.frame_id)));
            }
            reflections.push(reflection);
        }
        // diffBloch builds one observed pattern per frame and refuses a frame without reflections.
        if let Some(empty) = frames.iter().find(|f| !reflections.iter().any(|r| r.frame_id == f.id)) {
            return Err(reader.err(empty.line, format!("frame {} has no reflections in the _refln loop", empty.id)));
        }
        Ok(Self { file: file.to_owned(), cell, wavelength_a, ub, geometry, rotation_axis_position_deg, dstar_max, mosaicity_deg, frames, reflections })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "data_x
_cell_length_a 4.0
_cell_length_b 4.0
_cell_length_c 4.0
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_diffrn_radiation_wavelength 0.02508
_diffrn_orient_matrix_UB_11 0.25
_diffrn_orient_matrix_UB_12 0
_diffrn_orient_matrix_UB_13 0
_diffrn_orient_matrix_UB_21 0
_diffrn_orient_matrix_UB_22 0.25
_diffrn_orient_matrix_UB_23 0
_diffrn_orient_matrix_UB_31 0
_diffrn_orient_matrix_UB_32 0
_diffrn_orient_matrix_UB_33 0.25
_diffrn_measurement_details
;
data collection geometry: continuous rotation
rotation axis position: 12.5
;
loop_
_diffrn_zone_axis_id
_diffrn_zone_axis_u
_diffrn_zone_axis_v
_diffrn_zone_axis_w
_diffrn_zone_axis_precession_angle
_diffrn_zone_axis_alpha
_diffrn_zone_axis_beta
_diffrn_zone_axis_omega
_diffrn_zone_axis_scale
1 0 0 1 1.000 -2.0 0.0 0.0 1.0
2 0 0 1 1.000 0.0 0.0 0.0 1.0
loop_
_refln_index_h
_refln_index_k
_refln_index_l
_refln_intensity_meas
_refln_intensity_sigma
_refln_zone_axis_id
 1 0 0 10.5 1.0 1
 0 1 0 3.25(2) 0.5 2
";

    #[test]
    fn reads_the_items_loops_and_summary() {
        let data = PetsData::parse("x.cif_pets", MINIMAL).unwrap();
        assert_eq!(data.cell, [4.0, 4.0, 4.0, 90.0, 90.0, 90.0]);
        assert_eq!(data.ub[2][2], 0.25);
        assert_eq!(data.rotation_axis_position_deg, Some(12.5));
        assert_eq!(data.geometry, CollectionGeometry::ContinuousRotation);
        assert_eq!(data.frames.len(), 2);
        assert_eq!(data.frames[0].alpha_deg, -2.0);
        assert_eq!(data.reflections[1].intensity, 3.25);
        assert_eq!(data.reflections[1].line, 43);
    }

    #[test]
    fn errors_name_the_line() {
        let bad_row = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 x 3.25 0.5 2");
        let err = PetsData::parse("x.cif_pets", &bad_row).unwrap_err().to_string();
        assert!(err.contains("line 43") && err.contains("_refln_index_l"), "{err}");
        let short_row = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 2");
        let err = PetsData::parse("x.cif_pets", &short_row).unwrap_err().to_string();
        assert!(err.contains("line 43"), "{err}");
        let unknown_frame = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 0.5 7");
        let err = PetsData::parse("x.cif_pets", &unknown_frame).unwrap_err().to_string();
        assert!(err.contains("line 43") && err.contains("frame 7"), "{err}");
        let empty_frame = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 0.5 1");
        let err = PetsData::parse("x.cif_pets", &empty_frame).unwrap_err().to_string();
        assert!(err.contains("frame 2 has no reflections"), "{err}");
        let no_wavelength = MINIMAL.replace("_diffrn_radiation_wavelength 0.02508\n", "");
        assert!(PetsData::parse("x.cif_pets", &no_wavelength).unwrap_err().to_string().contains("_diffrn_radiation_wavelength"));
        let unclosed = MINIMAL.replace("rotation axis position: 12.5\n;", "rotation axis position: 12.5");
        assert!(PetsData::parse("x.cif_pets", &unclosed).is_err());
    }
}

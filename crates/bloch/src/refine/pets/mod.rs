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

use super::RefineError;

mod reader;
#[cfg(test)]
mod tests;

use reader::{float_in, int_in, parse_block, tokenize, Reader};

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
                let canonical: String =
                    value.split(|c: char| c.is_whitespace() || c == '_' || c == '-' || c == ';').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_").to_ascii_lowercase();
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
                    return Err(reader
                        .err(line, format!("frame {}: precession angle {} differs from the first frame's {first}; it must be constant", frame.id, frame.precession_angle_deg)));
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

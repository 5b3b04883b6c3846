//! `scatterlab bloch simulate --cif f.cif --kv 200 --zone 0,0,1 --thickness 100,200 …`: one
//! static zone-axis case built from flags by `scatterlab_bloch::zone::case_from_zone` (the same
//! function the app's Bloch workspace calls, so the two can never disagree) and run through the
//! same path as a cases file on disk. The orientation recipe is documented there.

use std::path::{Path, PathBuf};

use scatterlab_bloch::parse_cif;
use scatterlab_bloch::simulate::CasesFile;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase, DEFAULT_G_MAX, DEFAULT_SG_MAX};
use scatterlab_bloch::BlochError;

/// The flags that describe one case from a CIF (with `--cif`, in place of a cases file).
#[derive(clap::Args, Debug, Default)]
pub struct CifFlags {
    /// A CIF file: simulate one static zone-axis case from the flags below instead of a cases file.
    #[arg(long, value_name = "FILE")]
    pub cif: Option<PathBuf>,
    /// With --cif: accelerating voltage in kV (e.g. 200).
    #[arg(long, value_name = "KV", allow_hyphen_values = true)]
    pub kv: Option<f64>,
    /// With --cif: zone axis U,V,W (real-space direction along the beam, towards the gun).
    #[arg(long, value_name = "U,V,W", value_delimiter = ',', allow_hyphen_values = true)]
    pub zone: Vec<i32>,
    /// With --cif: reflection H,K,L whose direction (made perpendicular to the zone axis) is lab +x
    /// [default: the first of (100), (010), (001) in the zone, else the least parallel to it].
    /// Only matters with --tilt (a rotation about the beam changes no intensity).
    #[arg(long = "ref", value_name = "H,K,L", value_delimiter = ',', allow_hyphen_values = true)]
    pub reference: Vec<i32>,
    /// With --cif: tilt TX,TY in degrees about lab x then y, O = R_x(TX) R_y(TY) O_zone [default: 0,0].
    #[arg(long, value_name = "TX,TY", value_delimiter = ',', allow_hyphen_values = true)]
    pub tilt: Vec<f64>,
    /// With --cif: crystal thicknesses in Å, comma-separated (e.g. 100,200).
    #[arg(long, value_name = "T1,T2,…", value_delimiter = ',', allow_hyphen_values = true)]
    pub thickness: Vec<f64>,
    /// With --cif: beam radius |g| ≤ G_MAX in Å⁻¹ (the cases file's g_solve_invA) [default: 1.6,
    /// the Bloch fixture's usual value]. The structure factors are tabulated to 2·G_MAX + 0.5.
    #[arg(long, value_name = "G_MAX", allow_hyphen_values = true)]
    pub g_max: Option<f64>,
    /// With --cif: excitation-error radius |Sg| ≤ SG_MAX in Å⁻¹ [default: 0.04, the fixture's usual
    /// static value; diffBloch's rocking curves use 0.01].
    #[arg(long, value_name = "SG_MAX", allow_hyphen_values = true)]
    pub sg_max: Option<f64>,
    /// With --cif: absorptive structure factors (expm only).
    #[arg(long)]
    pub absorption: bool,
}

impl CifFlags {
    /// The case flags given (everything but `--cif`), by name: with a cases file each is an error.
    pub fn given(&self) -> Vec<&'static str> {
        let flags = [
            ("--kv", self.kv.is_some()),
            ("--zone", !self.zone.is_empty()),
            ("--ref", !self.reference.is_empty()),
            ("--tilt", !self.tilt.is_empty()),
            ("--thickness", !self.thickness.is_empty()),
            ("--g-max", self.g_max.is_some()),
            ("--sg-max", self.sg_max.is_some()),
            ("--absorption", self.absorption),
        ];
        flags.iter().filter(|(_, given)| *given).map(|(name, _)| *name).collect()
    }
}

fn triple<T: Copy>(values: &[T], flag: &str, what: &str) -> Result<Option<[T; 3]>, String> {
    match values {
        [] => Ok(None),
        [a, b, c] => Ok(Some([*a, *b, *c])),
        _ => Err(format!("{flag}: expected three integers {what} (got {} values)", values.len())),
    }
}

/// The cases file for the flags: one crystal (named after the CIF file) and one static case.
pub fn cases_from_flags(cif_path: &Path, flags: &CifFlags) -> Result<CasesFile, String> {
    let missing: Vec<&str> = [("--kv", flags.kv.is_none()), ("--zone", flags.zone.is_empty()), ("--thickness", flags.thickness.is_empty())]
        .iter()
        .filter(|(_, absent)| *absent)
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        return Err(format!("--cif needs {} (e.g. --kv 200 --zone 0,0,1 --thickness 100,200)", missing.join(", ")));
    }
    let kv = flags.kv.unwrap_or_default();
    if !(kv.is_finite() && kv > 0.0) {
        return Err(format!("--kv: the accelerating voltage must be a positive number of kV (got {kv})"));
    }
    if let Some(t) = flags.thickness.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
        return Err(format!("--thickness: every thickness must be a positive number of Å (got {t})"));
    }
    for (flag, value) in [("--g-max", flags.g_max), ("--sg-max", flags.sg_max)] {
        if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(format!("{flag}: must be a positive number of Å⁻¹ (got {})", value.unwrap_or_default()));
        }
    }
    let zone = triple(&flags.zone, "--zone", "U,V,W")?.unwrap_or_default();
    let reference = triple(&flags.reference, "--ref", "H,K,L")?;
    let tilt = match flags.tilt.as_slice() {
        [] => [0.0, 0.0],
        [tx, ty] if tx.is_finite() && ty.is_finite() => [*tx, *ty],
        _ => return Err(format!("--tilt: expected two finite angles TX,TY in degrees (got {:?})", flags.tilt)),
    };
    let cif = std::fs::read_to_string(cif_path).map_err(|e| format!("cannot read {}: {e}", cif_path.display()))?;
    let name = cif_path.file_stem().map_or_else(|| "crystal".to_owned(), |s| s.to_string_lossy().into_owned());
    let crystal = parse_cif(&name, &cif).map_err(|e| format!("{}: {e}", cif_path.display()))?;
    crystal.cell.validate().map_err(|e| format!("{}: cell: {e}", cif_path.display()))?;
    let case = ZoneCase {
        kv,
        zone,
        reference,
        tilt_deg: tilt,
        thicknesses_a: flags.thickness.clone(),
        g_max: flags.g_max.unwrap_or(DEFAULT_G_MAX),
        sg_max: flags.sg_max.unwrap_or(DEFAULT_SG_MAX),
        absorption: flags.absorption,
    };
    // The library names a bad input as its flag without the dashes (`zone`, `ref [h, k, l]`).
    case_from_zone(&name, &cif, &crystal, &case).map_err(|e| match e {
        BlochError::Input(input) => format!("--{input}"),
        other => format!("--cif {}: {other}", cif_path.display()),
    })
}

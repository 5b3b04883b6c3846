//! What the Refine page shows of a refinement, one shape for both paths: natively it is made
//! from the refiner the thread hands back; in the browser from the npm Worker's `blochRefine`
//! answer (`{result, refinedCif, csv, cancelled, warnings}`: `result.json`, `refined.cif` and
//! `observed_vs_calculated.csv` as `scatterlab bloch refine` writes them). The frame browser reads
//! the CSV, so it shows exactly what the export holds.

use std::collections::BTreeMap;

use scatterlab_bloch::refine::outcome::{finish, RefineResult};
use scatterlab_bloch::refine::{observed_vs_calculated_csv, refined_cif, Refiner, StepReport};

/// One progress point of a run (an iteration, or an Adam epoch).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Iterations taken so far, counted over every run of this experiment.
    pub iteration: usize,
    /// Model evaluations of the run so far.
    pub evaluations: usize,
    /// Mean per-frame wR2 now.
    pub wr2: f64,
    /// The LM damping (natively; the worker does not report it).
    pub lambda: Option<f64>,
}

impl From<&StepReport> for Progress {
    fn from(r: &StepReport) -> Self {
        Self { iteration: r.iteration, evaluations: r.evaluations, wr2: r.wr2, lambda: Some(r.lambda) }
    }
}

/// One scored reflection of a frame: observed and (scaled) calculated intensity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObsCalc {
    /// Miller indices.
    pub hkl: [i32; 3],
    /// Observed intensity.
    pub observed: f64,
    /// Its σ.
    pub sigma: f64,
    /// Calculated intensity at the frame's wR2 scale.
    pub calculated: f64,
}

/// What a finished (or paused, or cancelled) run hands back.
pub struct Outputs {
    /// `result.json` as data.
    pub result: RefineResult,
    /// `result.json` text.
    pub result_json: String,
    /// The refined CIF (or why it could not be written).
    pub refined_cif: Result<String, String>,
    /// `observed_vs_calculated.csv`.
    pub csv: String,
    /// The CSV's rows by PETS frame id (the frame browser).
    pub frames: BTreeMap<i64, Vec<ObsCalc>>,
    /// Whether the run was cancelled.
    pub cancelled: bool,
}

impl Outputs {
    /// Finishes `refiner` (s.u., the refined model's evaluation) into its outputs.
    pub fn from_refiner(refiner: &Refiner, seconds: f64, cancelled: bool) -> Result<Self, String> {
        let finished = finish(refiner, seconds).map_err(|e| e.to_string())?;
        let result_json = serde_json::to_string_pretty(&finished.result).map_err(|e| e.to_string())?;
        let refined_cif = refined_cif(&refiner.experiment().start_cif, &refiner.state().asu, &finished.uncertainties).map_err(|e| e.to_string());
        let csv = observed_vs_calculated_csv(&finished.evaluation);
        let frames = parse_csv(&csv)?;
        Ok(Self { result: finished.result, result_json, refined_cif, csv, frames, cancelled })
    }

    /// Reads the npm Worker's `blochRefine` answer, given as JSON text.
    pub fn from_answer(json: &str) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Answer {
            result: serde_json::Value,
            refined_cif: String,
            csv: String,
            cancelled: bool,
        }
        let answer: Answer = serde_json::from_str(json).map_err(|e| format!("the worker's refinement answer: {e}"))?;
        let result: RefineResult = serde_json::from_value(answer.result.clone()).map_err(|e| format!("the worker's result.json: {e}"))?;
        let result_json = serde_json::to_string_pretty(&answer.result).map_err(|e| e.to_string())?;
        let frames = parse_csv(&answer.csv)?;
        Ok(Self { result, result_json, refined_cif: Ok(answer.refined_cif), csv: answer.csv, frames, cancelled: answer.cancelled })
    }
}

/// Parses `observed_vs_calculated.csv` (`frame,h,k,l,I_obs,sigma,I_calc,I_calc_unscaled`) into
/// rows by frame; the error names the line.
pub fn parse_csv(csv: &str) -> Result<BTreeMap<i64, Vec<ObsCalc>>, String> {
    let mut frames: BTreeMap<i64, Vec<ObsCalc>> = BTreeMap::new();
    for (i, line) in csv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || format!("observed_vs_calculated.csv line {}: {line:?} is not frame,h,k,l,I_obs,sigma,I_calc,…", i + 1);
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 7 {
            return Err(bad());
        }
        let int = |s: &str| s.trim().parse::<i64>().map_err(|_| bad());
        let num = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
        let index = |s: &str| int(s).and_then(|v| i32::try_from(v).map_err(|_| bad()));
        let row = ObsCalc { hkl: [index(f[1])?, index(f[2])?, index(f[3])?], observed: num(f[4])?, sigma: num(f[5])?, calculated: num(f[6])? };
        frames.entry(int(f[0])?).or_default().push(row);
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_group_by_frame_and_bad_lines_are_named() {
        let csv = "frame,h,k,l,I_obs,sigma,I_calc,I_calc_unscaled\n3,1,0,-1,10,1,9.5,0.1\n3,0,2,0,5,0.5,5.5,0.05\n7,1,1,1,2,0.2,2.1,0.02\n";
        let frames = parse_csv(csv).expect("parses");
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[&3][1], ObsCalc { hkl: [0, 2, 0], observed: 5.0, sigma: 0.5, calculated: 5.5 });
        let err = parse_csv("header\n1,2,3\n").expect_err("short line");
        assert!(err.contains("line 2"), "{err}");
    }
}

//! The Bloch workspace's host commands ([`crate::script::Command`]'s `bloch…` variants): checked
//! when parsed (every bad field named) and applied as a user's clicks would be.

use scatterlab_bloch::solve::Solver;

use crate::script::Command;
use crate::{ScatterlabApp, Workspace};

fn solver(name: &str) -> Result<Solver, String> {
    match name {
        "eigen" => Ok(Solver::Eigen),
        "expm" => Ok(Solver::Expm),
        other => Err(format!("blochSimulate: unknown solver {other:?} (eigen, expm)")),
    }
}

/// Checks a `bloch…` command's fields (other commands pass).
pub fn check(command: &Command) -> Result<(), String> {
    match command {
        Command::BlochOpenCif { path, name, text } => match (path, name, text) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
            _ => Err("blochOpenCif: give path, or name and text".to_owned()),
        },
        Command::BlochSimulate { kv, thicknesses, g_max, sg_max, solver: s, device, tilt, euler, .. } => {
            if euler.is_some_and(|e| !e.iter().all(|v| v.is_finite())) {
                return Err("blochSimulate: euler must be three finite angles (degrees)".to_owned());
            }
            for (name, v) in [("kv", *kv), ("gMax", *g_max), ("sgMax", *sg_max)] {
                if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                    return Err(format!("blochSimulate: {name} must be a positive number (got {})", v.unwrap_or_default()));
                }
            }
            if let Some(t) = thicknesses.iter().flatten().find(|t| !(t.is_finite() && **t > 0.0)) {
                return Err(format!("blochSimulate: thicknesses must be positive numbers of Å (got {t})"));
            }
            if thicknesses.as_ref().is_some_and(Vec::is_empty) {
                return Err("blochSimulate: thicknesses is empty".to_owned());
            }
            if tilt.is_some_and(|t| !t.iter().all(|v| v.is_finite())) {
                return Err("blochSimulate: tilt must be finite".to_owned());
            }
            if let Some(s) = s {
                solver(s)?;
            }
            match device.as_deref() {
                None | Some("cpu") | Some("gpu") => Ok(()),
                Some(other) => Err(format!("blochSimulate: unknown device {other:?} (cpu, gpu)")),
            }
        }
        Command::BlochOpenExperiment { path, files } => match (path, files) {
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => Err("blochOpenExperiment: give path, or files".to_owned()),
        },
        Command::BlochRefine { steps } if *steps == 0 => Err("blochRefine: steps must be ≥ 1".to_owned()),
        _ => Ok(()),
    }
}

/// Applies a `bloch…` command to `app` (the Bloch workspace is shown).
pub fn apply(command: &Command, app: &mut ScatterlabApp) -> Result<(), String> {
    check(command)?;
    let bloch = &mut app.bloch;
    match command {
        Command::BlochOpenCif { path, name, text } => {
            app.workspace = Workspace::Bloch;
            bloch.tab = super::BlochTab::Crystal;
            match (path, name, text) {
                (Some(path), _, _) => bloch.crystal.open_path(path),
                (None, Some(name), Some(text)) => bloch.crystal.open_text(name, text),
                _ => Ok(()),
            }
        }
        Command::BlochSimulate { kv, zone, reference, tilt, thicknesses, g_max, sg_max, solver: s, device, euler } => {
            app.workspace = Workspace::Bloch;
            bloch.tab = super::BlochTab::Simulate;
            let i = &mut bloch.simulate.inputs;
            i.kv = kv.unwrap_or(i.kv);
            i.zone = zone.unwrap_or(i.zone);
            if reference.is_some() {
                i.reference = *reference;
            }
            i.tilt_deg = tilt.unwrap_or(i.tilt_deg);
            if let Some(t) = thicknesses {
                i.thicknesses = t.iter().map(f64::to_string).collect::<Vec<_>>().join(", ");
            }
            i.g_max = g_max.unwrap_or(i.g_max);
            i.sg_max = sg_max.unwrap_or(i.sg_max);
            if let Some(s) = s {
                i.solver = solver(s)?;
            }
            if let Some(e) = euler {
                i.euler_deg = Some(*e);
            } else if zone.is_some() {
                i.euler_deg = None;
            }
            match device.as_deref() {
                Some("gpu") if bloch.simulate.gpu.is_none() && cfg!(not(target_arch = "wasm32")) => return Err("blochSimulate: device gpu: this app has no GPU device".to_owned()),
                Some("gpu") => i.device = crate::Device::Gpu,
                Some(_) => i.device = crate::Device::Cpu,
                None => {}
            }
            bloch.simulate.start(&bloch.crystal)
        }
        Command::BlochView { thickness_index, log } => {
            if let Some(index) = thickness_index {
                let n = bloch.simulate.result.as_ref().map_or(0, |r| r.thicknesses.len());
                if *index >= n {
                    return Err(format!("blochView: thicknessIndex {index} out of range ({n} thickness(es))"));
                }
                bloch.simulate.thickness_index = *index;
            }
            bloch.simulate.log = log.unwrap_or(bloch.simulate.log);
            Ok(())
        }
        Command::BlochOpenExperiment { path, files } => {
            app.workspace = Workspace::Bloch;
            bloch.tab = super::BlochTab::Refine;
            match (path, files) {
                (Some(path), _) => bloch.refine.open_path(path),
                (None, Some(files)) => {
                    let (name, yaml) = files.iter().find(|(n, _)| n.ends_with(".yaml") || n.ends_with(".yml")).ok_or("blochOpenExperiment: no .yaml among files")?;
                    bloch.refine.open_texts(name, yaml, files)
                }
                _ => Ok(()),
            }
        }
        Command::BlochRefine { steps } => {
            app.workspace = Workspace::Bloch;
            bloch.tab = super::BlochTab::Refine;
            bloch.refine.start(*steps)
        }
        Command::BlochCancel => {
            bloch.refine.cancel();
            Ok(())
        }
        Command::BlochRocking { cancel: Some(true), .. } => {
            bloch.simulate.rocking.cancel();
            Ok(())
        }
        Command::BlochRocking { axis, from_deg, to_deg, n, .. } => {
            app.workspace = Workspace::Bloch;
            (bloch.tab, bloch.simulate.show_rocking) = (super::BlochTab::Simulate, true);
            let s = &mut bloch.simulate.rocking.sweep;
            match axis.as_deref() {
                None => {}
                Some("x") => s.axis = scatterlab_bloch::tilt_series::TiltAxis::X,
                Some("y") => s.axis = scatterlab_bloch::tilt_series::TiltAxis::Y,
                Some(other) => return Err(format!("blochRocking: unknown axis {other:?} (x, y)")),
            }
            (s.from_deg, s.to_deg, s.n) = (from_deg.unwrap_or(s.from_deg), to_deg.unwrap_or(s.to_deg), n.unwrap_or(s.n));
            let (inputs, gpu) = (bloch.simulate.inputs.clone(), bloch.simulate.gpu.clone());
            bloch.simulate.rocking.start(&inputs, &bloch.crystal, gpu)
        }
        _ => Ok(()),
    }
}

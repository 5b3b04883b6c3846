//! Commands a host gives the running app as JSON — the page through
//! `AppControl::command` (web), the desktop build through `--script` ([`crate::native_script`]) —
//! so that end-to-end tests (and embedding pages) can set what a user would set by hand: the
//! workspace, a virtual detector's geometry, an image's display settings.
//!
//! ```json
//! {"do": "workspace", "name": "Stem"}
//! {"do": "stemDetector", "index": 0, "name": "BF", "shape": {"kind": "disc", "center": [32.3, 31.6], "radius": 9.5}}
//! {"do": "stemDetector", "shape": {"kind": "annulus", "center": [32.3, 31.6], "inner": 9.5, "outer": null}}
//! {"do": "stemDisplay", "target": "image", "colormap": "gray", "transform": "linear", "percentiles": [0, 100]}
//! {"do": "stemDevice", "name": "gpu"}
//! {"do": "stemSsb", "device": "gpu", "aberrations": [3.0, 0.6, 0.7]}  (the SSB page; C10, C12 nm, φ12 rad)
//! {"do": "stemPage", "name": "workspace"}                 (or "browse", "ssb")
//! {"do": "stemBrowse", "file": "dev_small_master.h5", "path": "/entry/data/data_000001"}
//! {"do": "blochOpenCif", "path": "quartz.cif"}            (or "name" + "text": the CIF's text)
//! {"do": "blochSimulate", "kv": 200, "zone": [0, 0, 1], "thicknesses": [100, 200], "solver": "eigen"}
//! {"do": "blochOpenExperiment", "path": "synthetic_quartz"} (or "files": {name: text}, the YAML among them)
//! {"do": "blochRefine", "steps": 2}
//! {"do": "blochCancel"}
//! ```
//! Centres are (row, col) in detector pixels (CONVENTIONS.md → 4D-STEM); an annulus's `outer`
//! of `null` is ∞ (dark field). A command is checked when parsed ([`Command::parse`]: every
//! bad field is an error naming it) and applied at the start of the next frame.

use egui::{Context, Id};
use scatterlab_stem::reduce::colormap::Colormap;
use serde::Deserialize;

use crate::stem::detectors::Shape;
use crate::stem::gpu_live::StemDevice;
use crate::stem::ssb::SsbDevice;
use crate::stem::view::{Display, Transform};
use crate::{ScatterlabApp, Workspace};
use scatterlab_stem::ssb::Aberrations;

/// One command.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "do", rename_all = "camelCase", deny_unknown_fields)]
pub enum Command {
    /// Shows a workspace: `"Reflectivity"` or `"Stem"`.
    Workspace {
        /// The workspace's name.
        name: String,
    },
    /// Sets virtual detector `index` (default 0; one past the last adds one) and selects it.
    StemDetector {
        /// Which detector.
        #[serde(default)]
        index: usize,
        /// Its new name (else it keeps its own, or `"custom"` when added).
        name: Option<String>,
        /// Its geometry.
        shape: Shape,
    },
    /// Picks the device of the virtual images: `"cpu"` or `"gpu"` (an error where there is no GPU).
    StemDevice {
        /// The device's name.
        name: String,
    },
    /// Shows the 4D-STEM workspace's SSB page with `device` (`"cpu"` or `"gpu"`; an error where
    /// there is no GPU) and, if given, the aberrations `[C10 nm, C12 nm, φ12 rad]`.
    StemSsb {
        /// The reconstruction's device (absent: unchanged).
        device: Option<String>,
        /// `[C10, C12, φ12]` (absent: unchanged).
        aberrations: Option<[f64; 3]>,
    },
    /// Shows a page of the 4D-STEM workspace: `"workspace"`, `"browse"` or `"ssb"`.
    StemPage {
        /// The page's name.
        name: String,
    },
    /// Shows the Browse page with `path` of the listed file `file` selected (an external link
    /// shows its target, as a click does).
    StemBrowse {
        /// The listed file's name.
        file: String,
        /// The object's path in it.
        path: String,
    },
    /// Changes display settings of one of the workspace's images; absent fields stay.
    StemDisplay {
        /// `"image"` (the virtual image), `"dp"` (the diffraction pattern) or `"idpc"`.
        target: String,
        /// A colormap of the shared table (`"gray"`, `"viridis"`, …).
        colormap: Option<String>,
        /// `"linear"`, `"log"`, `"sqrt"` or `"gamma"`.
        transform: Option<String>,
        /// γ of the gamma transform.
        gamma: Option<f64>,
        /// Automatic limits at these percentiles.
        percentiles: Option<[f64; 2]>,
        /// Manual limits (data units); they switch the automatic range off.
        limits: Option<[f64; 2]>,
    },
    /// Opens a CIF in the Bloch workspace: `path` (read by the app), or `name` and `text`.
    BlochOpenCif {
        /// A file path (the desktop).
        path: Option<String>,
        /// The file's name (with `text`).
        name: Option<String>,
        /// The CIF text.
        text: Option<String>,
    },
    /// Sets the Bloch Simulate page's inputs (absent ones stay) and runs the case.
    BlochSimulate {
        /// Voltage (kV).
        kv: Option<f64>,
        /// Zone axis `[uvw]`.
        zone: Option<[i32; 3]>,
        /// Reference reflection (hkl) for lab +x.
        reference: Option<[i32; 3]>,
        /// Tilts about lab x, y (degrees).
        tilt: Option<[f64; 2]>,
        /// Thicknesses (Å).
        thicknesses: Option<Vec<f64>>,
        /// Beam radius (Å⁻¹).
        #[serde(rename = "gMax")]
        g_max: Option<f64>,
        /// Excitation-error radius (Å⁻¹).
        #[serde(rename = "sgMax")]
        sg_max: Option<f64>,
        /// `"eigen"` or `"expm"`.
        solver: Option<String>,
        /// `"cpu"` (f64) or `"gpu"` (f32; an error where the app has no GPU).
        device: Option<String>,
        /// Euler angles [φ, θ, ψ] (degrees, z–x′–z″) instead of the zone axis.
        euler: Option<[f64; 3]>,
    },
    /// The Bloch pattern's display: thickness index and log scale.
    BlochView {
        /// Index into the result's thicknesses.
        #[serde(rename = "thicknessIndex")]
        thickness_index: Option<usize>,
        /// Log spot areas.
        log: Option<bool>,
    },
    /// Opens a diffBloch experiment: `path` (folder or YAML, desktop), or `files` (name → text, the YAML among them).
    BlochOpenExperiment {
        /// A folder or YAML path.
        path: Option<String>,
        /// Files by name.
        files: Option<std::collections::BTreeMap<String, String>>,
    },
    /// Starts (or resumes) a refinement of at most `steps` LM iterations.
    BlochRefine {
        /// Most iterations of this run.
        steps: usize,
    },
    /// Cancels the running refinement.
    BlochCancel,
    /// Runs a rocking sweep of the Simulate page's case (its other inputs as set), or cancels
    /// the running one (`cancel: true`).
    BlochRocking {
        /// `"x"` (default) or `"y"`.
        axis: Option<String>,
        /// First tilt offset (degrees).
        #[serde(rename = "fromDeg")]
        from_deg: Option<f64>,
        /// Last tilt offset (degrees).
        #[serde(rename = "toDeg")]
        to_deg: Option<f64>,
        /// Number of tilts.
        n: Option<usize>,
        /// Cancel the running sweep instead.
        cancel: Option<bool>,
    },
}

/// Checks a detector's geometry from JSON; the error names the bad field.
fn check_shape(shape: &Shape) -> Result<(), String> {
    let finite = |name: &str, v: f64| if v.is_finite() { Ok(v) } else { Err(format!("stemDetector: {name} must be finite (got {v})")) };
    let centre = |c: [f64; 2]| finite("center[0]", c[0]).and(finite("center[1]", c[1])).map(|_| ());
    match *shape {
        Shape::Disc { center, radius } if finite("radius", radius)? > 0.0 => centre(center),
        Shape::Disc { radius, .. } => Err(format!("stemDetector: radius must be > 0 (got {radius})")),
        Shape::Annulus { center, inner, outer } if finite("inner", inner)? >= 0.0 && outer > inner => centre(center),
        Shape::Annulus { inner, outer, .. } => Err(format!("stemDetector: need 0 ≤ inner < outer (got {inner}, {outer})")),
        Shape::Rect { rows, cols } if rows[0] < rows[1] && cols[0] < cols[1] => Ok(()),
        Shape::Rect { rows, cols } => Err(format!("stemDetector: empty rectangle rows {rows:?} cols {cols:?}")),
    }
}

impl Command {
    /// Parses and checks one command.
    pub fn parse(json: &str) -> Result<Command, String> {
        let command: Command = serde_json::from_str(json).map_err(|e| format!("command: {e}"))?;
        match &command {
            Command::Workspace { name } => workspace(name).map(|_| ())?,
            Command::StemDetector { shape, .. } => check_shape(shape)?,
            Command::StemDevice { name } => device(name).map(|_| ())?,
            Command::StemSsb { device: d, aberrations } => ssb_check(d.as_deref(), *aberrations).map(|_| ())?,
            Command::StemPage { name } => stem_page(name).map(|_| ())?,
            Command::StemBrowse { .. } => {}
            Command::StemDisplay { .. } => command.apply_display(&mut Display::new(Colormap::Gray, Transform::Linear))?,
            other => crate::bloch::script::check(other)?,
        }
        Ok(command)
    }

    /// Applies the command to `app`.
    pub fn apply(&self, app: &mut ScatterlabApp) -> Result<(), String> {
        match self {
            Command::Workspace { name } => app.workspace = workspace(name)?,
            Command::StemDetector { index, name, shape } => {
                check_shape(shape)?;
                app.stem.set_detector(*index, name.clone(), shape.clone())?
            }
            Command::StemDevice { name } => app.stem.set_device(device(name)?)?,
            Command::StemSsb { device: d, aberrations } => {
                let d = ssb_check(d.as_deref(), *aberrations)?;
                if let (Some(SsbDevice::Gpu), Some(why)) = (d, app.stem.ssb.gpu_unavailable()) {
                    return Err(format!("stemSsb: no GPU ({why})"));
                }
                let s = &mut app.stem.ssb.settings;
                if let Some(d) = d {
                    s.device = d;
                }
                if let Some([c10_nm, c12_nm, phi12_rad]) = *aberrations {
                    s.aberrations = Aberrations { c10_nm, c12_nm, phi12_rad };
                }
                app.stem.page = crate::stem::Page::Ssb;
            }
            Command::StemPage { name } => app.stem.page = stem_page(name)?,
            Command::StemBrowse { file, path } => app.stem.browse_select(file, path)?,
            Command::StemDisplay { target, .. } => {
                let d = &mut app.stem.displays;
                let display = match target.as_str() {
                    "image" => &mut d.image,
                    "dp" => &mut d.dp,
                    "idpc" => &mut d.idpc,
                    other => return Err(format!("stemDisplay: unknown target {other:?} (image, dp, idpc)")),
                };
                self.apply_display(display)?;
            }
            other => crate::bloch::script::apply(other, app)?,
        }
        Ok(())
    }

    /// A display command's settings applied to `d` (checked first: `d` is left alone on error).
    fn apply_display(&self, d: &mut Display) -> Result<(), String> {
        let Command::StemDisplay { target, colormap, transform, gamma, percentiles, limits } = self else { return Ok(()) };
        if !["image", "dp", "idpc"].contains(&target.as_str()) {
            return Err(format!("stemDisplay: unknown target {target:?} (image, dp, idpc)"));
        }
        let mut new = d.clone();
        if let Some(name) = colormap {
            new.colormap = Colormap::from_name(name).map_err(|e| format!("stemDisplay: {e}"))?;
        }
        if let Some(name) = transform {
            new.transform = Transform::ALL.into_iter().find(|t| t.name() == name).ok_or_else(|| format!("stemDisplay: unknown transform {name:?} (linear, log, sqrt, gamma)"))?;
        }
        if let Some(g) = *gamma {
            if !(g.is_finite() && g > 0.0) {
                return Err(format!("stemDisplay: gamma must be > 0 (got {g})"));
            }
            new.gamma = g;
        }
        if let Some([lo, hi]) = *percentiles {
            if !(0.0 <= lo && lo <= hi && hi <= 100.0) {
                return Err(format!("stemDisplay: need 0 ≤ percentiles[0] ≤ percentiles[1] ≤ 100 (got {lo}, {hi})"));
            }
            (new.auto, new.percentiles) = (true, [lo, hi]);
        }
        if let Some([lo, hi]) = *limits {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(format!("stemDisplay: need finite limits[0] < limits[1] (got {lo}, {hi})"));
            }
            (new.auto, new.limits) = (false, [lo, hi]);
        }
        *d = new;
        Ok(())
    }
}

fn workspace(name: &str) -> Result<Workspace, String> {
    match name {
        "Reflectivity" => Ok(Workspace::Reflectivity),
        "Stem" => Ok(Workspace::Stem),
        "Bloch" => Ok(Workspace::Bloch),
        other => Err(format!("workspace: unknown name {other:?} (Reflectivity, Stem, Bloch)")),
    }
}

fn device(name: &str) -> Result<StemDevice, String> {
    match name {
        "cpu" => Ok(StemDevice::Cpu),
        "gpu" => Ok(StemDevice::Gpu),
        other => Err(format!("stemDevice: unknown device {other:?} (cpu, gpu)")),
    }
}

fn stem_page(name: &str) -> Result<crate::stem::Page, String> {
    match name {
        "workspace" => Ok(crate::stem::Page::Workspace),
        "browse" => Ok(crate::stem::Page::Browse),
        "ssb" => Ok(crate::stem::Page::Ssb),
        other => Err(format!("stemPage: unknown page {other:?} (workspace, browse, ssb)")),
    }
}

/// The SSB command's device, its aberrations checked finite.
fn ssb_check(device: Option<&str>, aberrations: Option<[f64; 3]>) -> Result<Option<SsbDevice>, String> {
    for (name, v) in ["C10", "C12", "phi12"].iter().zip(aberrations.unwrap_or_default()) {
        if !v.is_finite() {
            return Err(format!("stemSsb: aberrations {name} must be a finite number (got {v})"));
        }
    }
    device
        .map(|d| match d {
            "cpu" => Ok(SsbDevice::Cpu),
            "gpu" => Ok(SsbDevice::Gpu),
            other => Err(format!("stemSsb: unknown device {other:?} (cpu, gpu)")),
        })
        .transpose()
}

fn queue_id() -> Id {
    Id::unique("scatterlab command queue")
}

/// Queues `command` for the app's next frame (and asks for that frame).
pub fn post(ctx: &Context, command: Command) {
    ctx.data_mut(|d| d.get_temp_mut_or_default::<Vec<Command>>(queue_id()).push(command));
    ctx.request_repaint();
}

/// The queued commands, oldest first (the queue is emptied).
pub fn take(ctx: &Context) -> Vec<Command> {
    ctx.data_mut(|d| std::mem::take(d.get_temp_mut_or_default::<Vec<Command>>(queue_id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_bad_fields_are_named() {
        let c = Command::parse(r#"{"do":"stemDetector","shape":{"kind":"annulus","center":[32.3,31.6],"inner":9.5,"outer":null}}"#).unwrap();
        assert_eq!(c, Command::StemDetector { index: 0, name: None, shape: Shape::Annulus { center: [32.3, 31.6], inner: 9.5, outer: f64::INFINITY } });
        for (json, named) in [
            (r#"{"do":"stemDetector","shape":{"kind":"disc","center":[1,2],"radius":-1}}"#, "radius"),
            (r#"{"do":"stemDetector","shape":{"kind":"annulus","center":[1,2],"inner":5,"outer":3}}"#, "inner < outer"),
            (r#"{"do":"stemDisplay","target":"image","colormap":"nope"}"#, "colormap 'nope'"),
            (r#"{"do":"stemDisplay","target":"image","percentiles":[50,10]}"#, "percentiles"),
            (r#"{"do":"stemDisplay","target":"left"}"#, "unknown target"),
            (r#"{"do":"workspace","name":"Diffraction"}"#, "unknown name"),
            (r#"{"do":"stemDevice","name":"tpu"}"#, "unknown device"),
            (r#"{"do":"stemSsb","device":"tpu"}"#, "stemSsb: unknown device"),
            (r#"{"do":"stemSsb","aberrations":[1,2]}"#, "length 3"),
            (r#"{"do":"stemPage","name":"fit"}"#, "stemPage: unknown page"),
            (r#"{"do":"fly"}"#, "unknown variant"),
            (r#"{"do":"workspace","name":"Stem","extra":1}"#, "unknown field"),
        ] {
            let e = Command::parse(json).unwrap_err();
            assert!(e.contains(named), "{json}: {e}");
        }
    }

    #[test]
    fn queued_commands_come_out_in_order() {
        let ctx = Context::default();
        post(&ctx, Command::Workspace { name: "Stem".into() });
        post(&ctx, Command::Workspace { name: "Reflectivity".into() });
        let names: Vec<_> = take(&ctx).into_iter().map(|c| format!("{c:?}")).collect();
        assert_eq!(names.len(), 2);
        assert!(names[0].contains("Stem") && names[1].contains("Reflectivity"));
        assert!(take(&ctx).is_empty());
    }
}

//! The desktop build driven by a JSON file (`scatterlab-app --script run.json`): open a 4D-STEM
//! acquisition, wait until every frame is loaded, apply [`crate::script`] commands, let the
//! images redraw, save a screenshot of the window and the app's status, close. The native half
//! of the end-to-end test (`tests/e2e/native_app.mjs`, under Xvfb) runs the same flow as the
//! browser's.
//!
//! ```json
//! {"open": "dev_small_master.h5",
//!  "commands": [{"do": "stemDetector", "shape": {"kind": "disc", "center": [32.3, 31.6], "radius": 9.5}}],
//!  "status": "out/native_status.json", "screenshot": "out/native.png", "timeoutS": 120}
//! ```

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use web_time::Instant;

use crate::script::{self, Command};
use crate::{ScatterlabApp, Workspace};

/// Frames drawn after the commands before the screenshot (commands apply, images recompute,
/// textures upload, the frame is painted).
const SETTLE_FRAMES: u32 = 6;

/// What the script file holds.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NativeScript {
    /// A master (or single) HDF5 file to open in the 4D-STEM workspace.
    pub open: Option<PathBuf>,
    /// Commands applied once every frame is loaded.
    #[serde(default)]
    pub commands: Vec<serde_json::Value>,
    /// Where the app's status JSON is written at the end.
    pub status: PathBuf,
    /// Where a screenshot of the window is written (PNG).
    pub screenshot: Option<PathBuf>,
    /// Seconds before giving up (default 120).
    pub timeout_s: Option<f64>,
}

impl NativeScript {
    /// Reads and checks the script at `path` (every command parsed).
    pub fn load(path: &std::path::Path) -> Result<(Self, Vec<Command>), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let script: NativeScript = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let commands = script.commands.iter().map(|c| Command::parse(&c.to_string())).collect::<Result<Vec<_>, _>>().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((script, commands))
    }
}

#[derive(Debug)]
enum Stage {
    Start,
    Loading,
    Settling(u32),
    Shooting,
    Done,
}

/// How the scripted run ended: `None` while running, then success or why it failed.
pub type Outcome = Arc<Mutex<Option<Result<(), String>>>>;

/// The app with a script driving it.
pub struct ScriptedApp {
    app: ScatterlabApp,
    script: NativeScript,
    commands: Vec<Command>,
    stage: Stage,
    started: Instant,
    shot: Arc<Mutex<Option<Result<(), String>>>>,
    outcome: Outcome,
}

impl ScriptedApp {
    /// Drives `app` by `script` (with its parsed `commands`); the end is reported in `outcome`.
    pub fn new(app: ScatterlabApp, script: NativeScript, commands: Vec<Command>, outcome: Outcome) -> Self {
        Self { app, script, commands, stage: Stage::Start, started: Instant::now(), shot: Arc::default(), outcome }
    }

    fn step(&mut self, ctx: &egui::Context) {
        let timeout = self.script.timeout_s.unwrap_or(120.0);
        if !matches!(self.stage, Stage::Done) && self.started.elapsed().as_secs_f64() > timeout {
            return self.finish(ctx, Err(format!("script: not done after {timeout} s (stage {:?})", self.stage)));
        }
        match self.stage {
            Stage::Start => {
                if let Some(path) = &self.script.open {
                    self.app.workspace = Workspace::Stem;
                    self.app.stem.path = path.display().to_string();
                    self.app.stem.open_path(path);
                }
                self.stage = Stage::Loading;
            }
            Stage::Loading => {
                if let Some(e) = self.app.stem.error() {
                    let e = e.to_owned();
                    return self.finish(ctx, Err(format!("script: {e}")));
                }
                let loaded = self.app.stem.data().is_some_and(|d| d.loaded() == d.n_frames());
                if self.script.open.is_none() || (loaded && !self.app.stem.is_loading()) {
                    for c in self.commands.drain(..) {
                        script::post(ctx, c);
                    }
                    self.stage = Stage::Settling(0);
                }
            }
            // A Bloch simulation, sweep or refinement the commands started runs to its end first.
            Stage::Settling(_) if self.app.bloch.is_busy() => {
                self.stage = Stage::Settling(0);
                ctx.request_repaint_after(std::time::Duration::from_millis(20));
            }
            Stage::Settling(n) if n < SETTLE_FRAMES => self.stage = Stage::Settling(n + 1),
            Stage::Settling(_) => {
                let (shot, path) = (self.shot.clone(), self.script.screenshot.clone());
                match path {
                    Some(path) => ctx.request_screenshot(move |image| {
                        let saved = crate::refl_fit::export::encode_png(&image).and_then(|png| std::fs::write(&path, png).map_err(|e| format!("{}: {e}", path.display())));
                        if let Ok(mut s) = shot.lock() {
                            *s = Some(saved);
                        }
                    }),
                    None => {
                        if let Ok(mut s) = self.shot.lock() {
                            *s = Some(Ok(()));
                        }
                    }
                }
                self.stage = Stage::Shooting;
            }
            Stage::Shooting => {
                let shot = self.shot.lock().ok().and_then(|mut s| s.take());
                if let Some(result) = shot {
                    let result = match self.app.command_error() {
                        Some(e) => Err(format!("script: {e}")),
                        None => result,
                    };
                    self.finish(ctx, result);
                }
            }
            Stage::Done => {}
        }
    }

    /// Writes the status, records the outcome and closes the window.
    fn finish(&mut self, ctx: &egui::Context, result: Result<(), String>) {
        let written = std::fs::write(&self.script.status, self.app.status_json()).map_err(|e| format!("{}: {e}", self.script.status.display()));
        if let Ok(mut o) = self.outcome.lock() {
            *o = Some(result.and(written));
        }
        self.stage = Stage::Done;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

impl eframe::App for ScriptedApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.step(ui.ctx());
        eframe::App::ui(&mut self.app, ui, frame);
        // Keep frames coming: the script advances once per frame.
        ui.ctx().request_repaint();
    }
}

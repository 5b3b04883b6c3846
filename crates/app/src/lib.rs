//! scatterlab's egui/eframe application: one code base for the desktop window (`src/main.rs`)
//! and the browser canvas (`src/web.rs`, wasm32 only).
//!
//! Compute runs on the device the user picks: the CPU (f64) inline, or the GPU (f32 WGSL) on
//! eframe's own wgpu device as a background job. Nothing falls back silently and nothing panics
//! on bad input: errors are shown in the UI.

#![warn(missing_docs)]

pub mod bloch;
pub mod compute_job;
pub mod events;
#[cfg(not(target_arch = "wasm32"))]
pub mod file_dialog;
pub mod gpu_engine;
pub mod landmarks;
#[cfg(not(target_arch = "wasm32"))]
pub mod native_script;
pub mod refl_fit;
pub mod refl_panel;
pub mod script;
pub mod stem;
#[cfg(target_arch = "wasm32")]
mod web;
#[cfg(target_arch = "wasm32")]
pub mod worker_client;

pub use bloch::BlochPanel;
pub use gpu_engine::{backend_name, GpuSupport};
pub use refl_fit::FitPanel;
pub use refl_panel::{Computed, DepthProfile, Device, Outcome, PlotView, ReflInputs, ReflPanel, ReflTab};
pub use stem::StemPanel;

/// The application's workspaces, switched in the top bar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workspace {
    /// X-ray reflectivity: simulate and fit.
    #[default]
    Reflectivity,
    /// 4D-STEM: diffraction patterns, virtual detectors, DPC.
    Stem,
    /// Bloch-wave electron diffraction: crystal, simulation, refinement.
    Bloch,
}

/// Called once, after the first frame has been painted (the web entry marks the page ready).
pub type ReadyHook = Box<dyn FnOnce()>;

/// Called at the end of each frame with the [`events`] of that frame (JSON texts, oldest first).
pub type EventHook = Box<dyn FnMut(Vec<String>)>;

/// The application: the reflectivity panel and the 4D-STEM workspace, one on display.
pub struct ScatterlabApp {
    /// The workspace on display.
    pub workspace: Workspace,
    /// The reflectivity panel (public so tests and hosts can read results and set inputs).
    pub refl: ReflPanel,
    /// The 4D-STEM workspace (it loads its built-in example when first shown).
    pub stem: StemPanel,
    /// The Bloch workspace (crystal, simulation, refinement).
    pub bloch: BlochPanel,
    /// The lower-case wgpu backend eframe renders with (`"vulkan"`, `"browserwebgpu"`, `"gl"`),
    /// or `"none"` without wgpu.
    pub render_backend: String,
    frames: u64,
    on_ready: Option<ReadyHook>,
    /// Why the last host command ([`script`]) failed, if it did.
    command_error: Option<String>,
    /// The host's event watcher and where its events go (none: nothing is watched).
    events: Option<(events::Watcher, EventHook)>,
}

impl ScatterlabApp {
    /// Builds the app from eframe's creation context, sharing its wgpu device for GPU compute.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        install_fonts(&cc.egui_ctx);
        let render_state = cc.wgpu_render_state.as_ref();
        let render_backend = render_state.map_or_else(|| "none".to_owned(), |rs| backend_name(&rs.adapter.get_info()));
        Self::with_gpu(GpuSupport::from_render_state(render_state), render_backend)
    }

    /// Builds the app with an explicit GPU (or none) and backend name, without eframe.
    pub fn with_gpu(gpu: GpuSupport, render_backend: String) -> Self {
        let mut stem = StemPanel::default();
        stem.set_gpu(&gpu);
        let mut bloch = BlochPanel::default();
        bloch.set_gpu(&gpu);
        Self { workspace: Workspace::default(), refl: ReflPanel::new(gpu), stem, bloch, render_backend, frames: 0, on_ready: None, command_error: None, events: None }
    }

    /// Registers `hook` to run once after the first frame has been painted.
    pub fn on_first_frame(mut self, hook: impl FnOnce() + 'static) -> Self {
        self.on_ready = Some(Box::new(hook));
        self
    }

    /// Sends the app's [`events`] to `hook` at the end of every frame that has some (an embedding
    /// page's listener); without a hook nothing is watched.
    pub fn on_events(mut self, hook: impl FnMut(Vec<String>) + 'static) -> Self {
        self.events = Some((events::Watcher::default(), Box::new(hook)));
        self
    }

    /// Number of frames drawn so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }
}

/// Lets proportional text fall back to the built-in monospace font (Hack).
///
/// The default proportional font (Ubuntu Light) lacks "⁻", which every q unit (Å⁻¹) and the
/// engine's messages use; Hack has it. Takes effect from the next frame.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    if fonts.font_data.contains_key("Hack") {
        fonts.families.entry(egui::FontFamily::Proportional).or_default().push("Hack".to_owned());
    }
    ctx.set_fonts(fonts);
}

impl eframe::App for ScatterlabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        // `ui` runs before its frame is painted: frame 0 is on screen once frame 1 starts.
        if self.frames >= 1 {
            if let Some(hook) = self.on_ready.take() {
                hook();
            }
        } else if self.on_ready.is_some() {
            ui.ctx().request_repaint();
        }
        self.frames += 1;
        #[cfg(target_arch = "wasm32")]
        if stem::browser_files::take_focus() {
            self.workspace = Workspace::Stem;
        }
        self.run_commands(ui.ctx());
        if let Some((watcher, _)) = &mut self.events {
            watcher.observe(&self.stem, "command");
        }

        egui::Panel::top("scatterlab_top").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("scatterlab");
                let refl = ui.selectable_value(&mut self.workspace, Workspace::Reflectivity, "Reflectivity");
                landmarks::mark(&refl, "workspace Reflectivity");
                let stem = ui.selectable_value(&mut self.workspace, Workspace::Stem, "4D-STEM");
                landmarks::mark(&stem, "workspace 4D-STEM");
                let bloch = ui.selectable_value(&mut self.workspace, Workspace::Bloch, "Bloch");
                landmarks::mark(&bloch, "workspace Bloch");
                ui.label(match self.workspace {
                    Workspace::Reflectivity => "X-ray reflectivity of uniaxial stratified films",
                    Workspace::Stem => "4D-STEM: virtual detectors, centre of mass, iDPC",
                    Workspace::Bloch => "Bloch waves: electron diffraction from a CIF, simulate and refine",
                });
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    ui.weak(format!("render backend: {}", self.render_backend));
                });
            });
        });
        egui::CentralPanel::default().show(ui, |ui| match self.workspace {
            Workspace::Reflectivity => self.refl.ui(ui),
            Workspace::Stem => self.stem.ui(ui),
            Workspace::Bloch => self.bloch.ui(ui),
        });
        landmarks::set_status(ui.ctx(), self.status_json());
        if let Some((watcher, hook)) = &mut self.events {
            watcher.observe(&self.stem, "ui");
            let events = watcher.take();
            if !events.is_empty() {
                hook(events);
            }
        }
    }
}

impl ScatterlabApp {
    /// Applies the commands hosts queued ([`script::post`]), oldest first; the status shows the
    /// last one's failure (`commandError`), a success clears it.
    pub fn run_commands(&mut self, ctx: &egui::Context) {
        for command in script::take(ctx) {
            self.command_error = command.apply(self).err();
            if let (Some(e), Some((watcher, _))) = (&self.command_error, &mut self.events) {
                watcher.push_error("command", e);
            }
        }
    }

    /// Why the last host command failed, if it did.
    pub fn command_error(&self) -> Option<&str> {
        self.command_error.as_deref()
    }

    /// What a host (the web handle, a browser test) may read about the app, as one JSON object:
    /// frames drawn, tab, and the Fit tab's model, running fit, progress, message and last result.
    pub fn status_json(&self) -> String {
        let fit = &self.refl.fit;
        let progress = fit.progress().map(|p| {
            serde_json::json!({"stage": p.stage.step_name(), "iteration": p.iteration,
                "maxIterations": p.max_iterations, "bestChi2": p.best_chi2, "evaluations": p.evaluations})
        });
        let result = fit.result().map(|r| {
            serde_json::json!({"chi2": r.chi2, "startChi2": r.start_chi2, "engine": r.engine,
                "evaluations": r.evaluations, "seconds": r.seconds, "cancelled": r.cancelled,
                "hasErrors": r.stderr.is_some(), "mcmcSamples": r.mcmc.as_ref().map(|m| m.samples.first().map_or(0, Vec::len))})
        });
        let message = match fit.message() {
            Some(Ok(m)) => serde_json::json!({"ok": m}),
            Some(Err(e)) => serde_json::json!({"error": e}),
            None => serde_json::Value::Null,
        };
        let stem = &self.stem;
        let stem_status = serde_json::json!({
            "name": stem.data().map(|d| d.name.clone()),
            "loading": stem.is_loading(),
            "framesLoaded": stem.data().map(|d| d.loaded()),
            "framesTotal": stem.data().map(|d| d.n_frames()),
            "countsTotal": stem.fused().map(|f| f.total.iter().sum::<u64>()),
            "error": stem.error(),
            "device": stem.device(),
            "frameTimeMs": stem.frame_time().map(|t| t.as_secs_f64() * 1e3),
            // The pixel under the pointer (image, row, col, value, unit, position), if any.
            "hover": stem.hover().map(|h| serde_json::json!({"image": h.image, "row": h.row, "col": h.col,
                "value": h.value.is_finite().then_some(h.value), "unit": h.unit, "position": h.position, "text": h.text()})),
            "columnsPerRow": stem.columns().per_row,
            "ssb": stem.ssb.status_json(stem.ssb_inputs().ok().as_ref()),
            "browse": stem.browser.status_json(),
            "image": stem.displayed_image().map(|(digest, (lo, hi))| serde_json::json!({
                "detector": stem.detectors.get(stem.selected).map(|d| d.name.clone()),
                "sum": stem.virtual_image(stem.selected).map(|v| v.iter().sum::<u64>()),
                "lutFnv1a64": format!("{digest:016x}"),
                "limits": [lo, hi],
            })),
        });
        serde_json::json!({
            "frames": self.frames,
            "workspace": format!("{:?}", self.workspace),
            "stem": stem_status,
            "bloch": self.bloch.status_json(),
            "renderBackend": self.render_backend,
            "commandError": self.command_error,
            "tab": format!("{:?}", self.refl.tab),
            "fit": {"model": fit.model().map(|_| fit.source.clone()), "running": fit.is_running(),
                    "progress": progress, "message": message, "result": result},
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fonts_cover_units_and_engine_messages() {
        let ctx = egui::Context::default();
        super::install_fonts(&ctx);
        let mut out = ctx.run_ui(Default::default(), |_| {});
        out.textures_delta.clear();
        // Every non-ASCII character of the UI and of the engine's error messages.
        let text = "Å⁻¹ ≥ · δ β − ⁴";
        assert!(ctx.fonts_mut(|f| f.has_glyphs(&egui::FontId::proportional(14.0), text)));
    }
}

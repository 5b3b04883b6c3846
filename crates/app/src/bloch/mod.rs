//! The Bloch workspace: Bloch-wave electron diffraction from `scatterlab-bloch`, every number
//! computed there. Three pages: Crystal (open a CIF, its cell, space group and editable
//! asymmetric unit), Simulate (one static zone-axis case, the case `scatterlab bloch simulate
//! --cif … --zone …` runs, through the same `scatterlab_bloch::zone::case_from_zone`; spots,
//! thickness slider over one decomposition, CSV export) and Refine (a diffBloch experiment
//! refined by `scatterlab_bloch::refine`, natively on a thread, in the browser in the npm
//! package's Worker, like the reflectivity fits).

pub mod crystal;
pub mod crystal_view;
pub mod files;
pub mod frames_view;
pub mod pattern;
pub mod refine;
pub mod refine_outputs;
pub mod refine_view;
#[cfg(target_arch = "wasm32")]
mod refine_worker;
pub mod rocking;
pub mod rocking_view;
pub mod script;
pub mod simulate;
pub mod simulate_run;
pub mod simulate_view;
#[cfg(target_arch = "wasm32")]
mod simulate_worker;

pub use crystal::CrystalState;
pub use refine::RefineState;
pub use simulate::{SimInputs, SimulateState};

/// The workspace's pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlochTab {
    /// The crystal: CIF, cell, asymmetric unit.
    #[default]
    Crystal,
    /// A static zone-axis simulation.
    Simulate,
    /// Refinement against 3D ED data.
    Refine,
}

/// The Bloch workspace.
pub struct BlochPanel {
    /// The page on display.
    pub tab: BlochTab,
    /// The crystal page (its crystal is what Simulate uses).
    pub crystal: CrystalState,
    /// The Simulate page.
    pub simulate: SimulateState,
    /// The Refine page.
    pub refine: RefineState,
    drops: (std::sync::mpsc::Sender<files::PickedTexts>, std::sync::mpsc::Receiver<files::PickedTexts>),
}

impl Default for BlochPanel {
    fn default() -> Self {
        Self { tab: BlochTab::default(), crystal: CrystalState::default(), simulate: SimulateState::default(), refine: RefineState::default(), drops: std::sync::mpsc::channel() }
    }
}

impl BlochPanel {
    /// Gives Simulate the app's GPU device (desktop; in the browser the GPU is the Worker's).
    pub fn set_gpu(&mut self, support: &crate::GpuSupport) {
        self.simulate.gpu = match support {
            crate::GpuSupport::Available(ctx) => Some((**ctx).clone()),
            crate::GpuSupport::Unavailable(_) => None,
        };
    }

    /// Draws the workspace and advances its jobs (a finished simulation, refinement steps).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        files::take_dropped(ui.ctx(), &self.drops.0);
        while let Ok(dropped) = self.drops.1.try_recv() {
            self.open_dropped(dropped);
        }
        self.crystal.poll();
        self.simulate.poll();
        self.refine.poll();
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.tab, BlochTab::Crystal, "Crystal");
            ui.selectable_value(&mut self.tab, BlochTab::Simulate, "Simulate");
            ui.selectable_value(&mut self.tab, BlochTab::Refine, "Refine");
        });
        ui.separator();
        match self.tab {
            BlochTab::Crystal => crystal_view::ui(&mut self.crystal, ui),
            BlochTab::Simulate => simulate_view::ui(&mut self.simulate, &self.crystal, ui),
            BlochTab::Refine => refine_view::ui(&mut self.refine, ui),
        }
        if self.is_busy() {
            // Poll the jobs ten times a second rather than painting every frame: in the browser
            // (software WebGPU on some machines) continuous painting would load the very thread
            // the Worker keeps free; input still repaints at once.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    /// Whether a simulation, sweep, refinement or file pick is under way.
    pub fn is_busy(&self) -> bool {
        self.simulate.is_running() || self.refine.is_running() || self.crystal.is_waiting() || self.refine.is_waiting()
    }

    /// Opens dropped files: an experiment when a YAML is among them (Refine), else a CIF (Crystal).
    pub fn open_dropped(&mut self, dropped: files::PickedTexts) {
        if dropped.iter().any(|(n, _)| n.ends_with(".yaml") || n.ends_with(".yml")) {
            self.tab = BlochTab::Refine;
            self.refine.open_files(dropped);
        } else {
            self.tab = BlochTab::Crystal;
            self.crystal.open_files(dropped);
        }
    }

    /// The workspace's part of the app's status JSON: crystal, simulation (hkl, intensities per
    /// thickness, at most [`simulate::STATUS_MAX_VALUES`] numbers) and refinement progress.
    pub fn status_json(&self) -> serde_json::Value {
        serde_json::json!({
            "tab": format!("{:?}", self.tab),
            "crystal": self.crystal.status_json(),
            "simulate": self.simulate.status_json(),
            "refine": self.refine.status_json(),
        })
    }
}

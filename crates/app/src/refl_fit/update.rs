//! The Fit tab's per-frame work: dropped and picked files, the fit job, the screenshot for a PNG
//! export, and the model curves at the current values.

use scatterlab_refl::fit::{Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;

use super::loading::{self, Loaded, Target};
use super::{q_units, Curves, FitPanel, PendingData};
use crate::compute_job;
use crate::gpu_engine::GpuEngine;
use crate::ReflInputs;

impl FitPanel {
    /// Collects dropped/picked files, the fit job and screenshots, and refreshes the curves.
    /// Returns true when a file was loaded this frame (the panel then shows this tab).
    pub fn update(&mut self, ctx: &egui::Context, gpu: &mut GpuEngine) -> bool {
        let mut loaded = false;
        for file in ctx.input(|i| i.raw.dropped_files.clone()) {
            let name = file.path().file_name().map_or_else(|| "dropped file".to_owned(), |n| n.to_string_lossy().into_owned());
            #[cfg(not(target_arch = "wasm32"))]
            {
                loaded |= match file.bytes() {
                    Ok(bytes) => self.load_bytes(&name, &bytes),
                    Err(e) => self.fail(format!("{name}: {e}")),
                };
            }
            #[cfg(target_arch = "wasm32")]
            {
                // Browsers read files asynchronously; the bytes arrive through `incoming`.
                let (tx, repaint) = (self.incoming.0.clone(), ctx.clone());
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = tx.send((name, file.bytes_async().await));
                    repaint.request_repaint();
                });
            }
        }
        while let Ok((name, bytes)) = self.incoming.1.try_recv() {
            loaded |= match bytes {
                Ok(bytes) => self.load_bytes(&name, &bytes),
                Err(e) => self.fail(format!("{name}: {e}")),
            };
        }
        self.poll_job();
        self.start_queued(gpu, ctx);
        while let Ok(image) = self.shots.1.try_recv() {
            self.save_screenshot(&image, ctx.pixels_per_point());
        }
        self.refresh_curves();
        loaded
    }

    /// Sets an error message; returns false (nothing loaded).
    fn fail(&mut self, error: String) -> bool {
        self.message = Some(Err(error));
        false
    }

    /// Loads a file's bytes: a model replaces the current one; data waits to be attached.
    /// Returns whether anything was loaded.
    pub fn load_bytes(&mut self, name: &str, bytes: &[u8]) -> bool {
        match loading::classify(name, bytes) {
            Ok(Loaded::Model(model)) => {
                let n = model.parameter_names().len();
                self.set_model(*model, name);
                self.message = Some(Ok(format!("loaded {name}: {n} parameters")));
            }
            Ok(Loaded::Data(sets)) => {
                let first_energy = self.model.as_ref().and_then(|m| m.datasets().first().map(|d| d.energy_ev));
                let n = sets.len();
                for loaded in sets {
                    let energy_ev = loaded.energy_ev.or(first_energy).unwrap_or(250.0);
                    self.pending.push(PendingData { loaded, energy_ev, polarization: scatterlab_refl::model::Polarization::S, target: Target::New, q_unit: Default::default() });
                }
                self.message = Some(Ok(format!("loaded {n} curve(s) from {name}: choose energy, polarisation and dataset, then Attach")));
            }
            Err(e) => return self.fail(e),
        }
        true
    }

    /// Reads a file from disk (desktop) and loads it.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load_path(&mut self, path: &str) -> bool {
        let path = std::path::Path::new(path.trim());
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        match std::fs::read(path) {
            Ok(bytes) => self.load_bytes(&name, &bytes),
            Err(e) => self.fail(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Attaches pending curve `i` to the model (a new model through `Model::new`).
    pub fn attach_pending(&mut self, i: usize) {
        let (Some(model), Some(p)) = (&self.model, self.pending.get(i)) else {
            self.message = Some(Err("load a model (or make one from the layer table) first".into()));
            return;
        };
        // Converted once, here: the model holds q in Å⁻¹.
        // A replaced dataset keeps its energy: 2θ converts at that one.
        let energy = match p.target {
            Target::Replace(k) => model.datasets().get(k).map_or(p.energy_ev, |d| d.energy_ev),
            Target::New => p.energy_ev,
        };
        let data = match q_units::to_inverse_angstrom(&p.loaded.data, p.q_unit, energy) {
            Ok(d) => d,
            Err(e) => {
                self.message = Some(Err(e));
                return;
            }
        };
        let file = loading::attach(model.file(), &data, p.energy_ev, p.polarization, p.target, self.relative_dr_pct / 100.0);
        let name = p.loaded.data.name.clone();
        match Model::new(file) {
            Ok(m) => {
                // Same parameters: the table's edits still describe the new model.
                self.model = Some(m);
                self.revision += 1;
                self.pending.remove(i);
                self.message = Some(Ok(format!("attached {name}")));
            }
            Err(e) => self.message = Some(Err(format!("cannot attach {name}: {e}"))),
        }
    }

    /// Removes dataset `i` from the model.
    pub fn remove_dataset(&mut self, i: usize) {
        let Some(model) = &self.model else { return };
        let mut file = model.file().clone();
        if i >= file.datasets.len() {
            return;
        }
        file.datasets.remove(i);
        match Model::new(file) {
            Ok(m) => {
                self.model = Some(m);
                self.revision += 1;
                self.profile_dataset = 0;
            }
            Err(e) => self.message = Some(Err(format!("cannot remove dataset {i}: {e}"))),
        }
    }

    /// A new model from the simulation tab's stack, energy and q grid (data to be attached).
    pub fn model_from_inputs(&mut self, inputs: &ReflInputs) {
        match Model::new(loading::model_from_inputs(inputs)) {
            Ok(m) => {
                self.set_model(m, "layer table");
                self.message = Some(Ok("new model from the layer table: attach data to fit".into()));
            }
            Err(e) => self.message = Some(Err(format!("the layer table is not a valid model: {e}"))),
        }
    }

    /// Re-evaluates the model curves and χ² when the model changed.
    fn refresh_curves(&mut self) {
        let Some(model) = &self.model else {
            self.curves = None;
            return;
        };
        let log = self.settings.log_transform;
        // While DE runs the curves follow its best vector, generation by generation.
        let live = self.run.as_ref().and_then(|r| r.progress.lock().ok()?.as_ref()?.best_values.clone()).filter(|v| v.len() == model.values().len());
        let values = live.unwrap_or_else(|| model.values().to_vec());
        if self.curves.as_ref().is_some_and(|c| c.revision == self.revision && c.log_transform == log && c.values == values) {
            return;
        }
        let curves = compute_job::run_if_ready(model.evaluate(Engine::Cpu, &[&values[..]]))
            .ok_or_else(|| "the CPU engine did not finish at once".to_owned())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .and_then(|mut m| m.pop().ok_or_else(|| "no curves".to_owned()));
        let options = ObjectiveOptions { log_transform: log, roughness_limit: None };
        let chi2 = Objective::new(model, options).map_err(|e| e.to_string()).and_then(|o| {
            let x: Vec<f64> = model.varying().iter().map(|&i| values[i]).collect();
            compute_job::run_if_ready(o.chi2_batch(Engine::Cpu, &[x]))
                .ok_or_else(|| "the CPU engine did not finish at once".to_owned())?
                .map_err(|e| e.to_string())?
                .first()
                .copied()
                .ok_or_else(|| "no χ²".to_owned())
        });
        self.curves = Some(Curves { revision: self.revision, log_transform: log, values, curves, chi2 });
    }
}

/// χ² with four significant digits.
pub fn fmt_chi2(chi2: f64) -> String {
    if chi2.abs() >= 1e6 || (chi2 != 0.0 && chi2.abs() < 1e-2) {
        format!("{chi2:.4e}")
    } else {
        format!("{chi2:.2}")
    }
}

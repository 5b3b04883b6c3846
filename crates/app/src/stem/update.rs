//! The workspace's per-frame work: opening, pumping the loader, refreshing the products the
//! settings need (probe, virtual images, region pattern, DPC), each only when its inputs changed.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Duration;

use std::sync::Arc;

use scatterlab_stem::load::Acquisition;
use scatterlab_stem::reduce::auto_probe;
use web_time::Instant;

use super::detectors::{Detector, Preset};
use super::gpu_live::StemDevice;
use super::loader::{FrameSource, Loader, Pumped};
use super::resident::Resident;
use super::staged::StagedFiles;
use super::staged_open::StagedSource;
use super::{dpc, example, open, StemPanel, VirtualImages};

/// How often the images refresh while frames arrive, at most.
const REFRESH_EVERY: Duration = Duration::from_millis(120);
/// Refreshes are spaced by this many times their cost, so that on large scans they take at most
/// a fifth of the loading time (each one sums every frame loaded so far).
const REFRESH_SPACING: u32 = 4;

impl StemPanel {
    /// Starts loading the built-in example (replacing what is open).
    pub fn open_example(&mut self) {
        match example::resident() {
            Ok(r) => self.start(r, Box::new(example::ExampleSource::default()), Vec::new()),
            Err(e) => self.error = Some(e),
        }
    }

    /// Opens the master (or single) HDF5 file at `path` and starts loading it. On failure the
    /// open acquisition stays and the error names the file.
    pub fn open_path(&mut self, path: &Path) {
        self.started = true;
        match open::open_path(path) {
            Ok(o) => {
                self.start(o.resident, Box::new(o.source), o.notes);
                self.source_path = Some(path.to_path_buf());
            }
            Err(e) => self.error = Some(self.failed_open(e)),
        }
    }

    /// Starts loading `acq`, opened from staged `files` (the browser's): each data file is asked
    /// for whole through `request(file index)` when the stream reaches it, and loading waits until
    /// [`StagedFiles::put_whole`](super::staged::StagedFiles::put_whole) delivers it.
    pub fn open_staged(&mut self, acq: Acquisition, files: Arc<StagedFiles>, request: Box<dyn FnMut(usize)>) {
        self.started = true;
        let master = acq.master().to_owned();
        match open::describe(&acq) {
            Ok((mut resident, notes)) => {
                let source = StagedSource::new(acq, files, request);
                resident.n_masked = source.n_masked();
                self.start(resident, Box::new(source), notes);
                self.path = master;
            }
            Err(e) => self.error = Some(self.failed_open(e)),
        }
    }

    /// The message of an open that failed: what stays on screen is said, so that its images and
    /// notes are not taken for the new file's.
    fn failed_open(&self, error: String) -> String {
        match &self.data {
            Some(d) => format!("{error} — nothing of it was loaded; still showing {}", d.name),
            None => error,
        }
    }

    /// Shows `message` as the workspace's error (the open acquisition stays).
    pub fn set_error(&mut self, message: String) {
        self.error = Some(message);
    }

    fn start(&mut self, resident: Resident, source: Box<dyn FrameSource>, notes: Vec<String>) {
        // A running SSB fit belongs to the old data: stop its thread rather than orphan it.
        self.cancel_ssb_fit();
        let mut keep = (std::mem::take(&mut self.path), self.displays.clone(), self.load_budget, self.page, std::mem::take(&mut self.browser));
        // A file given as bytes belonged to the previous acquisition (a browser open sets its own after).
        keep.4.set_extra(None);
        let (export, device, live) = (self.export.settings(), self.device, self.live.fresh());
        // SSB keeps its device choice and the GPU's compiled kernels; everything else is the data's.
        let mut ssb = super::ssb::SsbView::default();
        (ssb.settings.device, ssb.gpu) = (self.ssb.settings.device, self.ssb.gpu.fresh());
        *self = StemPanel {
            path: keep.0,
            displays: keep.1,
            load_budget: keep.2,
            page: keep.3,
            browser: keep.4,
            export,
            device,
            live,
            ssb,
            started: true,
            notes,
            ..StemPanel::default()
        };
        self.data = Some(resident);
        self.loader = Some(Loader::new(source));
    }

    /// Stops loading; the frames read so far stay.
    pub fn cancel(&mut self) {
        if self.loader.take().is_some() {
            let (n, total) = self.data.as_ref().map_or((0, 0), |d| (d.loaded(), d.n_frames()));
            self.notes.push(format!("loading cancelled after {n} of {total} frames"));
            self.refresh(true);
        }
    }

    /// Loads every remaining frame now (hosts and tests; the UI loads a few batches per frame).
    pub fn finish_loading(&mut self) {
        self.started = true;
        while self.loader.is_some() {
            self.pump(Duration::from_secs(3600));
        }
        self.update_products();
    }

    /// One frame's work; [`Self::ui`](super::StemPanel) calls it. Requests repaints while loading.
    pub fn update(&mut self, ctx: &egui::Context) {
        if !self.started {
            self.started = true;
            self.open_example();
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect::<Vec<_>>());
        // Dropping a master with its data files opens the master (its links find the rest).
        let master = dropped.iter().find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains("_master"))).or(dropped.first());
        if let Some(path) = master.cloned() {
            // Natively the path is absolute: the master's data files are found beside it.
            if cfg!(target_arch = "wasm32") {
                // index.html hands drops to `AppControl::open_files` before eframe reads them whole.
                self.error = Some(format!("{}: drop files on the page of index.html, or use Open files…; the example stays open", path.display()));
            } else {
                self.path = path.display().to_string();
                self.open_path(&path);
            }
        }
        #[cfg(target_arch = "wasm32")]
        super::browser_files::deliver(self, ctx);
        if self.loader.is_some() {
            self.pump(self.load_budget);
            ctx.request_repaint();
        }
        self.update_products();
        if self.device == StemDevice::Gpu {
            self.update_gpu(ctx);
        }
    }

    /// The GPU live path: frames go up as they load; the detectors are summed there whenever
    /// the images on display are not those of the current detectors, data and uploaded frames.
    fn update_gpu(&mut self, ctx: &egui::Context) {
        let Some(data) = &self.data else { return };
        if let Some(done) = self.live.pump(ctx, data) {
            self.images =
                Some(VirtualImages { detectors: done.detectors, version: done.version, frames: done.frames, images: done.images, elapsed: done.elapsed, device: StemDevice::Gpu });
        }
        let wanted: Vec<_> = self.detectors.iter().map(|d| d.to_virtual(data.det)).collect();
        let frames = self.live.uploaded();
        let stale = self.images.as_ref().is_none_or(|i| i.device != StemDevice::Gpu || i.detectors != wanted || i.version != self.version || i.frames != frames);
        if stale && self.version > 0 && !wanted.is_empty() {
            self.live.request(ctx, &wanted, self.version);
        }
    }

    fn pump(&mut self, budget: Duration) {
        let (Some(loader), Some(data)) = (&mut self.loader, &mut self.data) else {
            self.loader = None;
            return;
        };
        let done = match loader.pump(data, budget) {
            Ok(Pumped::Progress) => false,
            Ok(Pumped::Done) => true,
            Err(e) => {
                self.error = Some(e);
                true
            }
        };
        if done {
            self.loader = None;
            if let Some(data) = &self.data {
                let absent = data.n_frames() - (0..data.n_frames()).filter(|&i| data.is_present(i)).count();
                if absent > 0 {
                    self.notes_once(format!(
                        "{absent} of {} frames have no data (missing data files or not read): transparent in the images, left out of the centre of mass, DPC rotation and iDPC",
                        data.n_frames()
                    ));
                }
            }
        }
        let cost = self.snapshot_cost + self.images.as_ref().map_or(Duration::ZERO, |i| i.elapsed);
        let due = self.snapshot_at.is_none_or(|t| t.elapsed() >= REFRESH_EVERY.max(cost * REFRESH_SPACING));
        self.refresh(done || due);
    }

    /// Takes a new snapshot of the detector-free products (when `now`), refining the probe.
    fn refresh(&mut self, now: bool) {
        let Some(data) = &self.data else { return };
        if !now || data.loaded() == 0 {
            return;
        }
        let t0 = Instant::now();
        let fused = data.products();
        self.version += 1;
        match auto_probe(&fused.mean_dp(), data.det) {
            Ok(p) => {
                self.probe = Some(p);
                if !self.user_placed {
                    self.detectors = vec![Detector::preset(Preset::Bf, &p), Detector::preset(Preset::Adf, &p)];
                    self.selected = self.selected.min(1);
                }
            }
            Err(e) if self.probe.is_none() => self.notes_once(format!("beam centre: {e}")),
            Err(_) => {}
        }
        self.fused = Some(fused);
        self.snapshot_at = Some(Instant::now());
        self.snapshot_cost = t0.elapsed();
        if self.loader.is_none() {
            self.com = None;
            self.auto_rotation = None;
        }
    }

    fn notes_once(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Recomputes whatever is stale: virtual images, the region pattern, DPC.
    pub fn update_products(&mut self) {
        let Some(data) = &self.data else { return };
        self.selected = self.selected.min(self.detectors.len().saturating_sub(1));
        let wanted: Vec<_> = self.detectors.iter().map(|d| d.to_virtual(data.det)).collect();
        // While loading, the version moves with each (spaced) snapshot, not with every batch.
        let stale = self.images.as_ref().is_none_or(|i| i.device != StemDevice::Cpu || i.detectors != wanted || i.version != self.version);
        // With the GPU picked the images come from [`Self::update_gpu`] only.
        if stale && self.version > 0 && !wanted.is_empty() && self.device == StemDevice::Cpu {
            let t0 = Instant::now();
            let images = data.virtual_images(&wanted);
            self.images = Some(VirtualImages { detectors: wanted, version: self.version, frames: data.loaded(), images, elapsed: t0.elapsed(), device: StemDevice::Cpu });
        }
        if let Some(region) = self.selection {
            if self.region_dp.as_ref().is_none_or(|r| r.0 != region || r.1 != self.version) {
                self.region_dp = Some((region, self.version, data.region_mean_dp(region)));
            }
        }
        if self.loader.is_none() && self.version > 0 {
            self.update_dpc();
        }
    }

    fn update_dpc(&mut self) {
        let (Some(data), Some(fused), Some(probe)) = (&self.data, &self.fused, self.probe) else { return };
        if self.com.is_none() {
            match dpc::com_field(&fused.com_raw, data.scan) {
                Ok(c) => self.com = Some(c),
                Err(e) => {
                    self.auto_rotation = Some(Err(e));
                    return;
                }
            }
        }
        let Some(com) = &self.com else { return };
        if self.auto_rotation.is_none() {
            // The half turn is resolved against the standard ADF image (as the reduction does).
            let adf = Detector::preset(Preset::Adf, &probe).to_virtual(data.det);
            let rotation = data.virtual_images(std::slice::from_ref(&adf)).and_then(|im| {
                let values: Vec<f64> = im.detectors.first().map(|d| d.2.iter().map(|&v| v as f64).collect()).unwrap_or_default();
                dpc::auto_rotation(com, &values)
            });
            self.auto_rotation = Some(rotation);
        }
        let auto = self.auto_rotation.as_ref().and_then(|r| r.as_ref().ok()).copied();
        let Some(rotation) = self.rotation.or(auto) else { return };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.version, rotation.degrees.to_bits(), rotation.transpose).hash(&mut h);
        let key = h.finish();
        if self.dpc.as_ref().is_none_or(|d| d.0 != key) {
            self.dpc = Some((key, dpc::products(com, rotation, &data.calibration, probe.radius)));
        }
    }
}

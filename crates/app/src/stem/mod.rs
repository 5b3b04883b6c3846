//! The 4D-STEM workspace: an acquisition held in memory, its mean (or max, or a scan region's)
//! diffraction pattern with draggable virtual detectors, their virtual images recomputed live,
//! centre of mass as a colour wheel, the DPC rotation and iDPC — every number from
//! `scatterlab_stem` (loading, exact sums, probe, rotation, integration, display mapping).
//!
//! It opens on a built-in synthetic example ([`example`]); natively a master or single HDF5 file
//! opens by path or by dropping it on the window. Loading is progressive and thread-free (a
//! few batches per UI frame, [`loader`]) so the same code runs in the browser. Phase 1 computes
//! on the CPU; the frame time of the last virtual-image update is shown with the device.

pub mod browse;
#[cfg(target_arch = "wasm32")]
pub mod browser_files;
pub mod detectors;
pub mod dpc;
pub mod example;
pub mod export;
pub mod gpu_live;
pub mod layout;
pub mod loader;
pub mod open;
pub mod readout;
pub mod resident;
pub mod scale;
pub mod ssb;
pub mod staged;
pub mod staged_open;
pub mod view;

mod access;
mod controls;
mod dp_view;
mod dpc_ui;
mod ui;
mod update;

use std::time::Duration;

use scatterlab_stem::reduce::{DetectorImages, FusedResult, Probe, VectorField, VirtualDetector};
use web_time::Instant;

use detectors::{Detector, Handle, Shape};
use dpc::{DpcProducts, DpcRotation};
use gpu_live::{GpuLive, StemDevice};
use loader::Loader;
use resident::{Resident, ScanRegion};
use view::{Display, ImageView, Transform};

/// Which pattern the diffraction view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DpSource {
    /// Mean over the loaded frames.
    #[default]
    Mean,
    /// Maximum over the loaded frames.
    Max,
    /// Mean over the selected scan region.
    Selection,
}

/// Which page of the workspace is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Page {
    /// Pattern, detectors, virtual images, DPC.
    #[default]
    Workspace,
    /// The HDF5 tree, inspector and quick views.
    Browse,
    /// Single-sideband ptychography: aberration sliders, live phase, fit.
    Ssb,
}

/// Display settings of the workspace's scalar images.
#[derive(Clone, Debug, PartialEq)]
pub struct Displays {
    /// The diffraction pattern (log by default: the disc outshines the rest).
    pub dp: Display,
    /// The virtual image.
    pub image: Display,
    /// The iDPC phase.
    pub idpc: Display,
    /// The CoM row and column components (signed: diverging, centred at 0).
    pub com: Display,
}

impl Default for Displays {
    fn default() -> Self {
        use scatterlab_stem::reduce::colormap::Colormap;
        Self {
            dp: Display::new(Colormap::Inferno, Transform::Log),
            image: Display::new(Colormap::Gray, Transform::Linear),
            idpc: Display::new(Colormap::Gray, Transform::Linear),
            com: Display::signed(),
        }
    }
}

/// A drag of a detector on the diffraction view, in detector pixels.
#[derive(Clone, Debug)]
struct Drag {
    index: usize,
    handle: Handle,
    start: Shape,
    from: [f64; 2],
}

/// The textures on display.
#[derive(Default)]
struct Views {
    dp: ImageView,
    image: ImageView,
    wheel: ImageView,
    legend: ImageView,
    idpc: ImageView,
    com_row: ImageView,
    com_col: ImageView,
}

/// Virtual images for one set of detectors over the loaded frames.
#[derive(Clone, Debug)]
pub struct VirtualImages {
    /// The detectors as summed.
    pub detectors: Vec<VirtualDetector>,
    /// Data version they belong to.
    version: u64,
    /// Frames the sums cover (`0..frames`).
    pub frames: usize,
    /// The sums (one image per detector, frames in scan order), or why there are none.
    pub images: Result<DetectorImages, String>,
    /// Wall time of the computation (on the GPU: dispatch and readback).
    pub elapsed: Duration,
    /// The device that computed them.
    pub device: StemDevice,
}

/// The 4D-STEM workspace (public fields are the user's settings; edit freely, the next frame
/// recomputes what they affect).
pub struct StemPanel {
    /// The desktop's path field (a master or single HDF5 file).
    pub path: String,
    /// The virtual detectors.
    pub detectors: Vec<Detector>,
    /// Index of the selected detector (shown as the virtual image; arrow keys move it).
    pub selected: usize,
    /// What the diffraction view shows.
    pub dp_source: DpSource,
    /// The selected scan region (a point is a 1 × 1 region).
    pub selection: Option<ScanRegion>,
    /// The DPC rotation in use; `None` takes the automatic one once it is known.
    pub rotation: Option<DpcRotation>,
    /// Display settings.
    pub displays: Displays,
    /// Time each UI frame may spend reading frames (at least one batch is read per frame).
    pub load_budget: Duration,
    /// The page shown.
    pub page: Page,
    /// The file browser.
    pub browser: browse::Browser,
    /// Export settings and the last result.
    pub export: export::ExportState,
    /// The device the virtual images are computed on (the user's choice, never substituted).
    pub device: StemDevice,
    /// The SSB page: settings, BF stack, phase, fit.
    pub ssb: ssb::SsbView,
    /// The GPU and the frames resident on it.
    live: GpuLive,
    /// The path the open acquisition came from (none for the example).
    source_path: Option<std::path::PathBuf>,
    data: Option<Resident>,
    loader: Option<Loader>,
    error: Option<String>,
    notes: Vec<String>,
    started: bool,
    /// Whether the user moved a detector (then a refined probe does not move them back).
    user_placed: bool,
    version: u64,
    fused: Option<FusedResult>,
    snapshot_at: Option<Instant>,
    /// What the last snapshot cost (products and probe), to space refreshes while loading.
    snapshot_cost: Duration,
    probe: Option<Probe>,
    images: Option<VirtualImages>,
    region_dp: Option<(ScanRegion, u64, Result<Vec<f64>, String>)>,
    com: Option<VectorField>,
    auto_rotation: Option<Result<DpcRotation, String>>,
    dpc: Option<(u64, DpcProducts)>,
    drag: Option<Drag>,
    /// Where a selection drag on the virtual image started (scan row, col).
    select_from: Option<[usize; 2]>,
    views: Views,
    /// The pixel under the pointer this frame, if over an image.
    hover: Option<readout::Hover>,
    /// How the columns share the window's width (updated each frame).
    columns: layout::Columns,
    /// Desktop: the open dialog ("Browse…") in flight.
    #[cfg(not(target_arch = "wasm32"))]
    open_dialog: crate::file_dialog::Pending,
}

impl Default for StemPanel {
    fn default() -> Self {
        Self {
            path: String::new(),
            detectors: Vec::new(),
            selected: 0,
            dp_source: DpSource::Mean,
            selection: None,
            rotation: None,
            displays: Displays::default(),
            load_budget: Duration::from_millis(12),
            page: Page::Workspace,
            browser: browse::Browser::default(),
            export: export::ExportState::default(),
            device: StemDevice::Cpu,
            ssb: ssb::SsbView::default(),
            live: GpuLive::default(),
            source_path: None,
            data: None,
            loader: None,
            error: None,
            notes: Vec::new(),
            started: false,
            user_placed: false,
            version: 0,
            fused: None,
            snapshot_at: None,
            snapshot_cost: Duration::ZERO,
            probe: None,
            images: None,
            region_dp: None,
            com: None,
            auto_rotation: None,
            dpc: None,
            drag: None,
            select_from: None,
            views: Views::default(),
            hover: None,
            columns: layout::Columns::for_width(1200.0),
            #[cfg(not(target_arch = "wasm32"))]
            open_dialog: Default::default(),
        }
    }
}

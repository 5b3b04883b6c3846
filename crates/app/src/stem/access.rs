//! What a host or a test may read and set on the 4D-STEM workspace: the acquisition, its
//! products (patterns, virtual images, DPC), the device, detectors, the image on display and
//! the pixel under the pointer.

use std::time::Duration;

use scatterlab_stem::reduce::{FusedResult, Probe};

use super::detectors::{Detector, Shape};
use super::dpc::{DpcProducts, DpcRotation};
use super::gpu_live::{GpuLive, StemDevice};
use super::resident::Resident;
use super::{layout, readout, StemPanel, VirtualImages};

impl StemPanel {
    /// The acquisition in memory (possibly still loading).
    pub fn data(&self) -> Option<&Resident> {
        self.data.as_ref()
    }

    /// Whether frames are still being read.
    pub fn is_loading(&self) -> bool {
        self.loader.is_some()
    }

    /// The last error (opening or reading), naming the file.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Warnings about the open acquisition (missing data files, metadata).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The probe found in the mean pattern (centre and BF radius).
    pub fn probe(&self) -> Option<Probe> {
        self.probe
    }

    /// The detector-free products of the loaded frames (sum/max pattern, total, CoM).
    pub fn fused(&self) -> Option<&FusedResult> {
        self.fused.as_ref()
    }

    /// The mean diffraction pattern of the loaded frames.
    pub fn mean_dp(&self) -> Option<Vec<f64>> {
        self.fused.as_ref().map(FusedResult::mean_dp)
    }

    /// The virtual images of the current detectors (when computed for them).
    pub fn virtual_images(&self) -> Option<&VirtualImages> {
        self.images.as_ref()
    }

    /// Detector `index`'s exact sums per loaded frame (scan order), raw (no display mapping).
    pub fn virtual_image(&self, index: usize) -> Option<&[u64]> {
        let images = self.images.as_ref()?.images.as_ref().ok()?;
        images.detectors.get(index).map(|d| d.2.as_slice())
    }

    /// The mean pattern of the selected scan region, or why there is none.
    pub fn region_dp(&self) -> Option<&Result<Vec<f64>, String>> {
        self.region_dp.as_ref().map(|r| &r.2)
    }

    /// The automatic DPC rotation (after loading), or why there is none.
    pub fn auto_rotation(&self) -> Option<&Result<DpcRotation, String>> {
        self.auto_rotation.as_ref()
    }

    /// The DPC products for the rotation in use (after loading).
    pub fn dpc(&self) -> Option<&DpcProducts> {
        self.dpc.as_ref().map(|d| &d.1)
    }

    /// The device that computed the virtual images on display (the chosen one before any).
    pub fn device(&self) -> &'static str {
        self.images.as_ref().map_or(self.device, |i| i.device).name()
    }

    /// Gives the workspace the GPU of `support` for the live path and SSB (nothing is uploaded
    /// or compiled until the user picks the GPU).
    pub fn set_gpu(&mut self, support: &crate::GpuSupport) {
        self.live = GpuLive::new(support);
        self.ssb.gpu = super::ssb::gpu::SsbGpuSide::new(support);
    }

    /// Shows the Browse page with `path` of the listed file `file` selected (listing the files
    /// first, as drawing the page does).
    pub fn browse_select(&mut self, file: &str, path: &str) -> Result<(), String> {
        self.page = super::Page::Browse;
        self.browser.sync(self.data.as_ref(), self.source_path.as_deref());
        self.browser.select_by_name(file, path)
    }

    /// Picks the device of the virtual images (as the CPU/GPU buttons do); the GPU only where
    /// there is one.
    pub fn set_device(&mut self, device: StemDevice) -> Result<(), String> {
        if let (StemDevice::Gpu, Some(why)) = (device, self.live.unavailable()) {
            return Err(format!("stemDevice: no GPU ({why})"));
        }
        self.device = device;
        Ok(())
    }

    /// What the GPU side is doing or why it cannot run, while the GPU is picked.
    pub fn gpu_status(&self) -> Option<String> {
        match (self.device, &self.data) {
            (StemDevice::Gpu, Some(d)) => self.live.status(d),
            _ => None,
        }
    }

    /// Wall time of the last virtual-image computation.
    pub fn frame_time(&self) -> Option<Duration> {
        self.images.as_ref().map(|i| i.elapsed)
    }

    /// Marks the detectors as placed by the user (a refined probe then leaves them alone).
    pub fn touch_detectors(&mut self) {
        self.user_placed = true;
    }

    /// Sets detector `index` (one past the last adds one) to `shape`, renamed `name` if given
    /// (an added one is `"custom"` by default), and selects it; a refined probe leaves the
    /// detectors alone from then on.
    pub fn set_detector(&mut self, index: usize, name: Option<String>, shape: Shape) -> Result<(), String> {
        let n = self.detectors.len();
        match self.detectors.get_mut(index) {
            Some(d) => {
                d.shape = shape;
                if let Some(name) = name {
                    d.name = name;
                }
            }
            None if index == n => self.detectors.push(Detector { name: name.unwrap_or_else(|| "custom".to_owned()), shape }),
            None => return Err(format!("stemDetector: index {index}, but there are {n} detectors (index {n} adds one)")),
        }
        self.selected = index;
        self.user_placed = true;
        Ok(())
    }

    /// The pixel under the pointer in the last frame (image, row, col, value, units, place).
    pub fn hover(&self) -> Option<&readout::Hover> {
        self.hover.as_ref()
    }

    /// How the workspace's columns share the window (columns per row, column width).
    pub fn columns(&self) -> layout::Columns {
        self.columns
    }

    /// The virtual image on display: the FNV-1a digest of its colormap indices and its limits
    /// (data units), once drawn.
    pub fn displayed_image(&self) -> Option<(u64, (f64, f64))> {
        Some((self.views.image.lut_digest?, self.views.image.limits?))
    }
}

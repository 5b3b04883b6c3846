//! Opening an acquisition for the workspace: a Dectris master (with its data files beside it)
//! or a single HDF5 file, by path. Every failure is a message naming the file; missing data
//! files are listed up front (reading stops with an error naming the first one reached).

use std::path::Path;

use scatterlab_stem::load::{Acquisition, DirFileSet, Hints};
use scatterlab_stem::reduce::pipeline::wavelength_from_kv;

use super::loader::AcquisitionSource;
use super::resident::{Resident, StemCalibration};

/// An opened acquisition, ready to stream into memory.
pub struct Opened {
    /// Room for its frames.
    pub resident: Resident,
    /// Its frames, in order.
    pub source: AcquisitionSource,
    /// Things worth saying that do not stop the load (missing files, metadata warnings).
    pub notes: Vec<String>,
}

/// Opens the acquisition whose master (or single file) is at `path`.
pub fn open_path(path: &Path) -> Result<Opened, String> {
    let (files, master) = DirFileSet::for_file(path).map_err(|e| e.to_string())?;
    let acq = Acquisition::open(&files, &master, &Hints::default()).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    opened(acq)
}

/// The workspace's view of an opened acquisition.
pub fn opened(acq: Acquisition) -> Result<Opened, String> {
    let (mut resident, notes) = describe(&acq)?;
    let source = AcquisitionSource::new(acq);
    resident.n_masked = source.n_masked();
    Ok(Opened { resident, source, notes })
}

/// Room for the frames of `acq` (`n_masked` left for the caller's source to fill in) and the notes
/// worth showing about it (missing data files, metadata warnings, frame count vs scan).
pub fn describe(acq: &Acquisition) -> Result<(Resident, Vec<String>), String> {
    let name = acq.master().to_owned();
    let scan = acq.scan_shape().map_err(|e| e.to_string())?;
    let scan = [scan.rows, scan.cols];
    let cal = acq.calibration();
    let calibration = StemCalibration {
        convergence_mrad: cal.convergence_mrad,
        wavelength_a: cal.wavelength_a.or_else(|| cal.voltage_kv.map(wavelength_from_kv)),
        scan_step_a: cal.scan_step_a,
        pixel_size_m: cal.pixel_size_m,
        detector_distance_m: cal.detector_distance_m,
    };
    let mut notes: Vec<String> = acq.warnings().to_vec();
    for m in acq.missing() {
        let frames = m.frames.map_or_else(String::new, |[a, b]| format!(" (frames {a}…{})", b.saturating_sub(1)));
        notes.push(format!("{name}: data file {} is missing{frames}", m.file));
    }
    let frames = scan[0] * scan[1];
    if acq.n_frames() != frames as u64 {
        notes.push(format!("{name}: {} frames for a {}×{} scan; the images show the first {}", acq.n_frames(), scan[0], scan[1], frames.min(acq.n_frames() as usize)));
    }
    let resident = Resident::new(&name, scan, acq.det_shape(), acq.pixel_kind(), calibration)?;
    Ok((resident, notes))
}

//! The bodies of the fuzz targets (one per input kind a user hands scatterlab; single HDF5 files and
//! filters in crates/hdf5/fuzz, 4D-STEM acquisitions here), kept in a library so that `cargo test`
//! replays the seed corpus and every crash regression on stable, and `cargo +nightly fuzz run
//! <target>` explores from there.
//!
//! Contract of every target: the input is arbitrary bytes; the reader returns a value or an
//! error and never panics, aborts or allocates without bound; and where a reader's value flows
//! into a computation here (a reflectivity model's curves, a crystal's expansion), a success is
//! finite — a NaN that leaves without an error is a bug as much as a panic.

use scatterlab_bloch::crystal::parse_cif_asymmetric;
use scatterlab_bloch::refine::pets::PetsData;
use scatterlab_bloch::refine::ExperimentConfig;
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;

/// The input as text: invalid UTF-8 is a reader's error in the programs too (they read strings).
fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A CIF: the asymmetric unit, its symmetry expansion and the expanded crystal's validation.
pub fn cif(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(asu) = parse_cif_asymmetric("fuzz", text) {
        let (crystal, images) = asu.expand();
        assert_eq!(images.len(), crystal.atoms.len(), "one image record per expanded atom");
        let _ = crystal.validate();
        for site in 0..asu.sites.len() {
            let _ = asu.position_basis(site);
            let _ = asu.adp_basis(site);
        }
    }
}

/// A PETS2 `.cif_pets` file.
pub fn cif_pets(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(pets) = PetsData::parse("fuzz.cif_pets", text) {
        let _ = pets.require_rotation_axis_position();
        assert!(pets.semiangle_deg().is_finite() || pets.frames.is_empty(), "semi-angle of a parsed file");
    }
}

/// A diffBloch `experiment.yaml`.
pub fn experiment_yaml(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(config) = ExperimentConfig::parse("experiment.yaml", text) {
        let _ = config.check_supported();
    }
}

/// A Bloch cases file (the reader only: a case's simulation is bounded by `Limits`, tested apart).
pub fn bloch_cases(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let _ = scatterlab_bloch::simulate::parse_cases(text);
}

/// A reflectivity model: parsed, compiled and, when its grids are small, evaluated on the CPU at
/// its start values; a curve returned without an error must be finite.
pub fn refl_model(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(model) = Model::from_json(text) else { return };
    let points: usize = model.datasets().iter().map(|d| d.q.len()).sum();
    if points > 4096 {
        return;
    }
    let values = model.values().to_vec();
    if let Ok(curves) = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])) {
        for curve in curves.iter().flatten() {
            assert!(curve.iter().all(|r| r.is_finite()), "a model evaluated without error returned a non-finite R");
        }
    }
}

/// A reflectivity fit task (the CLI's `refl fit` input): turned into a model and compiled.
pub fn refl_fit_task(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(file) = scatterlab_refl::fit::task::task_to_model(text) {
        let _ = Model::new(file);
    }
}

/// A reflectivity cases file (`refl compute`'s input).
pub fn refl_cases(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let _ = scatterlab_refl::cases::parse_cases(text);
}

/// An ORSO `.ort` text file.
pub fn orso(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let _ = scatterlab_refl::orso::parse_orso(text, "fuzz.ort");
}

/// Whitespace/comma text columns (q, R[, dR[, dQ]]).
pub fn columns(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(d) = scatterlab_refl::data::parse_columns(text, "fuzz.dat") {
        assert_eq!(d.q.len(), d.r.len(), "q and R of one dataset");
    }
}

/// The files of a 4D-STEM acquisition given as one input: a little-endian `u32` with the master's
/// length, the master (`master.h5`), then the first data file: the bytes any name ending in
/// `_000001.h5` resolves to (none when empty). Other data files are missing (frames left out, as
/// when a user picks part of an acquisition). Anything shorter than 4 bytes is a lone master.
struct Acquisition<'a> {
    master: &'a [u8],
    data: &'a [u8],
}

impl<'a> Acquisition<'a> {
    fn split(input: &'a [u8]) -> Self {
        match input.split_first_chunk::<4>() {
            Some((len, rest)) => {
                let (master, data) = rest.split_at((u32::from_le_bytes(*len) as usize).min(rest.len()));
                Self { master, data }
            }
            None => Self { master: input, data: &[] },
        }
    }
}

impl scatterlab_stem::load::FileSet for Acquisition<'_> {
    fn open(&self, name: &str) -> scatterlab_stem::load::Result<Option<scatterlab_hdf5::storage::DynStorage>> {
        let bytes = match name {
            "master.h5" => self.master,
            _ if name.ends_with("_000001.h5") => self.data,
            _ => &[],
        };
        Ok((!bytes.is_empty()).then(|| scatterlab_hdf5::storage::bytes(bytes.to_vec())))
    }

    fn list(&self) -> Vec<String> {
        vec!["master.h5".into(), "data_000001.h5".into()]
    }
}

/// Largest frame the `acquisition` target reads (16 MiB: a 2048 × 2048 u32 detector, beyond any
/// 4D-STEM camera); larger ones are opened and checked, not read.
const MAX_FUZZ_FRAME_BYTES: usize = 16 << 20;

/// A 4D-STEM acquisition (Dectris/ARINA master whose external links resolve to the data file, or
/// a single file): `Acquisition::open` (links, metadata, chunk index walks), then the first, a
/// middle and the last frame read and decoded, as the CLI, the app and the npm package do.
pub fn acquisition(data: &[u8]) {
    use scatterlab_stem::load::{Acquisition as Acq, Hints, ReadOptions};
    let files = Acquisition::split(data);
    let Ok(acq) = Acq::open(&files, "master.h5", &Hints::default()) else { return };
    let n = acq.n_frames();
    let _ = acq.scan_shape();
    // Frames up to the library's limit (256 MiB) are legal; reading three of them per input (bytes,
    // pixels and a chunk buffer each) measures the page faults of the machine, not new code: the
    // campaign's 2026-12-05 timeout was a forged ~200 MB frame, 0.34 s alone, 15 s under load.
    if acq.frame_bytes() > MAX_FUZZ_FRAME_BYTES {
        return;
    }
    for f in [0, n / 2, n.saturating_sub(1), n] {
        let r = acq.frame_at(f, &ReadOptions::default());
        assert!(f < n || r.is_err(), "frame {f} of {n} read without error");
    }
}

/// A target: its name (the folder of its seeds) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target by name, for the corpus replay.
pub const TARGETS: [Target; 10] = [
    ("cif", cif),
    ("cif_pets", cif_pets),
    ("experiment_yaml", experiment_yaml),
    ("bloch_cases", bloch_cases),
    ("refl_model", refl_model),
    ("refl_fit_task", refl_fit_task),
    ("refl_cases", refl_cases),
    ("orso", orso),
    ("columns", columns),
    ("acquisition", acquisition),
];

#[cfg(test)]
mod tests {
    use scatterlab_stem::load::{Acquisition as Acq, Hints, MAX_FRAME_BYTES};

    /// The campaign's slow acquisition (a forged detector shape within the old 1 GiB frame limit,
    /// its chunks never written: three frame reads took 3.5 s and 1.7 GB) is now refused when
    /// opened, naming the frame size and the limit.
    #[test]
    fn forged_frame_size_is_refused_at_open() {
        let input = include_bytes!("../../../fuzz/seeds/acquisition/regression_slow_frames_1p7gb.bin");
        let files = super::Acquisition::split(input);
        let message = match Acq::open(&files, "master.h5", &Hints::default()) {
            Ok(acq) => panic!("opened: {} frames", acq.n_frames()),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("detector frame of") && message.contains(&format!("over {MAX_FRAME_BYTES} bytes")), "{message}");
    }

    /// The campaign's out-of-memory (`acquisition`, 2026-12-05 20:28 UTC, after 9.3 M executions):
    /// a data file whose chunk holds thousands of small frames, ~2 GB decoded at once. Chunks are
    /// now held to the frame limit when opened, naming the chunk.
    #[test]
    fn forged_chunk_size_is_refused_at_open() {
        let files = super::Acquisition::split(include_bytes!("../../../fuzz/seeds/acquisition/regression_oom_chunk_2gb.bin"));
        let message = match Acq::open(&files, "master.h5", &Hints::default()) {
            Ok(acq) => panic!("opened: {} frames", acq.n_frames()),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("chunk of") && message.contains(&format!("over {MAX_FRAME_BYTES} bytes")), "{message}");
    }

    /// The campaign's crash (`acquisition`, 2026-12-05 19:50 UTC): a master whose declared total
    /// is near 2⁶⁴ with a data file missing made `neighbour_split` multiply past u64 (a panic
    /// with overflow checks, a wrong range without). It opens or fails without a panic now.
    #[test]
    fn overflowing_missing_file_split_is_not_a_panic() {
        super::acquisition(include_bytes!("../../../fuzz/seeds/acquisition/regression_overflow_neighbour_split.bin"));
    }
}

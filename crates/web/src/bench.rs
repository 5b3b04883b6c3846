//! Benchmark entry points of the npm package's wasm: the 4D-STEM chunk decoder timed in the
//! browser (`benches/web/stem_wasm.mjs`), set beside the native `stem_decode_bench`, and the
//! general 4×4 reflectivity on `refl_general_bench`'s stack (`benches/web/refl_wasm.mjs`), on the
//! CPU and, through [`GeneralGpuBench`], on the page's WebGPU in df64.
//!
//! Not part of the package's documented API: a page calls them with whole file bytes, which the
//! real loader ([`crate::h5`]) never does (it reads `File` slices in a worker).

use scatterlab_core::DeviceKind;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::{open_raw, H5File};
use scatterlab_refl::general::{self, general_reflectivity, GeneralRequest, GeneralStack, TensorLayer};
use wasm_bindgen::prelude::*;

use crate::Session;

/// Decodes every chunk of `dataset` in one HDF5 file held in memory and returns the sum of its
/// unsigned pixels (u8, u16 or u32 little-endian by element size) as a checksum (an f64, exact
/// below 2⁵³).
///
/// The same path as `stem_decode_bench`'s "read_chunks + decode (memory)" row: the file opened
/// with [`H5File::open`] over its bytes, [`open_raw`], chunks read in coalesced ranges and
/// decoded with `decode_chunk_into` into one reused frame buffer. The caller times the call
/// (copying `file` into wasm memory, about 5 % of the decoded size for bitshuffle+LZ4 detector
/// data, is included). Errors name the file `"bench.h5"` and the dataset.
#[wasm_bindgen(js_name = stemDecodeFile)]
pub fn stem_decode_file(file: &[u8], dataset: &str) -> Result<f64, JsError> {
    decode_sum(file, dataset).map_err(|e| JsError::new(&e))
}

/// [`stem_decode_file`] for Rust callers and native tests.
pub fn decode_sum(file: &[u8], dataset: &str) -> Result<f64, String> {
    let h5 = H5File::open(bytes(file.to_vec()), "bench.h5").map_err(|e| e.to_string())?;
    let ds = open_raw(&h5, dataset).map_err(|e| e.to_string())?;
    let frame_bytes = usize::try_from(ds.chunk_bytes()).map_err(|_| format!("{dataset}: chunk too large"))?;
    let elem = ds.dtype.size;
    let (mut frame, mut scratch) = (vec![0u8; frame_bytes], Vec::new());
    let mut sum = 0u64;
    ds.read_chunks(&h5, 0..ds.n_chunks(), |i, loc, raw| {
        ds.decode_chunk_into(i, loc, raw, &mut frame, &mut scratch)?;
        sum = sum.wrapping_add(sum_pixels(&frame, elem));
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(sum as f64)
}

/// Tilted biaxial films of `refl_general_bench`'s stack.
const GENERAL_LAYERS: usize = 100;
/// `refl_general_bench`'s energy (eV).
const GENERAL_ENERGY_EV: f64 = 250.0;

/// The general 4×4 method on `benches/src/bin/refl_general_bench.rs`' stack (vacuum | 100 tilted
/// biaxial 2 Å slabs | Si, 250 eV, 256 q; `rough`: 3 Å on every interface), the same formulas, so
/// the browser's time can stand beside the native one. Returns Σ (R_ss + R_pp + R_sp + R_ps) over
/// q as a checksum for the page to compare with the native bench's. The stack and q grid are
/// built inside the call (microseconds against the milliseconds of the 25,856 4×4 steps).
#[wasm_bindgen(js_name = reflGeneralBench)]
pub fn refl_general_bench(rough: bool) -> Result<f64, JsError> {
    general_checksum(rough).map_err(|e| JsError::new(&e))
}

/// [`refl_general_bench`] for Rust callers and native tests.
pub fn general_checksum(rough: bool) -> Result<f64, String> {
    let q = general_q();
    let r = general_reflectivity(&general_stack(rough), GENERAL_ENERGY_EV, &q).map_err(|e| e.to_string())?;
    Ok([&r.r_ss, &r.r_pp, &r.r_sp, &r.r_ps].iter().flat_map(|c| c.iter()).sum())
}

/// `refl_general_bench`'s q grid: 256 points from 0.001 to 0.25 Å⁻¹.
fn general_q() -> Vec<f64> {
    (0..256).map(|i| 0.001 + (0.25 - 0.001) * f64::from(i) / 255.0).collect()
}

/// The df64 4×4 kernel on the page's WebGPU device, on [`refl_general_bench`]'s stack: the
/// browser's side of `refl_general_bench`'s "GPU df64" rows (one curve, and 8 in one dispatch as
/// a DE population would send). The page times [`GeneralGpuBench::run`]; the first call compiles
/// the kernel and is not timed.
#[wasm_bindgen]
pub struct GeneralGpuBench {
    session: Session,
}

#[wasm_bindgen]
impl GeneralGpuBench {
    /// Acquires the page's WebGPU device (an error when the browser has none, never a CPU
    /// stand-in).
    pub async fn create() -> Result<GeneralGpuBench, JsError> {
        Ok(Self { session: Session::new(DeviceKind::Gpu).await.map_err(|e| JsError::new(&e))? })
    }

    /// The adapter and backend in words, for the benchmark's heading.
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.session.backend()
    }

    /// `curves` copies of the bench curve (`rough`: 3 Å on every interface) in one dispatch;
    /// returns Σ (R_ss + R_pp + R_sp + R_ps) over the first curve's q, to compare with the CPU's.
    pub async fn run(&self, rough: bool, curves: u32) -> Result<f64, JsError> {
        gpu_checksum(&self.session, rough, curves).await.map_err(|e| JsError::new(&e))
    }
}

/// [`GeneralGpuBench::run`] for Rust callers.
pub async fn gpu_checksum(session: &Session, rough: bool, curves: u32) -> Result<f64, String> {
    let (stack, q) = (general_stack(rough), general_q());
    let requests: Vec<GeneralRequest<'_>> = (0..curves.max(1)).map(|_| GeneralRequest { stack: &stack, energy_ev: GENERAL_ENERGY_EV, q: &q }).collect();
    let r = general::compute(session.engine(), &requests).await.map_err(|e| e.to_string())?;
    let first = r.first().ok_or("no curve computed")?;
    Ok([&first.r_ss, &first.r_pp, &first.r_sp, &first.r_ps].iter().flat_map(|c| c.iter()).sum())
}

/// `refl_general_bench`'s `shape(rough)`, formula for formula.
fn general_stack(rough: bool) -> GeneralStack {
    let sigma = if rough { 3.0 } else { 0.0 };
    let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
    for j in 0..GENERAL_LAYERS {
        let (f, jf) = (j as f64 / (GENERAL_LAYERS - 1) as f64, j as f64);
        layers.push(TensorLayer {
            thickness: 2.0,
            roughness: sigma,
            delta: [1.8e-3 * (1.0 + 0.15 * f), 2.0e-3 * (1.0 - 0.1 * f), 2.2e-3 * (1.0 + 0.05 * f)],
            beta: [1.0e-4 * (1.0 + 0.2 * f), 1.5e-4, 1.2e-4 * (1.0 + 0.1 * f)],
            euler_deg: [37.0 + 2.5 * jf, 50.0 + 0.3 * jf, 10.0 + 1.7 * jf],
        });
    }
    layers.push(TensorLayer::isotropic(0.0, sigma, 5.97e-3, 4.25e-3));
    GeneralStack { layers }
}

/// Sum of little-endian unsigned elements of `elem` bytes (1, 2 or 4; else of the bytes).
fn sum_pixels(frame: &[u8], elem: usize) -> u64 {
    match elem {
        2 => frame.chunks_exact(2).map(|p| u64::from(u16::from_le_bytes([p[0], p[1]]))).sum(),
        4 => frame.chunks_exact(4).map(|p| u64::from(u32::from_le_bytes([p[0], p[1], p[2], p[3]]))).sum(),
        _ => frame.iter().map(|&b| u64::from(b)).sum(),
    }
}

// Native only: the fixture is read from disk.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    /// dev_medium_data_000004.h5 (1,384 frames; the smallest, to keep the debug run short) sums
    /// to what h5py + hdf5plugin give for it; the 4 files together give 6,713,165,579.
    #[test]
    fn dev_medium_checksum() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/dev_medium_data_000004.h5");
        let bytes = std::fs::read(path).expect("fixture");
        assert_eq!(super::decode_sum(&bytes, "/entry/data/data"), Ok(567_075_486.0));
        assert!(super::decode_sum(b"not hdf5", "/x").is_err_and(|e| e.contains("bench.h5")));
    }

    /// The 4×4 bench stack computes finite, physical reflectances (0 < Σ < 4 per q on 256 q).
    #[test]
    fn general_checksum_is_physical() {
        for rough in [false, true] {
            let sum = super::general_checksum(rough).expect("bench stack");
            assert!(sum.is_finite() && sum > 0.0 && sum < 4.0 * 256.0, "rough {rough}: {sum}");
        }
    }
}

//! Benchmark entry points of the npm package's wasm: the 4D-STEM chunk decoder timed in the
//! browser (`benches/web/stem_wasm.mjs`), set beside the native `stem_decode_bench`.
//!
//! Not part of the package's documented API: a page calls them with whole file bytes, which the
//! real loader ([`crate::h5`]) never does (it reads `File` slices in a worker).

use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::{open_raw, H5File};
use wasm_bindgen::prelude::*;

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
}

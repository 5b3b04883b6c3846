//! Bitshuffle+LZ4 (filter 32008): arbitrary chunk bytes through the in-place decoder (output
//! buffers of the declared size and of a wrong size) and the registry's allocating decoder; and
//! a round trip of the input taken as plain data through our encoder.
//! Any panic, abort or out-of-memory is a bug; errors are the expected outcome.

#![no_main]

use hdf5_reader::messages::filter_pipeline::FilterDescription;
use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::filters::bslz4::{bslz4_header, decode_bslz4_into, encode_bslz4};
use scatterlab_hdf5::filters::decode_bitshuffle;

/// Largest output buffer the target allocates itself (the decoders must refuse larger claims).
const MAX_OUT: u64 = 16 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, src)) = data.split_first() else { return };
    let es = [1usize, 2, 4, 8][usize::from(sel & 3)];
    let declared = match bslz4_header(src) {
        Ok((total, _)) if total <= MAX_OUT => total as usize,
        _ => 0,
    };
    // Bit 2 picks a buffer one element short of the declared total: must be an error.
    let len = if sel & 4 == 0 { declared } else { declared.saturating_sub(es) };
    let mut dst = vec![0u8; len];
    let mut scratch = Vec::new();
    if let Ok(n) = decode_bslz4_into(src, es, &mut dst, &mut scratch) {
        assert!(n <= len, "decoder reported {n} bytes into a {len}-byte buffer");
    }
    let desc = FilterDescription { id: 32008, name: None, client_data: vec![0, 0, es as u32, 0, 2] };
    let _ = decode_bitshuffle(&desc, src, es);

    // Round trip: blocks of 8·(1 + bits 3..7 of sel) elements, or the default.
    let whole = &src[..src.len() - src.len() % es];
    let block = if sel & 0xF8 == 0 { 0 } else { 8 * usize::from(sel >> 3) };
    let packed = encode_bslz4(whole, es, block).expect("encoder accepts whole elements and a multiple of 8");
    let mut back = vec![0u8; whole.len()];
    let n = decode_bslz4_into(&packed, es, &mut back, &mut scratch).expect("own encoding decodes");
    assert_eq!((n, back.as_slice()), (whole.len(), whole), "bslz4 round trip");
});

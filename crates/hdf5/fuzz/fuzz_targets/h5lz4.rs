//! HDF5 LZ4 (filter 32004): arbitrary chunk bytes through the in-place decoder (buffers of the
//! declared size and one byte short) and the registry's allocating decoder; and a round trip of
//! the input as plain data with a block size the input picks (raw and compressed blocks).
//! Any panic, abort or out-of-memory is a bug; errors are the expected outcome.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::filters::decode_h5lz4;
use scatterlab_hdf5::filters::h5lz4::{decode_h5lz4_into, encode_h5lz4, h5lz4_header};

/// Largest output buffer the target allocates itself (the decoders must refuse larger claims).
const MAX_OUT: u64 = 16 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, src)) = data.split_first() else { return };
    let declared = match h5lz4_header(src) {
        Ok((orig, _)) if orig <= MAX_OUT => orig as usize,
        _ => 0,
    };
    let len = if sel & 1 == 0 { declared } else { declared.saturating_sub(1) };
    let mut dst = vec![0u8; len];
    if let Ok(n) = decode_h5lz4_into(src, &mut dst) {
        assert!(n <= len, "decoder reported {n} bytes into a {len}-byte buffer");
    }
    let _ = decode_h5lz4(src);

    // Round trip with blocks of 16·(bits 1..7 of sel) bytes (0 = one block).
    let block = 16 * usize::from(sel >> 1);
    let packed = encode_h5lz4(src, block);
    let mut back = vec![0u8; src.len()];
    let n = decode_h5lz4_into(&packed, &mut back).expect("own encoding decodes");
    assert_eq!((n, back.as_slice()), (src.len(), src), "h5lz4 round trip");
});

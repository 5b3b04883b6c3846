//! LZ4 blocks (the block format inside both HDF5-LZ4 and bitshuffle+LZ4 chunks): arbitrary bytes
//! through our decoder (`filters::lz4_block`, the one with `unsafe` wide copies) against
//! lz4_flex's `block::decompress_into` as the oracle — same verdict, same bytes, except offset 0,
//! which only we refuse; and a round trip of the input through lz4_flex's compressor.
//! Any panic, abort, out-of-bounds access (ASan) or disagreement is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::filters::lz4_block::{decompress_into, Lz4Error};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, src)) = data.split_first() else { return };
    // Output capacity: 0..=255 bytes, or 64·(sel & 0x7f) + slack up to ~8 KiB.
    let cap = if sel & 0x80 == 0 { usize::from(sel) } else { 64 * usize::from(sel & 0x7f) + usize::from(sel & 7) };
    let mut ours = vec![0u8; cap];
    let mut theirs = vec![0u8; cap];
    let a = decompress_into(src, &mut ours);
    let b = lz4_flex::block::decompress_into(src, &mut theirs);
    match (a, b) {
        (Ok(n), Ok(m)) => {
            assert_eq!(n, m, "decoded lengths differ");
            assert_eq!(ours[..n], theirs[..m], "decoded bytes differ");
        }
        (Ok(n), Err(e)) => panic!("we decoded {n} bytes of a block lz4_flex refuses ({e})"),
        (Err(e), Ok(m)) => assert!(matches!(e, Lz4Error::ZeroOffset { .. }), "we refuse ({e}) a block lz4_flex decodes to {m} bytes"),
        (Err(_), Err(_)) => {}
    }

    // Round trip: lz4_flex's compression of the input decodes back exactly (buffers exact and
    // with slack, where the wide copies may run past the sequence).
    let packed = lz4_flex::block::compress(src);
    for slack in [0, 17] {
        let mut back = vec![0u8; src.len() + slack];
        let n = decompress_into(&packed, &mut back).expect("lz4_flex's own block decodes");
        assert_eq!((n, &back[..n]), (src.len(), src), "lz4 round trip");
    }
});

//! The 32008 (bitshuffle+LZ4) and 32004 (LZ4) decoders on seeded random chunks.
//!
//! The chunks are built here from the format definition (a bit-by-bit transpose written out the
//! way `tests/data/issue5_verify_bslz4.py` states it, plus `lz4_flex` compression), not with the
//! crate's own forward transpose, so a mistake shared by both directions cannot pass. Seed printed;
//! `SCATTERLAB_SEED=N` replays a run. Malformed inputs: `tests/filters_malformed.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use hdf5_reader::filters::apply_pipeline;
use hdf5_reader::messages::filter_pipeline::FilterDescription;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_hdf5::filters::bitshuffle::{bitshuffle_block, bitunshuffle, bitunshuffle_block, default_block_elems};
use scatterlab_hdf5::filters::{bslz4, decode_bitshuffle, decode_h5lz4, filter_name, h5lz4, registry};

fn seed() -> u64 {
    scatterlab_testkit::seed("hdf5 filters")
}

/// Detector-like data: mostly small counts (compressible), some random bytes (not).
fn data(rng: &mut StdRng, bytes: usize) -> Vec<u8> {
    let noisy = rng.gen_bool(0.3);
    (0..bytes).map(|i| if noisy || i % 97 < 5 { rng.gen() } else { (rng.gen::<u8>() % 4) * (i % 3 == 0) as u8 }).collect()
}

/// The transpose by its definition: bit m of `out[(8j + k) * nb + i]` = bit k of byte j of element 8i + m.
fn naive_shuffle(src: &[u8], n: usize, es: usize) -> Vec<u8> {
    let nb = n / 8;
    let mut out = vec![0u8; n * es];
    for e in 0..n {
        for j in 0..es {
            for k in 0..8 {
                if src[e * es + j] >> k & 1 == 1 {
                    out[(8 * j + k) * nb + e / 8] |= 1 << (e % 8);
                }
            }
        }
    }
    out
}

/// A 32008 LZ4 chunk as bshuf_h5_filter writes it, from the definition.
fn naive_bslz4(src: &[u8], es: usize, block: usize) -> Vec<u8> {
    let n = src.len() / es;
    let mut out = (src.len() as u64).to_be_bytes().to_vec();
    out.extend_from_slice(&((block * es) as u32).to_be_bytes());
    let mut done = 0;
    while n - done >= 8 {
        let this = if n - done >= block { block } else { (n - done) / 8 * 8 };
        let c = lz4_flex::block::compress(&naive_shuffle(&src[done * es..(done + this) * es], this, es));
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
        done += this;
    }
    out.extend_from_slice(&src[done * es..]);
    out
}

fn bitshuffle_desc(es: usize, compression: u32) -> FilterDescription {
    FilterDescription { id: 32008, name: None, client_data: vec![0, 4, es as u32, 0, compression] }
}

#[test]
fn transpose_matches_definition_both_ways() {
    let mut rng = StdRng::seed_from_u64(seed());
    let mut cases = 0;
    for es in [1usize, 2, 3, 4, 8, 16] {
        for _ in 0..12 {
            let n = 8 * rng.gen_range(0..300);
            let src = data(&mut rng, n * es);
            let shuffled = naive_shuffle(&src, n, es);
            let mut fwd = vec![0u8; n * es];
            bitshuffle_block(&src, &mut fwd, n, es).unwrap();
            assert_eq!(fwd, shuffled, "forward transpose, es {es}, n {n}");
            let mut back = vec![0xA5u8; n * es];
            bitunshuffle_block(&shuffled, &mut back, n, es).unwrap();
            assert_eq!(back, src, "inverse transpose, es {es}, n {n}");
            cases += 1;
        }
    }
    assert_eq!(cases, 72);
    // One hand-checked value: element 1 = 0x0001 (u16) sets bit 1 of row 0, byte 0.
    let mut one = [0u8; 16];
    one[2] = 1;
    let mut s = [0u8; 16];
    bitshuffle_block(&one, &mut s, 8, 2).unwrap();
    assert_eq!(s, [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn bslz4_round_trips_every_element_size_and_block() {
    let mut rng = StdRng::seed_from_u64(seed());
    let (mut tails, mut partial, mut tiny, mut checked_bytes) = (0, 0, 0, 0usize);
    let reg = registry();
    let mut scratch = Vec::new();
    for es in [1usize, 2, 4, 8] {
        for round in 0..40 {
            let n = match round % 4 {
                0 => rng.gen_range(0..8),
                1 => rng.gen_range(8..200),
                _ => rng.gen_range(200..9000),
            };
            let block = match round % 3 {
                0 => default_block_elems(es),
                1 => 8 * rng.gen_range(1..40),
                _ => 8 * rng.gen_range(40..1200),
            };
            let src = data(&mut rng, n * es);
            let chunk = naive_bslz4(&src, es, block);
            tails += (n % 8 != 0) as usize;
            partial += (n % block >= 8) as usize;
            tiny += (n < 8) as usize;
            // Fast path into a caller buffer (with spare room and dirty contents).
            let mut dst = vec![0x5Au8; n * es + 3];
            let got = bslz4::decode_bslz4_into(&chunk, es, &mut dst, &mut scratch).unwrap();
            assert_eq!(got, n * es);
            assert_eq!(&dst[..got], &src[..], "es {es} n {n} block {block}");
            // The crate's own encoder writes the same bytes as the definition.
            assert_eq!(bslz4::encode_bslz4(&src, es, block).unwrap(), chunk);
            // Registry path and hdf5-reader's pipeline with our registry.
            assert_eq!(decode_bitshuffle(&bitshuffle_desc(es, 2), &chunk, es).unwrap(), src);
            let via = apply_pipeline(&chunk, &[bitshuffle_desc(es, 2)], 0, es, Some(&reg)).unwrap();
            assert_eq!(via, src);
            checked_bytes += src.len();
        }
    }
    println!("bslz4: 160 chunks, {checked_bytes} bytes, {tails} with a raw tail, {partial} with a partial block, {tiny} under 8 elements");
    assert!(tails > 100 && partial > 40 && tiny == 40, "coverage: tails {tails}, partial {partial}, tiny {tiny}");
}

#[test]
fn bitshuffle_without_compression_round_trips() {
    let mut rng = StdRng::seed_from_u64(seed());
    for es in [1usize, 2, 4, 8] {
        for _ in 0..10 {
            let n = rng.gen_range(0..3000);
            let block = [0, 8, 64, 8 * rng.gen_range(1..200)][rng.gen_range(0..4)];
            let src = data(&mut rng, n * es);
            // Blocked layout with the raw n % 8 tail, built from the definition.
            let eff = if block == 0 { default_block_elems(es) } else { block };
            let mut enc = Vec::new();
            let mut done = 0;
            while n - done >= 8 {
                let this = if n - done >= eff { eff } else { (n - done) / 8 * 8 };
                enc.extend(naive_shuffle(&src[done * es..(done + this) * es], this, es));
                done += this;
            }
            enc.extend_from_slice(&src[done * es..]);
            let mut dst = vec![0u8; n * es];
            bitunshuffle(&enc, &mut dst, n, es, block).unwrap();
            assert_eq!(dst, src, "es {es} n {n} block {block}");
            let desc = FilterDescription { id: 32008, name: None, client_data: vec![0, 4, es as u32, block as u32, 0] };
            assert_eq!(decode_bitshuffle(&desc, &enc, es).unwrap(), src);
        }
    }
}

#[test]
fn h5lz4_multi_block_with_raw_blocks_round_trips() {
    let mut rng = StdRng::seed_from_u64(seed());
    let reg = registry();
    let desc = FilterDescription { id: 32004, name: None, client_data: vec![] };
    let (mut raw_blocks, mut lz4_blocks, mut multi) = (0, 0, 0);
    for round in 0..120 {
        let len = if round % 10 == 0 { rng.gen_range(0..16) } else { rng.gen_range(16..20000) };
        let block = [0, 1, 7, 4096, rng.gen_range(1..3000)][round % 5];
        // Half random (stored raw), half compressible, so both block kinds appear in one chunk.
        let mut src = data(&mut rng, len);
        for b in src.iter_mut().take(len / 2) {
            *b = rng.gen();
        }
        let chunk = h5lz4::encode_h5lz4(&src, block);
        // Count the block kinds the way the format stores them.
        let eff = if block == 0 { len.max(1) } else { block.min(len.max(1)) };
        let (mut pos, mut done, mut blocks) = (12, 0, 0);
        while done < len {
            let this = eff.min(len - done);
            let c = u32::from_be_bytes(chunk[pos..pos + 4].try_into().unwrap()) as usize;
            if c == this {
                raw_blocks += 1
            } else {
                lz4_blocks += 1
            }
            pos += 4 + c;
            done += this;
            blocks += 1;
        }
        multi += (blocks > 1) as usize;
        let mut dst = vec![0u8; len];
        assert_eq!(h5lz4::decode_h5lz4_into(&chunk, &mut dst).unwrap(), len);
        assert_eq!(dst, src, "len {len} block {block}");
        assert_eq!(decode_h5lz4(&chunk).unwrap(), src);
        assert_eq!(apply_pipeline(&chunk, std::slice::from_ref(&desc), 0, 1, Some(&reg)).unwrap(), src);
    }
    println!("h5lz4: 120 chunks, {multi} multi-block, {raw_blocks} raw blocks, {lz4_blocks} LZ4 blocks");
    assert!(multi > 60 && raw_blocks > 50 && lz4_blocks > 50, "multi {multi}, raw {raw_blocks}, lz4 {lz4_blocks}");
}

#[test]
fn the_fixture_block_geometry_decodes() {
    // dev_oddtail: 61 × 67 u16 = 4087 elements, header block 8192 B, real block 4080 + 7 raw.
    let mut rng = StdRng::seed_from_u64(seed());
    let src = data(&mut rng, 4087 * 2);
    let chunk = naive_bslz4(&src, 2, 4096);
    assert_eq!(&chunk[..12], &[0, 0, 0, 0, 0, 0, 0x1F, 0xEE, 0, 0, 0x20, 0]);
    assert_eq!(&chunk[chunk.len() - 14..], &src[4080 * 2..]);
    let mut dst = vec![0u8; 8174];
    assert_eq!(bslz4::decode_bslz4_into(&chunk, 2, &mut dst, &mut Vec::new()).unwrap(), 8174);
    assert_eq!(dst, src);
    // u32 64 × 64: two 2048-element blocks.
    let src = data(&mut rng, 4096 * 4);
    let chunk = naive_bslz4(&src, 4, 2048);
    let mut dst = vec![0u8; 16384];
    assert_eq!(bslz4::decode_bslz4_into(&chunk, 4, &mut dst, &mut Vec::new()).unwrap(), 16384);
    assert_eq!(dst, src);
}

#[test]
fn filter_names() {
    assert_eq!(filter_name(1), "deflate");
    assert_eq!(filter_name(2), "shuffle");
    assert_eq!(filter_name(32004), "lz4");
    assert_eq!(filter_name(32008), "bitshuffle");
    assert_eq!(filter_name(32015), "zstd");
    assert_eq!(filter_name(32026), "blosc2");
    assert_eq!(filter_name(32099), "unknown");
    assert!(scatterlab_hdf5::filters::is_supported(32008) && !scatterlab_hdf5::filters::is_supported(32015));
}

//! Malformed 32008 / 32004 chunks give typed errors, never panics: hand-made defects first, then
//! seeded random truncations and byte flips of valid chunks (seed printed, `SCATTERLAB_SEED=N`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use hdf5_reader::filters::apply_pipeline;
use hdf5_reader::messages::filter_pipeline::FilterDescription;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_hdf5::filters::{bslz4, decode_bitshuffle, decode_h5lz4, h5lz4, registry};
use scatterlab_hdf5::DecodeError;

fn seed() -> u64 {
    scatterlab_testkit::seed("hdf5 malformed filters")
}

fn counts(n: usize) -> Vec<u8> {
    (0..n * 2).map(|i| if i % 2 == 0 { (i * 7 % 13) as u8 } else { 0 }).collect()
}

fn bs(src: &[u8], es: usize) -> Result<usize, DecodeError> {
    let mut dst = vec![0u8; 1 << 16];
    bslz4::decode_bslz4_into(src, es, &mut dst, &mut Vec::new())
}

fn header(total: u64, block: u32) -> Vec<u8> {
    let mut h = total.to_be_bytes().to_vec();
    h.extend_from_slice(&block.to_be_bytes());
    h
}

#[test]
fn bslz4_defects_are_named() {
    let good = bslz4::encode_bslz4(&counts(4087), 2, 4096).unwrap();
    assert_eq!(bs(&good, 2), Ok(8174));
    // Every truncation: the header, a block length, a block, the raw tail.
    for cut in 0..good.len() {
        let e = bs(&good[..cut], 2).unwrap_err();
        assert!(matches!(e, DecodeError::Truncated { .. } | DecodeError::Lz4 { .. }), "cut {cut}: {e}");
    }
    assert!(matches!(bs(&good[..5], 2), Err(DecodeError::Truncated { need: 12, have: 5, .. })));
    let tail = bs(&good[..good.len() - 1], 2).unwrap_err();
    assert_eq!(tail.to_string(), format!("bslz4 raw tail: truncated at byte {}: needs 14 bytes, 13 left", good.len() - 14));
    // Block not a multiple of 8 elements (8194 B / 2 = 4097).
    let mut odd = good.clone();
    odd[8..12].copy_from_slice(&8194u32.to_be_bytes());
    assert!(matches!(bs(&odd, 2), Err(DecodeError::Invalid { .. })), "{:?}", bs(&odd, 2));
    // Total not whole elements; element size 0; output too small.
    let mut half = good.clone();
    half[..8].copy_from_slice(&8175u64.to_be_bytes());
    assert!(matches!(bs(&half, 2), Err(DecodeError::Invalid { .. })));
    assert!(matches!(bs(&good, 0), Err(DecodeError::Invalid { .. })));
    let mut small = vec![0u8; 100];
    let e = bslz4::decode_bslz4_into(&good, 2, &mut small, &mut Vec::new()).unwrap_err();
    assert_eq!(e, DecodeError::SizeMismatch { what: "bslz4 total vs output buffer".into(), expected: 100, actual: 8174 });
    // A block length past the end.
    let mut over = good.clone();
    over[12..16].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(bs(&over, 2), Err(DecodeError::Truncated { need: 4294967295, .. })));
    // A block that decodes short: 32 bytes of LZ4 where the header promises 64.
    let mut short = header(64, 64);
    let c = lz4_flex::block::compress(&[1u8; 32]);
    short.extend_from_slice(&(c.len() as u32).to_be_bytes());
    short.extend_from_slice(&c);
    assert_eq!(bs(&short, 1), Err(DecodeError::SizeMismatch { what: "bslz4 block 0 decoded".into(), expected: 64, actual: 32 }));
    // Not LZ4 at all.
    let mut junk = header(64, 64);
    junk.extend_from_slice(&5u32.to_be_bytes());
    junk.extend_from_slice(&[0xF0, 0xFF, 0xFF, 0xFF, 0xFF]);
    assert!(matches!(bs(&junk, 1), Err(DecodeError::Lz4 { block: 0, .. })), "{:?}", bs(&junk, 1));
}

#[test]
fn bitshuffle_filter_refuses_what_it_cannot_decode() {
    let desc = |cd: Vec<u32>| FilterDescription { id: 32008, name: None, client_data: cd };
    let good = bslz4::encode_bslz4(&counts(64), 2, 0).unwrap();
    // zstd: typed here, UnsupportedFilter through hdf5-reader.
    assert_eq!(decode_bitshuffle(&desc(vec![0, 4, 2, 0, 3]), &good, 2), Err(DecodeError::Unsupported { feature: "bitshuffle+zstd".into() }));
    let via = apply_pipeline(&good, &[desc(vec![0, 4, 2, 0, 3])], 0, 2, Some(&registry())).unwrap_err();
    assert!(matches!(via, hdf5_reader::error::Error::UnsupportedFilter(ref s) if s == "bitshuffle+zstd"), "{via}");
    assert!(matches!(decode_bitshuffle(&desc(vec![0, 4, 2, 0, 9]), &good, 2), Err(DecodeError::Unsupported { .. })));
    // A forged total far beyond what 60-odd bytes of LZ4 can hold is refused before allocating.
    let mut forged = good.clone();
    forged[..8].copy_from_slice(&(1u64 << 40).to_be_bytes());
    assert!(matches!(decode_bitshuffle(&desc(vec![0, 4, 2, 0, 2]), &forged, 2), Err(DecodeError::Invalid { .. })));
    // Uncompressed bitshuffle with a partial element.
    assert!(matches!(decode_bitshuffle(&desc(vec![0, 4, 2, 0, 0]), &[1, 2, 3], 2), Err(DecodeError::Invalid { .. })));
    // The pipeline turns decode errors into hdf5-reader errors with our message.
    let e = apply_pipeline(&good[..20], &[desc(vec![0, 4, 2, 0, 2])], 0, 2, Some(&registry())).unwrap_err();
    assert!(e.to_string().contains("bslz4 block 0: truncated at byte 16"), "{e}");
}

#[test]
fn h5lz4_defects_are_named() {
    let src: Vec<u8> = (0..8192u32).map(|i| (i % 251 / 50) as u8).collect();
    let good = h5lz4::encode_h5lz4(&src, 4096);
    let dec = |b: &[u8]| h5lz4::decode_h5lz4_into(b, &mut vec![0u8; 8192]);
    assert_eq!(dec(&good), Ok(8192));
    for cut in 0..good.len() {
        assert!(dec(&good[..cut]).is_err(), "cut {cut} decoded");
    }
    let mut zero = good.clone();
    zero[8..12].copy_from_slice(&0u32.to_be_bytes());
    assert_eq!(dec(&zero), Err(DecodeError::Invalid { what: "h5lz4 header".into(), detail: "block size 0".into() }));
    let e = h5lz4::decode_h5lz4_into(&good, &mut [0u8; 10]).unwrap_err();
    assert_eq!(e, DecodeError::SizeMismatch { what: "h5lz4 size vs output buffer".into(), expected: 10, actual: 8192 });
    let mut forged = good.clone();
    forged[..8].copy_from_slice(&u64::MAX.to_be_bytes());
    assert!(matches!(decode_h5lz4(&forged), Err(DecodeError::Invalid { .. })));
}

#[test]
fn random_damage_never_panics() {
    let mut rng = StdRng::seed_from_u64(seed());
    let bs_good = bslz4::encode_bslz4(&counts(4087), 2, 0).unwrap();
    let lz_good = h5lz4::encode_h5lz4(&counts(4096), 1000);
    let (mut ok, mut err) = (0, 0);
    for i in 0..4000 {
        let mut b = if i % 2 == 0 { bs_good.clone() } else { lz_good.clone() };
        match rng.gen_range(0..3) {
            0 => b.truncate(rng.gen_range(0..b.len())),
            1 => {
                for _ in 0..rng.gen_range(1..6) {
                    let p = rng.gen_range(0..b.len());
                    b[p] ^= 1 << rng.gen_range(0..8);
                }
            }
            _ => {
                let p = rng.gen_range(0..b.len().min(20));
                b[p] = rng.gen();
            }
        }
        let r = std::panic::catch_unwind(|| {
            let es = if i % 4 == 0 { 4 } else { 2 };
            let a = bs(&b, es).is_ok();
            let c = decode_h5lz4(&b).is_ok();
            let d = decode_bitshuffle(&FilterDescription { id: 32008, name: None, client_data: vec![0, 4, 2, 0, 2] }, &b, 2).is_ok();
            (a, c, d)
        });
        let (a, c, d) = r.unwrap_or_else(|_| panic!("panic on damaged chunk {i}: {b:?}"));
        for x in [a, c, d] {
            if x {
                ok += 1
            } else {
                err += 1
            }
        }
    }
    println!("damaged chunks: {ok} decoded, {err} typed errors");
    assert_eq!(ok + err, 12000);
    assert!(err > 6000, "most damage must be detected ({err} errors)");
}

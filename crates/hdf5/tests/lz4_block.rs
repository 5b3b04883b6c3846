//! Our LZ4 block decoder (`filters::lz4_block`) against lz4_flex and a byte-by-byte reference:
//! lz4_flex-compressed random and run-heavy data, hand-built sequence streams (offsets 1, 2, 3,
//! 7, 8, 15, 16, 17, long 255-continued lengths, matches ending exactly at the output end),
//! every buffer both exact and with slack; then malformed blocks (typed errors, never a panic).
//! Seeded (seed printed, `SCATTERLAB_SEED=N` replays).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_hdf5::filters::lz4_block::{decompress_into, Lz4Error};

fn seed() -> u64 {
    scatterlab_testkit::seed("hdf5 lz4 blocks")
}

/// One sequence: literals, then a match of `len` bytes `offset` back (none in the last one).
struct Seq {
    lits: Vec<u8>,
    offset: u16,
    len: usize,
}

/// Appends an LZ4 length continuation: 255s, then the remainder.
fn push_len(out: &mut Vec<u8>, mut rest: usize) {
    while rest >= 255 {
        out.push(255);
        rest -= 255;
    }
    out.push(rest as u8);
}

/// Writes `seqs` and the final literals as an LZ4 block, straight from the format definition.
fn encode(seqs: &[Seq], last: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let token = |out: &mut Vec<u8>, lits: &[u8], mlen: Option<usize>| {
        let m = mlen.map_or(0, |m| m - 4);
        out.push(((lits.len().min(15) as u8) << 4) | m.min(15) as u8);
        if lits.len() >= 15 {
            push_len(out, lits.len() - 15);
        }
        out.extend_from_slice(lits);
        m
    };
    for s in seqs {
        let m = token(&mut out, &s.lits, Some(s.len));
        out.extend_from_slice(&s.offset.to_le_bytes());
        if m >= 15 {
            push_len(&mut out, m - 15);
        }
    }
    token(&mut out, last, None);
    out
}

/// The output by the definition: literals appended, matches copied one byte at a time.
fn reference(seqs: &[Seq], last: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in seqs {
        out.extend_from_slice(&s.lits);
        let start = out.len() - usize::from(s.offset);
        for i in 0..s.len {
            out.push(out[start + i]);
        }
    }
    out.extend_from_slice(last);
    out
}

/// Decodes `block` with ours into an exact buffer and one with 40 bytes of slack, and with
/// lz4_flex; all must give `want`.
fn check(block: &[u8], want: &[u8], what: &str) {
    for slack in [0, 40] {
        let mut dst = vec![0xAAu8; want.len() + slack];
        let n = decompress_into(block, &mut dst).unwrap_or_else(|e| panic!("{what}, slack {slack}: {e}"));
        assert_eq!(n, want.len(), "{what}, slack {slack}");
        assert!(dst[..n] == *want, "{what}, slack {slack}: bytes differ");
        let mut flex = vec![0u8; want.len() + slack];
        assert_eq!(lz4_flex::block::decompress_into(block, &mut flex).ok(), Some(want.len()), "{what}: lz4_flex");
        assert!(flex[..n] == *want, "{what}: lz4_flex bytes differ");
    }
}

/// Data with the shapes of bitshuffled frames: zero runs, short periodic runs, sparse noise.
fn run_heavy(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let len = rng.gen_range(1..600).min(n - v.len());
        match rng.gen_range(0..4) {
            0 => v.extend(std::iter::repeat_n(0, len)),
            1 => {
                let period: Vec<u8> = (0..rng.gen_range(2..20)).map(|_| rng.gen()).collect();
                v.extend(period.iter().cycle().take(len));
            }
            2 => v.extend((0..len).map(|_| if rng.gen_bool(0.05) { rng.gen::<u8>() } else { 0 })),
            _ => v.extend((0..len.min(40)).map(|_| rng.gen::<u8>())),
        }
    }
    v
}

#[test]
fn agrees_with_lz4_flex_on_compressed_data() {
    let mut rng = StdRng::seed_from_u64(seed());
    for case in 0..400 {
        let n = match case % 4 {
            0 => rng.gen_range(0..64),
            1 => rng.gen_range(64..1024),
            _ => rng.gen_range(1024..9000),
        };
        let src: Vec<u8> = if case % 3 == 0 { (0..n).map(|_| rng.gen()).collect() } else { run_heavy(&mut rng, n) };
        check(&lz4_flex::block::compress(&src), &src, &format!("case {case}, {n} bytes"));
    }
}

#[test]
fn hand_built_sequences_decode_by_definition() {
    let mut rng = StdRng::seed_from_u64(seed());
    for case in 0..600 {
        let mut seqs = Vec::new();
        let mut produced = 0usize;
        for _ in 0..rng.gen_range(1..12) {
            let lits: Vec<u8> = (0..[0, 1, 5, 14, 15, 16, 17, 300][rng.gen_range(0..8)]).map(|_| rng.gen()).collect();
            let have = produced + lits.len();
            if have == 0 {
                continue;
            }
            let offset = [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, rng.gen_range(1..=have)][rng.gen_range(0..11)].min(have);
            let len = [4, 5, 16, 18, 19, 20, 33, 274, 275, 1000][rng.gen_range(0..10)];
            produced = have + len;
            seqs.push(Seq { lits, offset: offset as u16, len });
        }
        // Half the cases end on a match that reaches exactly to the end (an empty final sequence).
        let last: Vec<u8> = if case % 2 == 0 { Vec::new() } else { (0..rng.gen_range(1..20)).map(|_| rng.gen()).collect() };
        check(&encode(&seqs, &last), &reference(&seqs, &last), &format!("case {case}"));
    }
    // Each short offset alone, ending at the output end, for every length up to 40.
    for offset in [1u16, 2, 3, 7, 8, 15, 16, 17] {
        for len in 4..40 {
            let seqs = [Seq { lits: (1..=offset as u8).collect(), offset, len }];
            check(&encode(&seqs, &[]), &reference(&seqs, &[]), &format!("offset {offset}, len {len}"));
        }
    }
    // A block of only literals, and the empty block (one zero token).
    check(&encode(&[], b"plain"), b"plain", "literals only");
    check(&[0], &[], "empty block");
}

#[test]
fn malformed_blocks_give_typed_errors() {
    let dec = |src: &[u8], cap: usize| decompress_into(src, &mut vec![0u8; cap]);
    assert_eq!(dec(&[], 8), Err(Lz4Error::Truncated { at: 0 }));
    // Literal length 15 + a continuation byte that is missing.
    assert_eq!(dec(&[0xF0], 64), Err(Lz4Error::Truncated { at: 1 }));
    // Literals promised, input ends: 5 declared, 2 present.
    assert_eq!(dec(&[0x50, 1, 2], 64), Err(Lz4Error::LiteralOverrun { at: 1, len: 5, have: 2 }));
    // Offset cut after one byte; match length continuation missing.
    assert_eq!(dec(&[0x10, 7, 1], 64), Err(Lz4Error::Truncated { at: 2 }));
    assert_eq!(dec(&[0x1F, 7, 1, 0], 64), Err(Lz4Error::Truncated { at: 4 }));
    // Offset 0; offset past the start of the output.
    assert_eq!(dec(&[0x10, 7, 0, 0, 0x00], 64), Err(Lz4Error::ZeroOffset { at: 1 }));
    assert_eq!(dec(&[0x10, 7, 2, 0, 0x00], 64), Err(Lz4Error::OffsetOutOfBounds { offset: 2, at: 1 }));
    // A match after the last byte of input (no final token).
    assert_eq!(dec(&[0x10, 7, 1, 0], 64), Err(Lz4Error::Truncated { at: 4 }));
    // Output too small for the literals, then for the match.
    assert_eq!(dec(&[0x30, 1, 2, 3], 2), Err(Lz4Error::OutputTooSmall { needed: 3, capacity: 2 }));
    assert_eq!(dec(&[0x10, 7, 1, 0, 0x00], 4), Err(Lz4Error::OutputTooSmall { needed: 5, capacity: 4 }));
    // A literal length of 255-bytes that would overflow on 32-bit: still just an overrun.
    let mut long = vec![0xF0];
    long.extend(std::iter::repeat_n(255u8, 10_000));
    long.push(0);
    assert!(matches!(dec(&long, 64), Err(Lz4Error::LiteralOverrun { .. })));
    // The messages say where.
    assert_eq!(Lz4Error::ZeroOffset { at: 9 }.to_string(), "match offset 0 at output byte 9");
}

#[test]
fn damaged_blocks_never_panic_and_agree_with_lz4_flex() {
    let mut rng = StdRng::seed_from_u64(seed());
    let mut errors = 0;
    for case in 0..3000 {
        let n = rng.gen_range(16..3000);
        let src = run_heavy(&mut rng, n);
        let mut block = lz4_flex::block::compress(&src);
        match case % 3 {
            0 => block.truncate(rng.gen_range(0..block.len())),
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..block.len());
                    block[i] = rng.gen();
                }
            }
            _ => block = (0..rng.gen_range(0..64)).map(|_| rng.gen()).collect(),
        }
        let cap = if rng.gen_bool(0.5) { src.len() } else { rng.gen_range(0..src.len() * 2) };
        let (mut ours, mut flex) = (vec![0u8; cap], vec![0u8; cap]);
        let a = decompress_into(&block, &mut ours);
        let b = lz4_flex::block::decompress_into(&block, &mut flex);
        match (a, b) {
            // Same stream, same output, whatever the output holds.
            (Ok(n), Ok(m)) => assert!(n == m && ours[..n] == flex[..n], "case {case}: outputs differ"),
            // lz4_flex lets offset 0 through; that is the only thing we refuse beyond it.
            (Err(Lz4Error::ZeroOffset { .. }), Ok(_)) => errors += 1,
            (Err(_), Err(_)) => errors += 1,
            (a, b) => panic!("case {case}: ours {a:?}, lz4_flex {b:?}"),
        }
    }
    assert!(errors > 1000, "only {errors} of 3000 damaged blocks were refused");
}

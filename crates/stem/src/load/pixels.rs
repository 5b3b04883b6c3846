//! Pixel buffers: detector counts as u8, u16 or u32 (as stored), u32 or u64 after binning.

use serde::{Deserialize, Serialize};

/// Owned pixels of one or more frames, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PixelData {
    /// 8-bit counts.
    U8(Vec<u8>),
    /// 16-bit counts (Dectris default).
    U16(Vec<u16>),
    /// 32-bit counts.
    U32(Vec<u32>),
    /// 64-bit sums (binned 32-bit data).
    U64(Vec<u64>),
}

/// Borrowed pixels (a stream batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelSlice<'a> {
    /// 8-bit counts.
    U8(&'a [u8]),
    /// 16-bit counts.
    U16(&'a [u16]),
    /// 32-bit counts.
    U32(&'a [u32]),
    /// 64-bit sums.
    U64(&'a [u64]),
}

/// The stored pixel types this loader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PixelKind {
    /// u8.
    U8,
    /// u16.
    U16,
    /// u32.
    U32,
    /// u64 (binned output only).
    U64,
}

impl PixelKind {
    /// Bytes per pixel.
    pub fn size(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::U16 => 2,
            Self::U32 => 4,
            Self::U64 => 8,
        }
    }

    /// `"u16"` etc.
    pub fn name(self) -> &'static str {
        match self {
            Self::U8 => "u8",
            Self::U16 => "u16",
            Self::U32 => "u32",
            Self::U64 => "u64",
        }
    }
}

impl PixelData {
    /// `n` zero pixels of `kind`.
    pub fn zeros(kind: PixelKind, n: usize) -> Self {
        match kind {
            PixelKind::U8 => Self::U8(vec![0; n]),
            PixelKind::U16 => Self::U16(vec![0; n]),
            PixelKind::U32 => Self::U32(vec![0; n]),
            PixelKind::U64 => Self::U64(vec![0; n]),
        }
    }

    /// The element type.
    pub fn kind(&self) -> PixelKind {
        match self {
            Self::U8(_) => PixelKind::U8,
            Self::U16(_) => PixelKind::U16,
            Self::U32(_) => PixelKind::U32,
            Self::U64(_) => PixelKind::U64,
        }
    }

    /// Number of pixels.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are no pixels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Borrowed view.
    pub fn as_slice(&self) -> PixelSlice<'_> {
        match self {
            Self::U8(v) => PixelSlice::U8(v),
            Self::U16(v) => PixelSlice::U16(v),
            Self::U32(v) => PixelSlice::U32(v),
            Self::U64(v) => PixelSlice::U64(v),
        }
    }

    /// Every pixel widened to u64 (tests, sums).
    pub fn to_u64(&self) -> Vec<u64> {
        self.as_slice().to_u64()
    }

    /// Resizes to `n` pixels of the same kind (new ones zero).
    pub(crate) fn resize(&mut self, n: usize) {
        match self {
            Self::U8(v) => v.resize(n, 0),
            Self::U16(v) => v.resize(n, 0),
            Self::U32(v) => v.resize(n, 0),
            Self::U64(v) => v.resize(n, 0),
        }
    }

    /// Fills `self[at..at + bytes.len() / size]` from stored bytes (little- or big-endian).
    pub(crate) fn fill_from_bytes(&mut self, at: usize, bytes: &[u8], big_endian: bool) {
        macro_rules! fill {
            ($v:expr, $t:ty, $n:literal) => {
                for (d, b) in $v.iter_mut().skip(at).zip(bytes.chunks_exact($n)) {
                    let mut a = [0u8; $n];
                    a.copy_from_slice(b);
                    *d = if big_endian { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) };
                }
            };
        }
        match self {
            Self::U8(v) => fill!(v, u8, 1),
            Self::U16(v) => fill!(v, u16, 2),
            Self::U32(v) => fill!(v, u32, 4),
            Self::U64(v) => fill!(v, u64, 8),
        }
    }

    /// Zeroes the pixels flagged in `bad` in every frame of `bad.len()` pixels.
    pub(crate) fn zero_masked(&mut self, bad: &[usize], frame_px: usize) {
        macro_rules! zero {
            ($v:expr) => {
                for frame in $v.chunks_exact_mut(frame_px.max(1)) {
                    for &i in bad {
                        if let Some(p) = frame.get_mut(i) {
                            *p = 0;
                        }
                    }
                }
            };
        }
        match self {
            Self::U8(v) => zero!(v),
            Self::U16(v) => zero!(v),
            Self::U32(v) => zero!(v),
            Self::U64(v) => zero!(v),
        }
    }
}

impl PixelSlice<'_> {
    /// Number of pixels.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::U64(v) => v.len(),
        }
    }

    /// Whether there are no pixels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pixel `i` as u64.
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            Self::U8(v) => v.get(i).map(|&x| u64::from(x)),
            Self::U16(v) => v.get(i).map(|&x| u64::from(x)),
            Self::U32(v) => v.get(i).map(|&x| u64::from(x)),
            Self::U64(v) => v.get(i).copied(),
        }
    }

    /// Every pixel widened to u64.
    pub fn to_u64(&self) -> Vec<u64> {
        match self {
            Self::U8(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Self::U16(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Self::U32(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Self::U64(v) => v.to_vec(),
        }
    }
}

//! Colormaps and RGBA8 images for display, from one shared table: `crates/stem/data/colormaps.bin`
//! (256 RGBA8 entries per map, sampled from matplotlib by `make_colormaps.py`). The CPU reads it
//! here; the WGSL twin (`shaders/stem/display.wgsl`, [`crate::gpu::DisplayGpu`]) receives the
//! same bytes as a storage buffer, so both colour with identical entries.
//!
//! A scalar image: transform ([`Scale`]) the value and both limits, normalise in f32, take the
//! LUT index `min(floor(norm·255), 255)` ([`super::display`]) and look the colour up. A vector
//! image (centre of mass, DPC): the 2-D colour wheel — hue from the direction
//! `atan2(row, col)` (0 = +col, a quarter turn = +row), full saturation, value = |v| / `max`
//! clipped to 1, HSV → RGB in f32, channels rounded to nearest.

use super::display::{normalise, Scale};
use super::ReduceError;

/// The shared table: maps in the order of [`Colormap::ALL`], 256 × RGBA8 each.
pub const TABLE: &[u8] = include_bytes!("../../data/colormaps.bin");

/// A colormap of the shared table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colormap {
    /// Black to white.
    Gray,
    /// matplotlib viridis.
    Viridis,
    /// matplotlib inferno.
    Inferno,
    /// matplotlib magma.
    Magma,
    /// matplotlib plasma.
    Plasma,
    /// matplotlib cividis.
    Cividis,
    /// Google turbo.
    Turbo,
    /// Diverging red–blue (ColorBrewer RdBu).
    RdBu,
    /// Cyclic twilight (phases).
    Twilight,
    /// Cyclic hsv.
    Hsv,
}

impl Colormap {
    /// Every map, in table order.
    pub const ALL: [Colormap; 10] = [
        Colormap::Gray,
        Colormap::Viridis,
        Colormap::Inferno,
        Colormap::Magma,
        Colormap::Plasma,
        Colormap::Cividis,
        Colormap::Turbo,
        Colormap::RdBu,
        Colormap::Twilight,
        Colormap::Hsv,
    ];

    /// matplotlib's name.
    pub fn name(self) -> &'static str {
        ["gray", "viridis", "inferno", "magma", "plasma", "cividis", "turbo", "RdBu", "twilight", "hsv"][self.index()]
    }

    /// Position in the table.
    pub fn index(self) -> usize {
        Colormap::ALL.iter().position(|&m| m == self).unwrap_or(0)
    }

    /// The map named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Result<Self, ReduceError> {
        Colormap::ALL
            .iter()
            .copied()
            .find(|m| m.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| ReduceError::new(format!("colormap '{name}'"), format!("unknown; known: {}", Colormap::ALL.map(|m| m.name()).join(", "))))
    }

    /// Entry `i` as RGBA8.
    pub fn rgba(self, i: u8) -> [u8; 4] {
        let o = (self.index() * 256 + i as usize) * 4;
        match TABLE.get(o..o + 4) {
            Some(&[r, g, b, a]) => [r, g, b, a],
            _ => [0, 0, 0, 255],
        }
    }
}

/// RGBA8 of a scalar image: `scale` applied to values and limits, then the fixtures' LUT index;
/// non-finite values (no data) get [`NO_DATA_RGBA`].
pub fn colorize(values: &[f64], low: f64, high: f64, scale: Scale, map: Colormap) -> Result<Vec<[u8; 4]>, ReduceError> {
    let (lo, hi) = (scale.apply(low), scale.apply(high));
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Err(ReduceError::new("display limits", format!("need finite low < high after the transform (got {lo}, {hi})")));
    }
    Ok(values.iter().map(|&v| if v.is_finite() { map.rgba(lut_index(normalise(scale.apply(v), lo, hi))) } else { NO_DATA_RGBA }).collect())
}

/// The colour of a position without data (NaN: a frame of a missing data file, or not loaded
/// yet): fully transparent, so the background shows through where no colormap colour could be
/// mistaken for a low count.
pub const NO_DATA_RGBA: [u8; 4] = [0, 0, 0, 0];

/// `min(floor(norm·255), 255)`.
pub fn lut_index(norm: f32) -> u8 {
    ((norm * 255.0).floor() as i32).clamp(0, 255) as u8
}

/// HSV (h in turns, s, v in [0, 1]) to RGB in [0, 1], f32 (the WGSL twin does the same steps).
pub fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h6 = (h - h.floor()) * 6.0;
    let k = |n: f32| {
        let t = (n + h6) % 6.0;
        v - v * s * (t.min(4.0 - t).clamp(0.0, 1.0))
    };
    [k(5.0), k(3.0), k(1.0)]
}

/// RGBA8 of a vector field by the 2-D colour wheel; `max` is the magnitude shown at full value.
pub fn color_wheel(r: &[f64], c: &[f64], max: f64) -> Result<Vec<[u8; 4]>, ReduceError> {
    if r.len() != c.len() || !(max.is_finite() && max > 0.0) {
        return Err(ReduceError::new("colour wheel", format!("needs equal component lengths and a positive finite maximum (got {} / {}, {max})", r.len(), c.len())));
    }
    let max = max as f32;
    Ok(r.iter()
        .zip(c)
        .map(|(&y, &x)| {
            let (y, x) = (y as f32, x as f32);
            let hue = y.atan2(x) / std::f32::consts::TAU;
            let value = ((x * x + y * y).sqrt() / max).min(1.0);
            let [cr, cg, cb] = hsv_to_rgb(hue, 1.0, if value.is_finite() { value } else { 0.0 });
            let q = |x: f32| (x * 255.0).round_ties_even().clamp(0.0, 255.0) as u8;
            [q(cr), q(cg), q(cb), 255]
        })
        .collect())
}

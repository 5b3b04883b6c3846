//! Per-atom factors of the structure-factor sums, shared by the full grid
//! ([`super::StructureFactors`]), the frame support tables and the reverse pass: the phase
//! exp(2πi h·r) from three per-axis tables, and the Debye–Waller factor computed once per
//! distinct U*.
//!
//! Why: one sin/cos and one exp per (atom, hkl) were ~9 % of a quartz gradient. The per-axis
//! product exp(2πi r₁h)·exp(2πi r₂k)·exp(2πi r₃l) is a few ulp from the direct phase (whose own
//! argument rounds by ≈ ε·|2π h·r|), and the P1 images of an isotropic site share one U*.

use num_complex::Complex64;

use crate::beams::Hkl;

/// Largest per-axis half-width tabulated (Bloch grids reach ~30).
const MAX_HALF_WIDTH: i32 = 4096;
/// Most Debye–Waller values kept by one cache (8 MB); beyond it each miss is computed into a
/// scratch vector (anisotropic sites expanded to P1 have one U* per image).
const MAX_CACHED_VALUES: usize = 1 << 20;

/// exp(2πi h·r) for one fractional position r over an hkl box.
#[derive(Debug, Clone)]
pub(crate) struct PhaseTable {
    frac: [f64; 3],
    half: [i32; 3],
    /// exp(2πi r_a·m) for m = −half[a]..=half[a], per axis a.
    axes: [Vec<Complex64>; 3],
}

impl PhaseTable {
    /// Tables for position `frac` covering |h_a| ≤ `half[a]` (none beyond [`MAX_HALF_WIDTH`]:
    /// every phase is then computed directly, so a stray huge index cannot exhaust memory).
    pub(crate) fn new(frac: [f64; 3], half: [i32; 3]) -> Self {
        let half = if half.iter().all(|&h| (0..=MAX_HALF_WIDTH).contains(&h)) { half } else { [-1; 3] };
        let axes = std::array::from_fn(|a| (-half[a]..=half[a]).map(|m| direct_phase(frac, a, m)).collect());
        Self { frac, half, axes }
    }

    /// The half-widths that cover every entry of `hkl`.
    pub(crate) fn half_range(hkl: &[Hkl]) -> [i32; 3] {
        std::array::from_fn(|a| hkl.iter().map(|h| h[a].saturating_abs()).max().unwrap_or(0))
    }

    /// exp(2πi h·r) (computed directly for an `h` outside the tables).
    #[inline]
    pub(crate) fn at(&self, h: Hkl) -> Complex64 {
        let slot = |a: usize| usize::try_from(i64::from(h[a]) + i64::from(self.half[a])).ok().and_then(|i| self.axes[a].get(i).copied());
        match (slot(0), slot(1), slot(2)) {
            (Some(x), Some(y), Some(z)) => x * y * z,
            _ => (0..3).map(|a| direct_phase(self.frac, a, h[a])).product(),
        }
    }
}

/// exp(2πi r_a·m).
fn direct_phase(frac: [f64; 3], a: usize, m: i32) -> Complex64 {
    let (sin, cos) = (std::f64::consts::TAU * (frac[a] * f64::from(m))).sin_cos();
    Complex64::new(cos, sin)
}

/// exp(−2π² hᵀU*h).
#[inline]
pub(crate) fn debye_waller(u_star: &[[f64; 3]; 3], h: Hkl) -> f64 {
    let h = h.map(f64::from);
    let mut quadratic = 0.0;
    for x in 0..3 {
        for y in 0..3 {
            quadratic += h[x] * u_star[x][y] * h[y];
        }
    }
    (-2.0 * std::f64::consts::PI.powi(2) * quadratic).exp()
}

/// Debye–Waller factors over one hkl list, kept per distinct U* (bitwise equal), up to
/// [`MAX_CACHED_VALUES`] values in all.
#[derive(Debug, Default)]
pub(crate) struct DebyeWallerCache {
    entries: Vec<([[u64; 3]; 3], Vec<f64>)>,
    scratch: Vec<f64>,
}

impl DebyeWallerCache {
    /// [`debye_waller`] of `u_star` at every entry of `hkl` (the same list on every call).
    pub(crate) fn get(&mut self, u_star: &[[f64; 3]; 3], hkl: &[Hkl]) -> &[f64] {
        let key = u_star.map(|row| row.map(f64::to_bits));
        if let Some(p) = self.entries.iter().position(|(k, _)| *k == key) {
            return &self.entries[p].1;
        }
        let values = hkl.iter().map(|&h| debye_waller(u_star, h));
        if (self.entries.len() + 1) * hkl.len() <= MAX_CACHED_VALUES {
            self.entries.push((key, values.collect()));
            return &self.entries[self.entries.len() - 1].1;
        }
        self.scratch.clear();
        self.scratch.extend(values);
        &self.scratch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    #[test]
    fn tabulated_phases_equal_the_direct_phase() {
        // Inside the tables (products of three table entries) and outside (direct per axis):
        // both within a few ulp of exp(2πi h·r) evaluated in one piece.
        let mut rng = StdRng::seed_from_u64(5);
        let mut worst: f64 = 0.0;
        for _ in 0..50 {
            let frac: [f64; 3] = std::array::from_fn(|_| rng.gen_range(-1.0..2.0));
            let table = PhaseTable::new(frac, [6, 4, 9]);
            for _ in 0..200 {
                let h: Hkl = std::array::from_fn(|_| rng.gen_range(-12..=12));
                let phase = std::f64::consts::TAU * (frac[0] * f64::from(h[0]) + frac[1] * f64::from(h[1]) + frac[2] * f64::from(h[2]));
                worst = worst.max((table.at(h) - Complex64::from_polar(1.0, phase)).norm());
            }
        }
        assert!(worst < 1e-13, "{worst:e}");
    }

    #[test]
    fn debye_waller_is_cached_per_distinct_u_star() {
        let hkl: Vec<Hkl> = vec![[0, 0, 0], [1, -2, 3], [4, 0, -1]];
        let (a, b) = ([[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.005]], [[0.01, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.01]]);
        let mut cache = DebyeWallerCache::default();
        let first = cache.get(&a, &hkl).to_vec();
        let other = cache.get(&b, &hkl).to_vec();
        assert_eq!(cache.get(&a, &hkl), first.as_slice());
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(first[0], 1.0);
        assert_eq!(first[1], debye_waller(&a, [1, -2, 3]));
        assert!((other[2] - (-2.0 * std::f64::consts::PI.powi(2) * 0.01 * 17.0).exp()).abs() < 1e-15);
        // Past the cap: computed into scratch, same values, nothing more kept.
        let long: Vec<Hkl> = vec![[1, 2, 3]; MAX_CACHED_VALUES / 2 + 1];
        let mut capped = DebyeWallerCache::default();
        let first = capped.get(&a, &long).to_vec();
        let second = capped.get(&b, &long).to_vec();
        assert_eq!(capped.entries.len(), 1);
        assert_eq!((first[0], second[0]), (debye_waller(&a, [1, 2, 3]), debye_waller(&b, [1, 2, 3])));
    }

    #[test]
    fn a_huge_index_gets_no_tables() {
        let table = PhaseTable::new([0.1, 0.2, 0.3], [5, 1 << 20, 5]);
        assert!(table.axes.iter().all(Vec::is_empty));
        let h: Hkl = [3, 1 << 19, -2];
        let phase = std::f64::consts::TAU * (0.1 * 3.0 + 0.2 * f64::from(1 << 19) + 0.3 * -2.0);
        assert!((table.at(h) - Complex64::from_polar(1.0, phase)).norm() < 1e-9);
    }
}

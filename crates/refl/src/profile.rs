//! Depth profiles of the optical constants, for plotting a stack as the recursion sees it.
//!
//! z = 0 is the interface between the fronting medium and layer 1; z grows into the sample (see
//! CONVENTIONS.md). Each interface is an error-function step of width σ = its roughness — the
//! profile whose Fourier transform the Névot–Croce factor approximates; σ = 0 is a sharp step.

use crate::Stack;

/// The four optical constants at a depth.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpticalConstants {
    /// Ordinary δ.
    pub delta_o: f64,
    /// Ordinary β.
    pub beta_o: f64,
    /// Extraordinary δ.
    pub delta_e: f64,
    /// Extraordinary β.
    pub beta_e: f64,
}

/// Depth of the interface above each layer j ≥ 1 (index j − 1 in the result), Å.
pub fn interface_depths(stack: &Stack) -> Vec<f64> {
    let mut z = 0.0;
    let mut depths = Vec::with_capacity(stack.layers.len().saturating_sub(1));
    for layer in stack.layers.iter().skip(1) {
        depths.push(z);
        z += layer.thickness;
    }
    depths
}

/// The profile sampled at `z` (Å). The stack should be valid ([`Stack::validate`]).
pub fn profile_at(stack: &Stack, z: &[f64]) -> Vec<OpticalConstants> {
    profile_with_steps(stack, z, |j, x| {
        let sigma = stack.layers[j + 1].roughness;
        if sigma > 0.0 {
            0.5 * (1.0 + libm::erf(x / (sigma * std::f64::consts::SQRT_2)))
        } else if x >= 0.0 {
            1.0
        } else {
            0.0
        }
    })
}

/// The profile as a sum of steps with a caller-chosen shape: `step(j, x)` is the fraction (0 to 1)
/// of the step at interface j (the one above layer j + 1) reached at `x` = z − (depth of that
/// interface). [`profile_at`] is this with erf steps; `crate::grading` passes erf/tanh/sharp shapes.
pub fn profile_with_steps(stack: &Stack, z: &[f64], step: impl Fn(usize, f64) -> f64) -> Vec<OpticalConstants> {
    let depths = interface_depths(stack);
    let Some(first) = stack.layers.first() else { return vec![OpticalConstants::default(); z.len()] };
    z.iter()
        .map(|&zi| {
            let mut c = OpticalConstants { delta_o: first.delta_o, beta_o: first.beta_o, delta_e: first.delta_e, beta_e: first.beta_e };
            for (j, pair) in stack.layers.windows(2).enumerate() {
                let (above, below) = (&pair[0], &pair[1]);
                let s = step(j, zi - depths[j]);
                c.delta_o += s * (below.delta_o - above.delta_o);
                c.beta_o += s * (below.beta_o - above.beta_o);
                c.delta_e += s * (below.delta_e - above.delta_e);
                c.beta_e += s * (below.beta_e - above.beta_e);
            }
            c
        })
        .collect()
}

/// `n` depths spanning the stack with 4σ margins above the first and below the last interface.
pub fn depth_grid(stack: &Stack, n: usize) -> Vec<f64> {
    let depths = interface_depths(stack);
    let max_sigma = stack.layers.iter().map(|l| l.roughness).fold(0.0, f64::max);
    let margin = 4.0 * max_sigma + 10.0;
    let (top, bottom) = (-margin, depths.last().copied().unwrap_or(0.0) + margin);
    (0..n).map(|i| top + (bottom - top) * i as f64 / (n.max(2) - 1) as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Layer;

    #[test]
    fn sharp_and_rough_steps() {
        let stack = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(100.0, 0.0, 1e-3, 1e-4), Layer::isotropic(0.0, 5.0, 5e-3, 2e-3)] };
        assert_eq!(interface_depths(&stack), vec![0.0, 100.0]);
        let p = profile_at(&stack, &[-1.0, 0.0, 50.0, 100.0, 1000.0]);
        assert_eq!(p[0].delta_o, 0.0);
        assert_eq!(p[1].delta_o, 1e-3); // a sharp step belongs to the layer below at its depth
        assert_eq!(p[2].beta_e, 1e-4);
        assert!((p[3].delta_o - 3e-3).abs() < 1e-15); // erf midpoint
        assert!((p[4].delta_o - 5e-3).abs() < 1e-15);
        let grid = depth_grid(&stack, 11);
        assert_eq!((grid.len(), grid[0] < -20.0, grid[10] > 120.0), (11, true, true));
    }
}

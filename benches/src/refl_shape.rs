//! refloxide's benchmark shape (shared/BENCHMARKS.md): 250 eV, q = linspace(0.001, 0.25, 256),
//! vacuum | N graded uniaxial slabs (200 Å in total) | Si.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use scatterlab_refl::{Layer, Stack};

/// Photon energy of the shape, eV.
pub const ENERGY_EV: f64 = 250.0;

/// The 256 q values, Å⁻¹.
pub fn q_grid() -> Vec<f64> {
    (0..256).map(|i| 0.001 + (0.25 - 0.001) * i as f64 / 255.0).collect()
}

/// vacuum | `n` slabs | Si, with the graded optical constants of the shape.
pub fn stack(n: usize) -> Stack {
    let mut layers = vec![Layer::VACUUM];
    for j in 0..n {
        let f = if n == 1 { 0.0 } else { j as f64 / (n - 1) as f64 };
        layers.push(Layer {
            thickness: 200.0 / n as f64,
            roughness: if j == 0 { 2.0 } else { 0.0 },
            delta_o: 1.8e-3 * (1.0 + 0.15 * f),
            beta_o: 1.0e-4 * (1.0 + 0.2 * f),
            delta_e: 2.2e-3 * (1.0 - 0.1 * f),
            beta_e: 1.2e-4 * (1.0 + 0.1 * f),
        });
    }
    layers.push(Layer::isotropic(0.0, 0.5, 5.97e-3, 4.25e-3));
    Stack { layers }
}

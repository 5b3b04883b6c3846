//! Gradients against a peer (FD-free): torch float64 autograd through diffBloch 0.2.0rc1's
//! `structure_factors` and `matrix_exp` in complex128 (`crates/bloch/data/
//! diffbloch_reference_gradients.py` → `diffbloch_gradients.json`), contracted from torch's P1
//! quantities (positions, U*, occupancies) onto our asymmetric-unit parameters. Gate 1e-9 of the
//! largest component (plan §6).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

#[path = "support/bloch_models.rs"]
mod support;

use std::path::PathBuf;

use scatterlab_bloch::gradient::Param;
use support::case_model;

/// Symmetric 3×3 from CIF order U11, U22, U33, U12, U13, U23.
fn tensor(u: [f64; 6]) -> [[f64; 3]; 3] {
    [[u[0], u[3], u[4]], [u[3], u[1], u[5]], [u[4], u[5], u[2]]]
}

/// R·X·Rᵀ.
fn congruence(r: &[[f64; 3]; 3], x: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|l| (0..3).map(|j| (0..3).map(|k| r[i][j] * x[j][k] * r[l][k]).sum::<f64>()).sum()))
}

#[test]
fn gradients_match_torch_f64() {
    // Peer: torch float64 autograd through diffBloch's structure_factors and matrix_exp in
    // complex128 (crates/bloch/data/diffbloch_reference_gradients.py), loss Σ w(t, hkl)·I.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/diffbloch_gradients.json");
    let peer: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).expect("peer gradients")).expect("json");
    let weight = |t: usize, h: [i32; 3]| (t as f64 + 0.3 * f64::from(h[0]) + 0.7 * f64::from(h[1]) + 1.1 * f64::from(h[2])).cos();
    for (id, case) in peer["cases"].as_object().unwrap() {
        let model = case_model(id);
        let rows = model.rows();
        let cotangent: Vec<f64> = rows.iter().map(|&(_, t, h)| weight(t, h)).collect();
        let loss: f64 = model.intensities().unwrap().iter().zip(&cotangent).map(|(i, w)| i * w).sum();
        let peer_loss = case["loss"].as_f64().unwrap();
        assert!((loss - peer_loss).abs() < 1e-10, "{id}: loss {loss} vs torch {peer_loss}");

        let vector = |v: &serde_json::Value| -> Vec<f64> { v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect() };
        let rows3 = |v: &serde_json::Value| -> Vec<[f64; 3]> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let r = vector(r);
                    [r[0], r[1], r[2]]
                })
                .collect()
        };
        let positions = rows3(&case["positions"]);
        let d_positions = rows3(&case["d_positions"]);
        let d_uij: Vec<[[f64; 3]; 3]> = case["d_uij_star"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let r = rows3(m);
                [r[0], r[1], r[2]]
            })
            .collect();
        let d_occupancy = vector(&case["d_occupancies"]);

        let asu = model.asymmetric_unit().clone();
        let (crystal, images) = asu.expand();
        // Our P1 atom j ↔ torch's atom by position modulo 1 (torch keeps them unwrapped).
        let peer_index: Vec<usize> = crystal
            .atoms
            .iter()
            .map(|atom| {
                positions
                    .iter()
                    .position(|p| {
                        (0..3).all(|c| {
                            let d = p[c] - atom.frac[c];
                            (d - d.round()).abs() < 1e-9
                        })
                    })
                    .unwrap_or_else(|| panic!("{id}: no torch atom at {:?}", atom.frac))
            })
            .collect();
        let b = asu.cell.reciprocal_matrix();
        let d = asu.cell.reciprocal_lengths();
        let bbt: [[f64; 3]; 3] = std::array::from_fn(|x| std::array::from_fn(|y| (0..3).map(|c| b[x][c] * b[y][c]).sum()));
        let frobenius = |g: &[[f64; 3]; 3], x: &[[f64; 3]; 3]| -> f64 { (0..3).map(|i| (0..3).map(|j| g[i][j] * x[i][j]).sum::<f64>()).sum() };
        let params: Vec<Param> = model.all_params().unwrap().into_iter().filter(|p| p.site().is_some()).collect();
        let ours = model.loss_gradient(&cotangent, &params).unwrap();
        let expected: Vec<f64> = params
            .iter()
            .map(|param| {
                let site = param.site().unwrap();
                images
                    .iter()
                    .enumerate()
                    .filter(|(_, image)| image.site == site)
                    .map(|(j, image)| {
                        let (k, r) = (peer_index[j], &image.op.rotation);
                        match *param {
                            Param::Position { dir, .. } => {
                                let u = asu.position_basis(site).unwrap()[dir];
                                (0..3).map(|i| (0..3).map(|c| r[i][c] * u[c]).sum::<f64>() * d_positions[k][i]).sum::<f64>()
                            }
                            Param::Uiso { .. } => frobenius(&d_uij[k], &bbt),
                            Param::Uaniso { dir, .. } => {
                                let delta = tensor(asu.adp_basis(site).unwrap()[dir]);
                                let star: [[f64; 3]; 3] = std::array::from_fn(|x| std::array::from_fn(|y| delta[x][y] * d[x] * d[y]));
                                frobenius(&d_uij[k], &congruence(r, &star))
                            }
                            Param::Occupancy { .. } => d_occupancy[k],
                            _ => 0.0,
                        }
                    })
                    .sum()
            })
            .collect();
        let scale = expected.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let worst = ours.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / scale;
        println!("{id}: {} structural parameters vs torch f64 autograd, worst |Δ|/max|∂L| {worst:.2e}", params.len());
        for ((param, a), b) in params.iter().zip(&ours).zip(&expected) {
            assert!((a - b).abs() <= 1e-9 * scale, "{id} {param:?}: ours {a} vs torch {b}");
        }
    }
}

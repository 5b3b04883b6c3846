//! Derivatives through the scaled Taylor propagator (any matrix, absorptive included; plan §4.2):
//! forward duals of each substep and its discrete adjoint, both exact for the truncated
//! polynomial the propagator evaluates.
//!
//! A substep is v ← T(Y)·v with Y = i·h·A and T(Y) = Σ_{k≤m} Y^k/k!. Forward: t₀ = v, ṫ₀ = v̇,
//! t_k = Y·t_{k−1}/k, ṫ_k = (Y·ṫ_{k−1} + Ẏ·t_{k−1})/k. Reverse, for dL = 2·Re⟨w, dv_out⟩:
//! u_j = (Yᴴ)^j·w, v_i = Y^i·v, z_j = Σ_{i ≤ m−1−j} v_i/(i+j+1)!, then Ā_Y = Σ_{j<m} u_j·z_jᴴ,
//! Ā_A += −i·h·Ā_Y and w_in = Σ_k u_k/k!.

use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::propagate::taylor::TaylorPlan;
use crate::BlochError;

/// y = (i·f)·M·x for the row-major n×n M.
fn i_times(n: usize, m: &[Complex64], x: &[Complex64], f: f64) -> Vec<Complex64> {
    m.chunks_exact(n).map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum::<Complex64>() * Complex64::new(0.0, f)).collect()
}

/// y = Mᴴ·x.
fn adjoint_times(n: usize, m: &[Complex64], x: &[Complex64]) -> Vec<Complex64> {
    let mut y = vec![Complex64::new(0.0, 0.0); n];
    for (row, xi) in m.chunks_exact(n).zip(x) {
        for (yj, a) in y.iter_mut().zip(row) {
            *yj += a.conj() * xi;
        }
    }
    y
}

fn check(n: usize, a: &[Complex64], start: usize, what: &str) -> Result<(), BlochError> {
    if n == 0 || a.len() != n * n || start >= n {
        return Err(InputError::new(what, format!("{} values, start {start}: not an {n}×{n} matrix with a start beam", a.len())).into());
    }
    Ok(())
}

/// ψ(t) and dψ(t) along each direction (row-major n×n, like `a`) at every thickness of `plan`,
/// starting from e_start: (`ψ[t][beam]`, `dψ[direction][t][beam]`). 2 extra matvecs per term and
/// direction.
#[allow(clippy::type_complexity)]
pub fn taylor_jvp(n: usize, a: &[Complex64], start: usize, plan: &TaylorPlan, directions: &[&[Complex64]]) -> Result<(Vec<Vec<Complex64>>, Vec<Vec<Vec<Complex64>>>), BlochError> {
    check(n, a, start, "Taylor jvp matrix")?;
    if let Some(bad) = directions.iter().find(|d| d.len() != n * n) {
        return Err(InputError::new("Taylor jvp direction", format!("{} values for an {n}×{n} matrix", bad.len())).into());
    }
    let zero = Complex64::new(0.0, 0.0);
    let mut v = vec![zero; n];
    v[start] = Complex64::new(1.0, 0.0);
    let mut dv = vec![vec![zero; n]; directions.len()];
    let (mut psi, mut dpsi) = (Vec::new(), vec![Vec::new(); directions.len()]);
    for &(h, substeps) in &plan.steps {
        for _ in 0..substeps {
            let mut term = v.clone();
            let mut dterm = dv.clone();
            for k in 1..=plan.terms {
                let f = h / f64::from(k);
                for (d, direction) in directions.iter().enumerate() {
                    let through_a = i_times(n, a, &dterm[d], f);
                    let through_e = i_times(n, direction, &term, f);
                    dterm[d] = through_a.iter().zip(&through_e).map(|(x, y)| x + y).collect();
                    for (s, x) in dv[d].iter_mut().zip(&dterm[d]) {
                        *s += x;
                    }
                }
                term = i_times(n, a, &term, f);
                for (s, x) in v.iter_mut().zip(&term) {
                    *s += x;
                }
            }
        }
        psi.push(v.clone());
        for (out, d) in dpsi.iter_mut().zip(&dv) {
            out.push(d.clone());
        }
    }
    Ok((psi, dpsi))
}

/// Reverse mode: given `λ[t]` (dL = 2·Re Σ_t ⟨λ(t), dψ(t)⟩; for intensity cotangents ḡ,
/// λ = ḡ ⊙ ψ), returns Ā (row-major, dL = 2·Re⟨Ā, dA⟩). Sweeps back from the last thickness,
/// keeping v at every substep start and recomputing the powers Y^i·v.
pub fn taylor_vjp(n: usize, a: &[Complex64], start: usize, plan: &TaylorPlan, lambdas: &[Vec<Complex64>]) -> Result<Vec<Complex64>, BlochError> {
    check(n, a, start, "Taylor vjp matrix")?;
    if lambdas.len() != plan.steps.len() || lambdas.iter().any(|l| l.len() != n) {
        return Err(InputError::new("Taylor vjp cotangents", format!("need {} thicknesses × {n} beams", plan.steps.len())).into());
    }
    let zero = Complex64::new(0.0, 0.0);
    let m = plan.terms as usize;
    // Forward pass: v at the start of every substep, grouped by thickness step.
    let mut v = vec![zero; n];
    v[start] = Complex64::new(1.0, 0.0);
    let mut starts: Vec<Vec<Vec<Complex64>>> = Vec::with_capacity(plan.steps.len());
    for &(h, substeps) in &plan.steps {
        let mut here = Vec::with_capacity(substeps as usize);
        for _ in 0..substeps {
            here.push(v.clone());
            let mut term = v.clone();
            for k in 1..=plan.terms {
                term = i_times(n, a, &term, h / f64::from(k));
                for (s, x) in v.iter_mut().zip(&term) {
                    *s += x;
                }
            }
        }
        starts.push(here);
    }
    let factorial: Vec<f64> = (0..=2 * m + 1)
        .scan(1.0, |acc, k| {
            if k > 0 {
                *acc *= k as f64;
            }
            Some(*acc)
        })
        .collect();
    let mut a_bar = vec![zero; n * n];
    let mut w = vec![zero; n];
    for (step, &(h, _)) in plan.steps.iter().enumerate().rev() {
        for (s, l) in w.iter_mut().zip(&lambdas[step]) {
            *s += l;
        }
        for v_start in starts[step].iter().rev() {
            // v_i = Y^i·v (i < m) and u_j = (Yᴴ)^j·w (j ≤ m), Y = i·h·A, Yᴴ = −i·h·Aᴴ.
            let mut powers = vec![v_start.clone()];
            for _ in 1..m {
                let next = i_times(n, a, &powers[powers.len() - 1], h);
                powers.push(next);
            }
            let mut u = vec![w.clone()];
            for _ in 1..=m {
                let next: Vec<Complex64> = adjoint_times(n, a, &u[u.len() - 1]).iter().map(|x| x * Complex64::new(0.0, -h)).collect();
                u.push(next);
            }
            let minus_ih = Complex64::new(0.0, -h);
            for (j, uj) in u.iter().enumerate().take(m) {
                let z: Vec<Complex64> = (0..n).map(|b| (0..m - j).map(|i| powers[i][b] / factorial[i + j + 1]).sum()).collect();
                for (row, ur) in a_bar.chunks_exact_mut(n).zip(uj) {
                    let scaled = ur * minus_ih;
                    for (x, zc) in row.iter_mut().zip(&z) {
                        *x += scaled * zc.conj();
                    }
                }
            }
            w = (0..n).map(|b| u.iter().enumerate().map(|(k, uk)| uk[b] / factorial[k]).sum()).collect();
        }
    }
    Ok(a_bar)
}

#[cfg(test)]
#[path = "taylor_tests.rs"]
mod tests;

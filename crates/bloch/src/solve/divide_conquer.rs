//! Eigenvalues and eigenvectors of a real symmetric tridiagonal matrix by divide and conquer
//! (Cuppen's rank-one tearing, Gu & Eisenstat's Löwner recomputation of z): the middle stage of
//! [`super::symmetric::symmetric_eigen`].
//!
//! This is faer 0.24's `tridiag_evd::divide_and_conquer` (MIT licence), adapted to f64, with two
//! changes that matter at the Bloch sizes (N ≈ 300, where faer spent ~60 % of its
//! eigendecomposition here): the secular equation and the Löwner products are summed in SIMD
//! lanes ([`super::secular`]), and the merge product Q·[blockdiag(U₀, U₁)] skips the deflated
//! columns (LAPACK's dlaed3 does the same), which are plain copies. Leaves (≤ `leaf` rows) use
//! our implicit QL sweeps ([`super::tridiagonal_ql`]).

use faer::linalg::householder::make_householder_in_place;
use faer::linalg::matmul::matmul;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, Par};

use super::secular::Secular;
use super::tridiagonal_ql::{tridiagonal_ql, tridiagonal_ql_pair};

/// Why the tridiagonal solve failed (a QL leaf did not converge, or the lengths disagree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoConvergence;

/// Overwrites `diag` (length n) with the eigenvalues, ascending, and `u` (n × n) with the
/// eigenvectors of the symmetric tridiagonal matrix with diagonal `diag` and sub-diagonal
/// `off` (length n − 1, overwritten); sub-problems of at most `leaf` rows go to QL sweeps.
pub fn tridiagonal_eigen(diag: &mut [f64], off: &mut [f64], u: MatMut<'_, f64>, leaf: usize) -> Result<(), NoConvergence> {
    let n = diag.len();
    if n == 0 {
        return Ok(());
    }
    if off.len() + 1 < n || u.nrows() != n || u.ncols() != n {
        return Err(NoConvergence);
    }
    WORK.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            if kept.as_ref().is_none_or(|w| w.z.len() < n) {
                *kept = Some(Work::new(n));
            }
            match kept.as_mut() {
                Some(work) => recurse(diag, &mut off[..n - 1], u, work, leaf.max(4)),
                None => recurse(diag, &mut off[..n - 1], u, &mut Work::new(n), leaf.max(4)),
            }
        }
        Err(_) => recurse(diag, &mut off[..n - 1], u, &mut Work::new(n), leaf.max(4)),
    })
}

thread_local! {
    /// The merge scratch (five N × N matrices), kept between calls: allocating and zeroing it
    /// for every tilt cost a few per cent of a borane-sized gradient.
    static WORK: std::cell::RefCell<Option<Work>> = const { std::cell::RefCell::new(None) };
}

/// Per-merge scratch, sized for the whole problem (children use prefixes: they run one at a
/// time).
struct Work {
    permuted_d: Vec<f64>,
    permuted_z: Vec<f64>,
    z: Vec<f64>,
    householder: Vec<f64>,
    mus: Vec<f64>,
    shifts: Vec<f64>,
    pl_before: Vec<usize>,
    pl_after: Vec<usize>,
    pr: Vec<usize>,
    run_info: Vec<usize>,
    repaired: Mat<f64>,
    tmp: Mat<f64>,
    /// The merge product's operands and result (see [`merge_product_deflated`]).
    rank_one: Mat<f64>,
    product: Mat<f64>,
    copies: Mat<f64>,
}

impl Work {
    fn new(n: usize) -> Self {
        Self {
            permuted_d: vec![0.0; n],
            permuted_z: vec![0.0; n],
            z: vec![0.0; n],
            householder: vec![0.0; n],
            mus: vec![0.0; n],
            shifts: vec![0.0; n],
            pl_before: vec![0; n],
            pl_after: vec![0; n],
            pr: vec![0; n],
            run_info: vec![0; n],
            repaired: Mat::zeros(n, n),
            tmp: Mat::zeros(n, n),
            rank_one: Mat::zeros(n, n),
            product: Mat::zeros(n, n),
            copies: Mat::zeros(n, n),
        }
    }
}

fn recurse(diag: &mut [f64], off: &mut [f64], mut u: MatMut<'_, f64>, work: &mut Work, leaf: usize) -> Result<(), NoConvergence> {
    let n = diag.len();
    if n <= leaf {
        return tridiagonal_ql(diag, off, u);
    }
    let n1 = n / 2;
    let rho_signed = off[n1 - 1];
    diag[n1 - 1] -= rho_signed.abs();
    diag[n1] -= rho_signed.abs();
    {
        let (d0, d1) = diag.split_at_mut(n1);
        let (o0, rest) = off.split_at_mut(n1 - 1);
        let o1 = &mut rest[1..];
        let (u0, _, _, u1) = u.rb_mut().split_at_mut(n1, n1);
        if n - n1 <= leaf {
            // Both halves are leaves: swept together (their dependency chains overlap).
            tridiagonal_ql_pair((d0, o0, u0), (d1, o1, u1))?;
        } else {
            recurse(d0, o0, u0, work, leaf)?;
            recurse(d1, o1, u1, work, leaf)?;
        }
    }
    merge(diag, rho_signed, u, n1, work);
    Ok(())
}

/// The rank-one merge of two solved halves (U₀ top-left, U₁ bottom-right of `u`, their
/// eigenvalues in `diag`).
fn merge(diag: &mut [f64], rho_signed: f64, mut u: MatMut<'_, f64>, n1: usize, w: &mut Work) {
    let n = diag.len();
    let Work { permuted_d, permuted_z, z, householder, mus, shifts, pl_before, pl_after, pr, run_info, repaired, tmp, rank_one, product, copies } = w;
    let (permuted_d, permuted_z, z, householder) = (&mut permuted_d[..n], &mut permuted_z[..n], &mut z[..n], &mut householder[..n]);
    let (mus, shifts, pl_before, pl_after, pr, run_info) = (&mut mus[..n], &mut shifts[..n], &mut pl_before[..n], &mut pl_after[..n], &mut pr[..n], &mut run_info[..n]);
    let mut repaired = repaired.as_mut().submatrix_mut(0, 0, n, n);
    let mut tmp = tmp.as_mut().submatrix_mut(0, 0, n, n);

    let inv_sqrt2 = std::f64::consts::FRAC_1_SQRT_2;
    for i in 0..n1 {
        z[i] = u[(n1 - 1, i)] * inv_sqrt2;
    }
    let sign = if rho_signed < 0.0 { -1.0 } else { 1.0 };
    for i in n1..n {
        z[i] = sign * u[(n1, i)] * inv_sqrt2;
    }
    let rho = rho_signed.abs() * 2.0;
    // Merge the two ascending halves.
    {
        let (mut i, mut j) = (0, 0);
        for p in pl_before.iter_mut() {
            if i == n1 || (j < n - n1 && diag[n1 + j] <= diag[i]) {
                *p = n1 + j;
                j += 1;
            } else {
                *p = i;
                i += 1;
            }
        }
    }
    for (i, &p) in pl_before.iter().enumerate() {
        permuted_d[i] = diag[p];
        permuted_z[i] = z[p];
    }
    let dmax = permuted_d.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let zmax = permuted_z.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let tol = 8.0 * f64::EPSILON * dmax.max(zmax);
    if rho * zmax <= tol {
        // The halves decouple: sort the columns of blockdiag(U₀, U₁).
        tmp.copy_from(u.rb());
        for i in 0..n1 {
            for k in n1..n {
                tmp[(k, i)] = 0.0;
            }
        }
        for k in n1..n {
            for i in 0..n1 {
                tmp[(i, k)] = 0.0;
            }
        }
        for (j, &p) in pl_before.iter().enumerate() {
            u.rb_mut().col_mut(j).copy_from(tmp.rb().col(p));
        }
        diag.copy_from_slice(permuted_d);
        return;
    }
    for zi in permuted_z.iter_mut() {
        if (rho * *zi).abs() <= tol {
            *zi = 0.0;
        }
    }
    // Runs of (numerically) equal poles: a Householder reflection concentrates their weight in
    // the last member, the others deflate.
    let mut applied_householder = false;
    let mut idx = 0;
    while idx < n {
        let mut run_len = 1;
        let d_prev = permuted_d[idx];
        while idx + run_len < n && permuted_d[idx + run_len] - d_prev <= tol {
            permuted_d[idx + run_len] = d_prev;
            run_len += 1;
        }
        run_info[idx..idx + run_len].fill(run_len);
        if run_len > 1 {
            applied_householder = true;
            let h = &mut householder[idx..idx + run_len];
            h.copy_from_slice(&permuted_z[idx..idx + run_len]);
            let (tail, head) = h.split_at_mut(run_len - 1);
            let head = &mut head[0];
            let tail = faer::ColMut::from_slice_mut(tail).as_dyn_stride_mut().reverse_rows_mut();
            let info = make_householder_in_place(head, tail);
            permuted_z[idx..idx + run_len].fill(0.0);
            permuted_z[idx + run_len - 1] = *head;
            *head = info.tau;
        }
        idx += run_len;
    }
    // Non-deflated first (in permuted_d/permuted_z), deflated after; pl_after maps back.
    let (mut non_deflated, mut deflated) = (0, 0);
    for reader in 0..n {
        let (zr, dr) = (permuted_z[reader], permuted_d[reader]);
        if zr == 0.0 {
            diag[deflated] = dr;
            pr[deflated] = reader;
            deflated += 1;
        } else {
            permuted_z[non_deflated] = zr;
            permuted_d[non_deflated] = dr;
            pl_after[non_deflated] = reader;
            non_deflated += 1;
        }
    }
    permuted_d[non_deflated..].copy_from_slice(&diag[..deflated]);
    pl_after[non_deflated..].copy_from_slice(&pr[..deflated]);
    compute_eigenvalues(mus, shifts, &permuted_d[..], &permuted_z[..non_deflated], rho, non_deflated);
    loewner(permuted_z, permuted_d, mus, shifts, non_deflated);
    let eigenvalues = &mut z[..];
    for i in 0..n {
        eigenvalues[i] = mus[i] + shifts[i];
    }
    for (i, p) in pr.iter_mut().enumerate() {
        *p = i;
    }
    pr.sort_unstable_by(|&i, &j| eigenvalues[i].total_cmp(&eigenvalues[j]));
    if !applied_householder {
        for p in pl_after.iter_mut() {
            *p = pl_before[*p];
        }
        let buffers = [repaired.rb_mut(), tmp.rb_mut(), rank_one.as_mut(), product.as_mut(), copies.as_mut()];
        merge_product_deflated(u.rb_mut(), buffers, n1, non_deflated, pl_after, pr, permuted_d, permuted_z, mus, shifts);
    } else {
        rank_one_vectors(repaired.rb_mut(), non_deflated, pl_after, pr, permuted_d, permuted_z, mus, shifts);
        let mut idx = 0;
        while idx < n {
            let run_len = run_info[idx];
            if run_len > 1 {
                let h = &mut householder[idx..idx + run_len];
                let tau_inv = 1.0 / h[run_len - 1];
                h[run_len - 1] = 1.0;
                for j in 0..n {
                    let col = repaired.rb_mut().col_mut(j).subrows_mut(idx, run_len);
                    let dot: f64 = h.iter().zip(col.rb().iter()).map(|(a, b)| a * b).sum::<f64>() * tau_inv;
                    for (c, hv) in col.iter_mut().zip(h.iter()) {
                        *c -= dot * hv;
                    }
                }
            }
            idx += run_len;
        }
        for j in 0..n {
            for (i, &p) in pl_before.iter().enumerate() {
                tmp[(p, j)] = repaired[(i, j)];
            }
        }
        let (top, bottom) = tmp.rb().split_at_row(n1);
        let (u0, _, _, u1) = u.rb().split_at(n1, n1);
        let (mut r_top, mut r_bottom) = repaired.rb_mut().split_at_row_mut(n1);
        matmul(r_top.rb_mut(), Accum::Replace, u0, top, 1.0, Par::Seq);
        matmul(r_bottom.rb_mut(), Accum::Replace, u1, bottom, 1.0, Par::Seq);
        u.copy_from(repaired.rb());
    }
    for i in 0..n {
        diag[i] = mus[pr[i]] + shifts[pr[i]];
    }
}

/// Roots of the secular equation for the `non_deflated` poles (as pole + offset); the deflated
/// ones keep their pole.
fn compute_eigenvalues(mus: &mut [f64], shifts: &mut [f64], d: &[f64], z: &[f64], rho: f64, non_deflated: usize) {
    let secular = Secular { d: &d[..non_deflated], z, rho_recip: 1.0 / rho };
    let z_norm2: f64 = z.iter().map(|x| x * x).sum();
    for i in 0..non_deflated {
        let right = if i + 1 == non_deflated { d[i] + rho * z_norm2 } else { d[i + 1] };
        let (shift, mu) = secular.root(i, right);
        shifts[i] = shift;
        mus[i] = mu;
    }
    for i in non_deflated..d.len() {
        shifts[i] = 0.0;
        mus[i] = d[i];
    }
}

/// Gu & Eisenstat: the z for which the computed roots are exact, |zᵢ| = sqrt(Πₖ (λₖ − dᵢ) /
/// Πₖ≠ᵢ (dₖ − dᵢ)) (keeps the eigenvectors orthogonal).
fn loewner(z: &mut [f64], d: &[f64], mus: &[f64], shifts: &[f64], non_deflated: usize) {
    let (d, mus, shifts) = (&d[..non_deflated], &mus[..non_deflated], &shifts[..non_deflated]);
    for i in 0..non_deflated {
        let di = d[i];
        let below = lane_product(&mus[..i], &shifts[..i], &d[..i], di);
        let above = lane_product(&mus[i + 1..], &shifts[i + 1..], &d[i + 1..], di);
        let root = ((mus[i] + (shifts[i] - di)) * below * above).abs().sqrt();
        z[i] = if z[i] < 0.0 { -root } else { root };
    }
}

/// Πₖ (μₖ + (sₖ − dᵢ)) / (dₖ − dᵢ) in eight lanes (AVX2 where the CPU has it).
fn lane_product(mus: &[f64], shifts: &[f64], d: &[f64], di: f64) -> f64 {
    #[inline(always)]
    fn lanes(mus: &[f64], shifts: &[f64], d: &[f64], di: f64) -> f64 {
        let mut acc = [1.0f64; 8];
        let (mc, sc, dc) = (mus.chunks_exact(8), shifts.chunks_exact(8), d.chunks_exact(8));
        let mut tail = 1.0;
        for ((m, s), dk) in mc.remainder().iter().zip(sc.remainder()).zip(dc.remainder()) {
            tail *= (m + (s - di)) / (dk - di);
        }
        for ((m8, s8), d8) in mc.zip(sc).zip(dc) {
            for l in 0..8 {
                acc[l] *= (m8[l] + (s8[l] - di)) / (d8[l] - di);
            }
        }
        ((acc[0] * acc[4]) * (acc[1] * acc[5])) * ((acc[2] * acc[6]) * (acc[3] * acc[7])) * tail
    }
    scatterlab_core::x86_build!(
        avx2,
        fn lanes_avx2(mus: &[f64], shifts: &[f64], d: &[f64], di: f64) -> f64 {
            lanes(mus, shifts, d, di)
        }
    );
    #[cfg(target_arch = "x86_64")]
    if scatterlab_core::simd::level().avx2() {
        // SAFETY: `simd::level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `lanes_avx2`.
        return unsafe { lanes_avx2(mus, shifts, d, di) };
    }
    lanes(mus, shifts, d, di)
}

/// Column j of the rank-one problem's eigenvector matrix (rows in `pl_after` order): zᵢ / ((dᵢ −
/// sⱼ) − μⱼ), normalised; a deflated column is the unit vector at its pole.
#[allow(clippy::too_many_arguments)]
fn rank_one_vectors(mut repaired: MatMut<'_, f64>, non_deflated: usize, pl_after: &[usize], pr: &[usize], d: &[f64], z: &[f64], mus: &[f64], shifts: &[f64]) {
    for (j, &pj) in pr.iter().enumerate() {
        let mut col = repaired.rb_mut().col_mut(j);
        col.fill(0.0);
        if pj >= non_deflated {
            col[pl_after[pj]] = 1.0;
        } else {
            let (mu, shift) = (mus[pj], shifts[pj]);
            let mut norm2 = 0.0;
            for i in 0..non_deflated {
                let v = z[i] / ((d[i] - shift) - mu);
                col[pl_after[i]] = v;
                norm2 += v * v;
            }
            let inv = 1.0 / norm2.sqrt();
            for i in 0..non_deflated {
                col[pl_after[i]] *= inv;
            }
        }
    }
}

/// out = z / ((d − shift) − μ), normalised (vectorised: contiguous, no gathers).
fn rank_one_column(out: &mut [f64], d: &[f64], z: &[f64], shift: f64, mu: f64) {
    for ((o, dv), zv) in out.iter_mut().zip(d).zip(z) {
        *o = zv / ((dv - shift) - mu);
    }
    let inv = 1.0 / out.iter().map(|v| v * v).sum::<f64>().sqrt();
    for o in out.iter_mut() {
        *o *= inv;
    }
}

/// blockdiag(U₀, U₁)·R without a Householder step: R's deflated columns are unit vectors (copies
/// of a column of U₀ or U₁); the rest are dense only on the non-deflated rows, so the products
/// run on the gathered columns of U₀ and U₁ and those rows of R.
#[allow(clippy::too_many_arguments)]
fn merge_product_deflated(
    mut u: MatMut<'_, f64>,
    buffers: [MatMut<'_, f64>; 5],
    n1: usize,
    non_deflated: usize,
    pl_after: &[usize],
    pr: &[usize],
    d: &[f64],
    z: &[f64],
    mus: &[f64],
    shifts: &[f64],
) {
    let n = u.nrows();
    let [mut r, mut tmp, rank_one, product, copies] = buffers;
    // Non-deflated rows split by half: (index in the rank-one problem, row of blockdiag).
    let top: Vec<usize> = (0..non_deflated).filter(|&i| pl_after[i] < n1).collect();
    let bottom: Vec<usize> = (0..non_deflated).filter(|&i| pl_after[i] >= n1).collect();
    let columns: Vec<usize> = (0..n).filter(|&j| pr[j] < non_deflated).collect();
    let m = columns.len();
    // R on the non-deflated rows (top ones first) × non-deflated columns, normalised.
    let order = || top.iter().chain(bottom.iter());
    let (dg, zg): (Vec<f64>, Vec<f64>) = (order().map(|&i| d[i]).collect(), order().map(|&i| z[i]).collect());
    let mut rr = rank_one.submatrix_mut(0, 0, non_deflated, m);
    for (c, &j) in columns.iter().enumerate() {
        let pj = pr[j];
        let column = rr.rb_mut().col_mut(c).try_as_col_major_mut().map(|c| c.as_slice_mut());
        if let Some(column) = column {
            rank_one_column(column, &dg, &zg, shifts[pj], mus[pj]);
        }
    }
    // Gathered U₀ (n1 × |top|) and U₁ ((n − n1) × |bottom|) columns.
    let mut g0 = r.rb_mut().submatrix_mut(0, 0, n1, top.len());
    for (c, &i) in top.iter().enumerate() {
        g0.rb_mut().col_mut(c).copy_from(u.rb().col(pl_after[i]).subrows(0, n1));
    }
    let mut g1 = tmp.rb_mut().submatrix_mut(0, 0, n - n1, bottom.len());
    for (c, &i) in bottom.iter().enumerate() {
        g1.rb_mut().col_mut(c).copy_from(u.rb().col(pl_after[i]).subrows(n1, n - n1));
    }
    let mut out = product.submatrix_mut(0, 0, n, m);
    matmul(out.rb_mut().subrows_mut(0, n1), Accum::Replace, r.rb().submatrix(0, 0, n1, top.len()), rr.rb().subrows(0, top.len()), 1.0, Par::Seq);
    matmul(out.rb_mut().subrows_mut(n1, n - n1), Accum::Replace, tmp.rb().submatrix(0, 0, n - n1, bottom.len()), rr.rb().subrows(top.len(), bottom.len()), 1.0, Par::Seq);
    // Deflated columns: copies of blockdiag columns (zero in the other half), gathered before
    // `u` is overwritten.
    let mut copies = copies.submatrix_mut(0, 0, n, n - m);
    let mut c = 0;
    for &pj in pr.iter() {
        if pj >= non_deflated {
            let source = pl_after[pj];
            let (start, len) = if source < n1 { (0, n1) } else { (n1, n - n1) };
            let mut column = copies.rb_mut().col_mut(c);
            column.fill(0.0);
            column.subrows_mut(start, len).copy_from(u.rb().col(source).subrows(start, len));
            c += 1;
        }
    }
    let (mut kept, mut copied) = (0, 0);
    for (j, &pj) in pr.iter().enumerate() {
        if pj < non_deflated {
            u.rb_mut().col_mut(j).copy_from(out.rb().col(kept));
            kept += 1;
        } else {
            u.rb_mut().col_mut(j).copy_from(copies.rb().col(copied));
            copied += 1;
        }
    }
}

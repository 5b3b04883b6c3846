//! Nelder–Mead for the sliced fit ([`super::stepped`]): a copy of the STEM crate's private
//! `ssb::simplex::nelder_mead` (standard coefficients: reflection 1, expansion 2, contraction ½,
//! shrink ½), kept step for step the same so that a replayed fit takes the library's path; the
//! native test `stepped_fit_equals_the_library` fails if the two drift apart.

/// Minimises `f` from `start` with initial steps `step` per coordinate until the simplex spans
/// less than `xtol` (in units of `step`) in every coordinate or `max_evals` evaluations are
/// spent. Returns the best point and its value. An error from `f` stops at once.
pub(crate) fn nelder_mead<E>(start: &[f64], step: &[f64], xtol: f64, max_evals: usize, f: &mut dyn FnMut(&[f64]) -> Result<f64, E>) -> Result<(Vec<f64>, f64), E> {
    let d = start.len();
    let mut pts: Vec<Vec<f64>> = vec![start.to_vec()];
    for i in 0..d {
        let mut p = start.to_vec();
        p[i] += step[i];
        pts.push(p);
    }
    let mut vals = Vec::with_capacity(d + 1);
    let mut evals = 0;
    for p in &pts {
        vals.push(f(p)?);
        evals += 1;
    }
    // A NaN loss sorts last: it never becomes the best point.
    let key = |v: f64| if v.is_nan() { f64::INFINITY } else { v };
    loop {
        let mut order: Vec<usize> = (0..=d).collect();
        order.sort_by(|&a, &b| key(vals[a]).total_cmp(&key(vals[b])));
        pts = order.iter().map(|&i| pts[i].clone()).collect();
        vals = order.iter().map(|&i| vals[i]).collect();
        let spread = (0..d).all(|j| {
            let (lo, hi) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p[j]), hi.max(p[j])));
            hi - lo <= xtol * step[j].abs()
        });
        if spread || evals >= max_evals {
            return Ok((pts[0].clone(), vals[0]));
        }
        let centroid: Vec<f64> = (0..d).map(|j| pts[..d].iter().map(|p| p[j]).sum::<f64>() / d as f64).collect();
        let along = |t: f64| -> Vec<f64> { (0..d).map(|j| centroid[j] + t * (pts[d][j] - centroid[j])).collect() };
        let xr = along(-1.0);
        let fr = f(&xr)?;
        evals += 1;
        if key(fr) < key(vals[0]) {
            let xe = along(-2.0);
            let fe = f(&xe)?;
            evals += 1;
            (pts[d], vals[d]) = if key(fe) < key(fr) { (xe, fe) } else { (xr, fr) };
        } else if key(fr) < key(vals[d - 1]) {
            (pts[d], vals[d]) = (xr, fr);
        } else {
            // Outside contraction when the reflection beat the worst, inside otherwise.
            let t = if key(fr) < key(vals[d]) { -0.5 } else { 0.5 };
            let xc = along(t);
            let fc = f(&xc)?;
            evals += 1;
            if key(fc) < key(vals[d]).min(key(fr)) {
                (pts[d], vals[d]) = (xc, fc);
            } else {
                for i in 1..=d {
                    pts[i] = (0..d).map(|j| pts[0][j] + 0.5 * (pts[i][j] - pts[0][j])).collect();
                    vals[i] = f(&pts[i])?;
                    evals += 1;
                }
            }
        }
    }
}


//! Nelder–Mead (standard coefficients: reflection 1, expansion 2, contraction ½, shrink ½) for
//! the fit's local polish (public: the app's sliced fit replays exactly this search):
//! derivative-free, because the loss is a sum of angles through FFTs and
//! its gradient would cost as much as several evaluations.

/// Minimises `f` from `start` with initial steps `step` per coordinate until the simplex spans
/// less than `xtol` (in units of `step`) in every coordinate or `max_evals` evaluations are
/// spent. Returns the best point and its value. An error from `f` stops at once.
pub fn nelder_mead<E>(start: &[f64], step: &[f64], xtol: f64, max_evals: usize, f: &mut dyn FnMut(&[f64]) -> Result<f64, E>) -> Result<(Vec<f64>, f64), E> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_quadratic_valley() {
        let mut f = |x: &[f64]| -> Result<f64, ()> { Ok((x[0] - 3.0).powi(2) + 10.0 * (x[1] + 1.0).powi(2) + (x[2] - 0.5).powi(2) + 0.5 * (x[0] - 3.0) * (x[2] - 0.5)) };
        let (x, v) = nelder_mead(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0], 1e-6, 2000, &mut f).unwrap();
        assert!((x[0] - 3.0).abs() < 1e-5 && (x[1] + 1.0).abs() < 1e-5 && (x[2] - 0.5).abs() < 1e-5, "{x:?} {v}");
        let mut g = |_: &[f64]| -> Result<f64, &str> { Err("stop") };
        assert_eq!(nelder_mead(&[0.0], &[1.0], 1e-6, 10, &mut g).unwrap_err(), "stop");
    }
}

//! The Fréchet derivative of the matrix exponential by the block identity
//! exp([[X, Y], [0, X]]) = [[e^X, L(X, Y)], [0, e^X]] (Higham, *Functions of Matrices*, §3.2):
//! one Padé expm of a 2N×2N matrix. Exact to the expm's backward error for any X, so it is the
//! test oracle of the eigen (divided-difference) and Taylor derivatives.

use faer::Mat;
use num_complex::Complex64;

use crate::solve::expm;
use crate::BlochError;

/// (e^X, L(X, Y)) for square X and Y of equal size; `object` names the matrix in errors.
pub fn expm_frechet_block(x: &Mat<Complex64>, y: &Mat<Complex64>, object: &str) -> Result<(Mat<Complex64>, Mat<Complex64>), BlochError> {
    let n = x.nrows();
    if x.ncols() != n || y.nrows() != n || y.ncols() != n {
        return Err(BlochError::Numerical {
            object: object.to_owned(),
            message: format!("Fréchet block needs two square matrices of one size ({}×{} and {}×{})", n, x.ncols(), y.nrows(), y.ncols()),
        });
    }
    let block = Mat::from_fn(2 * n, 2 * n, |i, j| match (i < n, j < n) {
        (true, true) => x[(i, j)],
        (true, false) => y[(i, j - n)],
        (false, false) => x[(i - n, j - n)],
        (false, true) => Complex64::new(0.0, 0.0),
    });
    let e = expm(&block, object)?;
    Ok((Mat::from_fn(n, n, |i, j| e[(i, j)]), Mat::from_fn(n, n, |i, j| e[(i, j + n)])))
}

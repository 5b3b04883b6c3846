//! 2×2 matrices over any [`Cx`] scalar: the whole 4×4 method is written in 2×2 blocks
//! (down/up pairs of modes, (H_y, E_y) and (E_x, H_x) field pairs).

use crate::dual::Cx;

/// A 2×2 matrix, `m[row][col]`.
pub(crate) type M2<T> = [[T; 2]; 2];

/// The zero matrix.
#[inline]
pub(crate) fn zero<T: Cx>() -> M2<T> {
    let z = T::real(0.0);
    [[z, z], [z, z]]
}

/// diag(a, b).
#[inline]
pub(crate) fn diag<T: Cx>(a: T, b: T) -> M2<T> {
    let z = T::real(0.0);
    [[a, z], [z, b]]
}

/// a + b.
#[inline]
pub(crate) fn add<T: Cx>(a: &M2<T>, b: &M2<T>) -> M2<T> {
    [[a[0][0] + b[0][0], a[0][1] + b[0][1]], [a[1][0] + b[1][0], a[1][1] + b[1][1]]]
}

/// a − b.
#[inline]
pub(crate) fn sub<T: Cx>(a: &M2<T>, b: &M2<T>) -> M2<T> {
    [[a[0][0] - b[0][0], a[0][1] - b[0][1]], [a[1][0] - b[1][0], a[1][1] - b[1][1]]]
}

/// a · b.
#[inline]
pub(crate) fn mul<T: Cx>(a: &M2<T>, b: &M2<T>) -> M2<T> {
    [[a[0][0] * b[0][0] + a[0][1] * b[1][0], a[0][0] * b[0][1] + a[0][1] * b[1][1]], [a[1][0] * b[0][0] + a[1][1] * b[1][0], a[1][0] * b[0][1] + a[1][1] * b[1][1]]]
}

/// s · a for a scalar s.
#[inline]
pub(crate) fn scale<T: Cx>(a: &M2<T>, s: T) -> M2<T> {
    [[a[0][0] * s, a[0][1] * s], [a[1][0] * s, a[1][1] * s]]
}

/// a + s·I.
#[inline]
pub(crate) fn add_identity<T: Cx>(a: &M2<T>, s: T) -> M2<T> {
    [[a[0][0] + s, a[0][1]], [a[1][0], a[1][1] + s]]
}

/// det a.
#[inline]
pub(crate) fn det<T: Cx>(a: &M2<T>) -> T {
    a[0][0] * a[1][1] - a[0][1] * a[1][0]
}

/// The adjugate (a⁻¹ · det a).
#[inline]
pub(crate) fn adj<T: Cx>(a: &M2<T>) -> M2<T> {
    [[a[1][1], -a[0][1]], [-a[1][0], a[0][0]]]
}

/// a⁻¹. A singular matrix gives non-finite entries, which the caller reports (no panic).
#[inline]
pub(crate) fn inv<T: Cx>(a: &M2<T>) -> M2<T> {
    scale(&adj(a), det(a).recip())
}

/// |re| + |im|: a magnitude within √2 of |z| without hypot (comparisons and scales only).
#[inline]
pub(crate) fn mag(z: num_complex::Complex64) -> f64 {
    z.re.abs() + z.im.abs()
}

/// Values of the entries (derivatives dropped).
#[cfg(test)]
pub(crate) fn values<T: Cx>(a: &M2<T>) -> M2<num_complex::Complex64> {
    [[a[0][0].value(), a[0][1].value()], [a[1][0].value(), a[1][1].value()]]
}

/// The largest |entry| of the value.
#[cfg(test)]
pub(crate) fn max_abs<T: Cx>(a: &M2<T>) -> f64 {
    let v = values(a);
    v[0][0].norm().max(v[0][1].norm()).max(v[1][0].norm()).max(v[1][1].norm())
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64 as C64;

    #[test]
    fn inverse_and_products() {
        let a: M2<C64> = [[C64::new(1.0, 2.0), C64::new(-0.5, 0.1)], [C64::new(0.3, -1.0), C64::new(2.0, 0.5)]];
        let p = mul(&a, &inv(&a));
        let e = sub(&p, &diag(C64::new(1.0, 0.0), C64::new(1.0, 0.0)));
        assert!(max_abs(&e) < 1e-15);
        assert!(max_abs(&sub(&add(&a, &a), &scale(&a, C64::new(2.0, 0.0)))) == 0.0);
        assert!((det(&add_identity(&zero(), C64::new(3.0, 0.0))) - C64::new(9.0, 0.0)).norm() == 0.0);
    }
}

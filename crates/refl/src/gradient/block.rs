//! Blocks of parameter slots: seed the inputs of one block as [`Jet`] variables, form the
//! q-independent terms once, then run the recursion point by point (no allocation per q).

use num_complex::Complex64 as C64;

use super::recursion::{point, prepare, InterfaceTerms, LayerInput, LayerTerms};
use super::{Direction, Gradient, LayerParam, BLOCK};
use crate::dual::{Cx, Jet};
use crate::CurveRequest;

/// The field of a layer input that `param` names.
fn field_mut<T>(input: &mut LayerInput<T>, param: LayerParam) -> &mut T {
    match param {
        LayerParam::Thickness => &mut input.thickness,
        LayerParam::Roughness => &mut input.roughness,
        LayerParam::DeltaO => &mut input.delta_o,
        LayerParam::BetaO => &mut input.beta_o,
        LayerParam::DeltaE => &mut input.delta_e,
        LayerParam::BetaE => &mut input.beta_e,
    }
}

/// The stack's layers as constant `T` inputs.
fn constant_inputs<T: Cx>(request: &CurveRequest<'_>) -> Vec<LayerInput<T>> {
    request
        .stack
        .layers
        .iter()
        .map(|l| LayerInput {
            thickness: T::real(l.thickness),
            roughness: T::real(l.roughness),
            delta_o: T::real(l.delta_o),
            beta_o: T::real(l.beta_o),
            delta_e: T::real(l.delta_e),
            beta_e: T::real(l.beta_e),
        })
        .collect()
}

/// R and every derivative row for an already validated request and directions.
pub(crate) fn evaluate(request: &CurveRequest<'_>, directions: &[Direction]) -> Gradient {
    let n_q = request.q.len();
    let mut out = Gradient {
        r_s: vec![0.0; n_q],
        r_p: vec![0.0; n_q],
        d_r_s: vec![vec![0.0; n_q]; directions.len()],
        d_r_p: vec![vec![0.0; n_q]; directions.len()],
    };
    // R from the plain complex recursion: the same steps as the jets' value part, but with the
    // engine's complex division, so R does not depend on how the parameters were blocked.
    let inputs = constant_inputs::<C64>(request);
    let (mut layers, mut interfaces) = (Vec::new(), Vec::new());
    prepare(&inputs, C64::real(request.energy_ev), &mut layers, &mut interfaces);
    for (i, &q) in request.q.iter().enumerate() {
        let (s, p) = point(&layers, &interfaces, C64::real(q));
        (out.r_s[i], out.r_p[i]) = (s.re, p.re);
    }
    for (b, chunk) in directions.chunks(BLOCK).enumerate() {
        let start = b * BLOCK;
        let (rows_s, rows_p) = (&mut out.d_r_s[start..start + chunk.len()], &mut out.d_r_p[start..start + chunk.len()]);
        // A short last block runs on a narrower jet: the cost per q grows with the slot count.
        match chunk.len() {
            1 => block::<1>(request, chunk, rows_s, rows_p),
            2 => block::<2>(request, chunk, rows_s, rows_p),
            3 | 4 => block::<4>(request, chunk, rows_s, rows_p),
            _ => block::<BLOCK>(request, chunk, rows_s, rows_p),
        }
    }
    out
}

/// One pass over every q with `directions.len() ≤ N` seeded slots: fills their derivative rows.
fn block<const N: usize>(request: &CurveRequest<'_>, directions: &[Direction], rows_s: &mut [Vec<f64>], rows_p: &mut [Vec<f64>]) {
    let one = C64::new(1.0, 0.0);
    let mut inputs = constant_inputs::<Jet<N>>(request);
    let mut energy = Jet::<N>::real(request.energy_ev);
    let mut q_seed = [C64::new(0.0, 0.0); N];
    for (k, direction) in directions.iter().enumerate() {
        match *direction {
            Direction::Layer(layer, param) => field_mut(&mut inputs[layer], param).d[k] = one,
            Direction::Energy => energy.d[k] = one,
            Direction::Q => q_seed[k] = one,
        }
    }
    let (mut layers, mut interfaces): (Vec<LayerTerms<Jet<N>>>, Vec<InterfaceTerms<Jet<N>>>) = (Vec::new(), Vec::new());
    prepare(&inputs, energy, &mut layers, &mut interfaces);
    for (i, &q) in request.q.iter().enumerate() {
        let (s, p) = point(&layers, &interfaces, Jet { v: C64::new(q, 0.0), d: q_seed });
        for k in 0..directions.len() {
            rows_s[k][i] = s.d[k].re;
            rows_p[k][i] = p.d[k].re;
        }
    }
}

//! Blocks of parameter slots: seed the inputs of one block as [`Jet`] variables, form the
//! q-independent terms once, then run the recursion point by point (no allocation per q).

use num_complex::Complex64 as C64;
#[cfg(target_arch = "x86_64")]
use scatterlab_core::simd;
use scatterlab_core::x86_build;

use super::recursion::{climb, prepare, substrate, Below, InterfaceTerms, LayerInput, LayerTerms};
use super::soa::SoaJet as Jet;
use super::{Direction, Gradient, LayerParam, BLOCK};
use crate::dual::Cx;
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
    let n = request.stack.layers.len();
    // R from the production path itself, so a fitter's residuals and Jacobian come from one R;
    // the jets' value parts equal it to rounding (tests/gradient.rs).
    let plain = crate::cpu::reflectivity_unchecked(request);
    let mut out = Gradient { r_s: plain.r_s, r_p: plain.r_p, d_r_s: vec![vec![0.0; n_q]; directions.len()], d_r_p: vec![vec![0.0; n_q]; directions.len()] };
    // Deepest first: a block needs jets only from just below its deepest layer up (energy and q
    // touch every layer), so blocks of shallow layers run most of the stack on plain numbers.
    let depth = |d: &Direction| match *d {
        Direction::Layer(layer, _) => layer,
        Direction::Energy | Direction::Q => n,
    };
    let mut order: Vec<usize> = (0..directions.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(depth(&directions[k])));
    let blocks: Vec<(&[usize], usize)> = order
        .chunks(BLOCK)
        .map(|targets| {
            // Steps b ≥ deepest + 2 involve no seeded parameter (step b uses layers b − 1 and b).
            let jets_from = (depth(&directions[targets[0]]) + 1).min(n - 1);
            (targets, jets_from)
        })
        .collect();
    let below = plain_states(request, &blocks);
    for (targets, jets_from) in blocks {
        let chunk: Vec<Direction> = targets.iter().map(|&k| directions[k]).collect();
        let below = below.iter().find(|(level, _)| *level == jets_from).map(|(_, states)| &states[..]);
        let job = Job { request, directions: &chunk, targets, below, jets_from };
        // A short last block runs on a narrower jet: the cost per q grows with the slot count.
        match chunk.len() {
            1 => block::<1>(&job, &mut out),
            2 => block::<2>(&job, &mut out),
            3 | 4 => block::<4>(&job, &mut out),
            _ => block::<BLOCK>(&job, &mut out),
        }
    }
    out
}

/// For every level a block starts its jets at (below the substrate interface), the plain
/// recursion state there at every q: one plain pass serves all blocks.
fn plain_states(request: &CurveRequest<'_>, blocks: &[(&[usize], usize)]) -> Vec<(usize, Vec<Below<C64>>)> {
    let n = request.stack.layers.len();
    let mut levels: Vec<usize> = blocks.iter().map(|b| b.1).filter(|&l| l < n - 1).collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    if levels.is_empty() {
        return Vec::new();
    }
    let inputs = constant_inputs::<C64>(request);
    let (mut layers, mut interfaces) = (Vec::new(), Vec::new());
    prepare(&inputs, C64::real(request.energy_ev), &mut layers, &mut interfaces);
    let mut states: Vec<(usize, Vec<Below<C64>>)> = levels.iter().map(|&l| (l, Vec::with_capacity(request.q.len()))).collect();
    for &q in request.q {
        let q2 = C64::new(q, 0.0) * 0.25 * C64::new(q, 0.0);
        let (mut state, mut next) = (substrate(&layers, q2), n - 1);
        for (level, column) in states.iter_mut() {
            state = climb(&layers, &interfaces, q2, state, *level + 1, next);
            next = *level;
            column.push(state);
        }
    }
    states
}

/// One block's work: its directions, the output rows they fill, the first interface (from the
/// bottom) that needs jets and, when that is above the substrate, the plain state below it per q.
struct Job<'a> {
    request: &'a CurveRequest<'a>,
    directions: &'a [Direction],
    targets: &'a [usize],
    below: Option<&'a [Below<C64>]>,
    jets_from: usize,
}

/// One pass over every q with `directions.len() ≤ N` seeded slots: fills their derivative rows.
fn block<const N: usize>(job: &Job<'_>, out: &mut Gradient) {
    let mut inputs = constant_inputs::<Jet<N>>(job.request);
    let mut energy = Jet::<N>::real(job.request.energy_ev);
    let mut q_seed = [0.0; N];
    for (k, direction) in job.directions.iter().enumerate() {
        match *direction {
            Direction::Layer(layer, param) => field_mut(&mut inputs[layer], param).re[k] = 1.0,
            Direction::Energy => energy.re[k] = 1.0,
            Direction::Q => q_seed[k] = 1.0,
        }
    }
    let (mut layers, mut interfaces): (Vec<LayerTerms<Jet<N>>>, Vec<InterfaceTerms<Jet<N>>>) = (Vec::new(), Vec::new());
    prepare(&inputs, energy, &mut layers, &mut interfaces);
    let pass = Pass { job, layers: &layers, interfaces: &interfaces, q_seed };
    #[cfg(target_arch = "x86_64")]
    match simd::level() {
        // SAFETY: `level()` found every feature `x86_build!(avx512, …)` enables on `rows_avx512`.
        simd::Level::Avx512 => return unsafe { rows_avx512(&pass, out) },
        // SAFETY: `level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `rows_avx2`.
        simd::Level::Avx2 => return unsafe { rows_avx2(&pass, out) },
        _ => {}
    }
    rows(&pass, out);
}

/// A block ready to run: its job and its seeded q-independent terms.
struct Pass<'a, const N: usize> {
    job: &'a Job<'a>,
    layers: &'a [LayerTerms<Jet<N>>],
    interfaces: &'a [InterfaceTerms<Jet<N>>],
    q_seed: [f64; N],
}

/// The recursion at every q with jets from `jets_from` up; writes the rows.
#[inline(always)]
fn rows<const N: usize>(pass: &Pass<'_, N>, out: &mut Gradient) {
    let job = pass.job;
    for (i, &q) in job.request.q.iter().enumerate() {
        let q_jet = Jet { v: C64::new(q, 0.0), re: pass.q_seed, im: [0.0; N] };
        let q2 = q_jet * 0.25 * q_jet;
        let below = match job.below {
            Some(states) => states[i].lift(),
            None => substrate(pass.layers, q2),
        };
        let top = climb(pass.layers, pass.interfaces, q2, below, 1, job.jets_from);
        let (s, p) = (top.xs.norm_sqr(), top.xp.norm_sqr());
        for (k, &row) in job.targets.iter().enumerate() {
            out.d_r_s[row][i] = s.re[k];
            out.d_r_p[row][i] = p.re[k];
        }
    }
}

// The same loop compiled for wider vectors, chosen at run time as `cpu::lanes` does: the slot
// arrays of a jet are where the vector units help.
x86_build!(
    avx2,
    unsafe fn rows_avx2<const N: usize>(pass: &Pass<'_, N>, out: &mut Gradient) {
        rows(pass, out);
    }
);

x86_build!(
    avx512,
    unsafe fn rows_avx512<const N: usize>(pass: &Pass<'_, N>, out: &mut Gradient) {
        rows(pass, out);
    }
);

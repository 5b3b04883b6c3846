//! The df64 GPU twin of the general 4×4 method: `shaders/refl/general_df64.wgsl` (with the
//! double-float library `shaders/refl/df64.wgsl`), one dispatch per batch of curves.
//!
//! Why df64: the 4×4 method subtracts nearly equal mode quantities (Sylvester right sides, pair
//! factors of the quartic), which f32 cannot carry to the 1e-6 agreement the fits need; WebGPU has
//! no f64. The host computes every q-independent term in f64 exactly as the CPU kernel does
//! ([`super::terms`]) and uploads each number as an (hi, lo) pair of f32; the kernel does the
//! q-dependent work (modes, Newton on the quartic's factors, Sylvester interfaces, roughness,
//! propagation) in df64 and returns R as (hi, lo) pairs. A batch is any set of curves (stacks may
//! differ): datasets × population × q in one dispatch, split only where the adapter's buffer
//! limits require.

use num_complex::Complex64 as C64;
use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use super::terms::{InterfaceTerms, LayerTerms};
use super::{validate_beam, GeneralReflectivity, GeneralStack};
use crate::dual::Cx;
use crate::ReflError;

const SHADER: &str = "refl/general_df64.wgsl";
const WORKGROUP_SIZE: u32 = 64;
/// vec4 slots per layer record: geometry, flags, 27 terms (see the kernel's `Layer`).
const LAYER_VEC4: usize = 29;
/// vec4 slots per interface record.
const IFACE_VEC4: usize = 10;
/// vec4 slots per point record and per output record.
const POINT_VEC4: usize = 2;
const OUT_VEC4: usize = 2;

/// One curve of the general method: a tensor stack at one photon energy (eV) over q (Å⁻¹) — the
/// arguments of [`super::general_reflectivity`] as one value, so batches can hold many.
#[derive(Clone, Copy, Debug)]
pub struct GeneralRequest<'a> {
    /// The layers, fronting first.
    pub stack: &'a GeneralStack,
    /// Photon energy, eV.
    pub energy_ev: f64,
    /// Momentum transfer, Å⁻¹.
    pub q: &'a [f64],
}

/// A compiled 4×4 df64 pipeline on one device.
#[derive(Debug)]
pub struct GeneralGpu {
    ctx: GpuContext,
    kernel: Kernel,
}

/// (hi, lo) of an f64: hi the nearest f32, lo the nearest f32 to the rest (~48 bits in all).
fn split(x: f64) -> [f32; 2] {
    let hi = x as f32;
    let lo = if hi.is_finite() { (x - f64::from(hi)) as f32 } else { 0.0 };
    [hi, lo]
}

fn complex(z: C64) -> [f32; 4] {
    let (re, im) = (split(z.re), split(z.im));
    [re[0], re[1], im[0], im[1]]
}

fn join(hi: f32, lo: f32) -> f64 {
    f64::from(hi) + f64::from(lo)
}

/// The kernel's tables for a run of requests.
#[derive(Default)]
struct Tables {
    stacks: Vec<[u32; 2]>,
    layers: Vec<[f32; 4]>,
    ifaces: Vec<[f32; 4]>,
    points: Vec<[f32; 4]>,
}

impl Tables {
    fn push(&mut self, index: u32, request: &GeneralRequest<'_>) {
        let k0 = scatterlab_core::units::photon_k0(request.energy_ev);
        let chi = request.stack.chi_layers();
        let terms: Vec<LayerTerms<C64>> = chi.iter().map(LayerTerms::new).collect();
        self.stacks.push([(self.layers.len() / LAYER_VEC4) as u32, chi.len() as u32]);
        for (j, t) in terms.iter().enumerate() {
            // The same products as the CPU kernel: thickness · k0 and σ² · k0 · k0.
            let (k0d, s2) = ((t.thickness * k0).re, (t.sigma2 * k0 * k0).re);
            let (a, b) = (split(k0d), split(s2));
            self.layers.push([a[0], a[1], b[0], b[1]]);
            self.layers.push([f32::from_bits(u32::from(t.decoupled)), f32::from_bits(u32::from(t.rough)), 0.0, 0.0]);
            let scalars =
                [t.chi_yy, t.chi_zz, t.inv_ezz, t.gamma, t.alpha, t.beta, t.eta, t.kappa_x, t.kappa_y, t.mu, t.mu_t, t.exx, t.s_xz, t.p_yz, t.p_xz, t.p_xy, t.c1_term, t.c0_term];
            self.layers.extend(scalars.iter().map(|&z| complex(z)));
            self.layers.extend(t.chi_values.iter().flatten().map(|&z| complex(z)));
            let it = if j == 0 { None } else { Some(InterfaceTerms::new(&chi[j - 1], &terms[j - 1], &chi[j], t)) };
            match it {
                None => self.ifaces.extend([[0.0; 4]; IFACE_VEC4]),
                Some(d) => {
                    self.ifaces.extend([d.d_inv_ezz, d.d_gamma, d.d_alpha, d.d_beta, d.d_eta, d.d_kappa_x, d.d_kappa_y, d.d_mu, d.d_mu_t, d.d_chi_yy].iter().map(|&z| complex(z)))
                }
            }
        }
        // The per-q scalars exactly as `GeneralKernel::point` forms them (imaginary parts are 0).
        let inv_k0 = C64::new(k0, 0.0).recip();
        for &q in request.q {
            let qh = inv_k0 * (0.5 * q);
            let zeta2 = (C64::new(1.0, 0.0) - qh) * (qh + 1.0);
            let zeta = zeta2.sqrt_decaying();
            let (z, z2, h2) = (split(zeta.re), split(zeta2.re), split((qh * qh).re));
            self.points.push([f32::from_bits(index), 0.0, z[0], z[1]]);
            self.points.push([z2[0], z2[1], h2[0], h2[1]]);
        }
    }

    fn n_points(&self) -> usize {
        self.points.len() / POINT_VEC4
    }
}

impl GeneralGpu {
    /// Compiles the kernel on `ctx`'s device (the df64 library prepended).
    pub async fn new(ctx: &GpuContext) -> Result<Self, ReflError> {
        let kernel = Kernel::new(ctx, SHADER, "main").await?;
        Ok(Self { ctx: ctx.clone(), kernel })
    }

    /// The GPU context this pipeline runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// R_ss, R_pp, R_sp, R_ps of every request, as [`super::general_reflectivity`] gives them on
    /// the CPU. All requests are validated first (errors name `curve k`); the batch runs in as
    /// few dispatches as the adapter's storage-buffer limit allows (one, unless it is huge); a
    /// non-finite R is an error naming the curve and q point.
    pub async fn compute(&self, requests: &[GeneralRequest<'_>]) -> Result<Vec<GeneralReflectivity>, ReflError> {
        for (i, r) in requests.iter().enumerate() {
            r.stack.validate().map_err(|e| e.in_curve(i))?;
            validate_beam(r.energy_ev, r.q).map_err(|e| e.in_curve(i))?;
        }
        let limit = self.ctx.limits.max_storage_buffer_binding_size.min(self.ctx.limits.max_buffer_size) as usize;
        let mut results = Vec::with_capacity(requests.len());
        let mut start = 0;
        while start < requests.len() {
            // Greedy chunk: add curves while every table stays within the limit.
            let mut tables = Tables::default();
            let mut end = start;
            while end < requests.len() {
                let r = &requests[end];
                let layers = r.stack.layers.len();
                let grow = |cur: usize, add: usize| (cur + add) * 16 <= limit;
                let fits = grow(tables.layers.len(), layers * LAYER_VEC4)
                    && grow(tables.ifaces.len(), layers * IFACE_VEC4)
                    && grow(tables.points.len(), r.q.len() * POINT_VEC4)
                    && grow(tables.n_points() * OUT_VEC4, r.q.len() * OUT_VEC4);
                if !fits && end > start {
                    break;
                }
                tables.push((end - start) as u32, r);
                end += 1;
            }
            let flat = self.dispatch(&tables).await.map_err(|e| if end - start == 1 { e.in_curve(start) } else { e })?;
            let mut offset = 0;
            for (i, r) in requests[start..end].iter().enumerate() {
                let n = r.q.len();
                let mut out = GeneralReflectivity { r_ss: vec![0.0; n], r_pp: vec![0.0; n], r_sp: vec![0.0; n], r_ps: vec![0.0; n] };
                for k in 0..n {
                    let (a, b) = (flat[(offset + k) * OUT_VEC4], flat[(offset + k) * OUT_VEC4 + 1]);
                    out.r_ss[k] = join(a[0], a[1]);
                    out.r_sp[k] = join(a[2], a[3]);
                    out.r_ps[k] = join(b[0], b[1]);
                    out.r_pp[k] = join(b[2], b[3]);
                }
                offset += n;
                out.check_finite(r.q).map_err(|e| e.in_curve(start + i))?;
                results.push(out);
            }
            start = end;
        }
        Ok(results)
    }

    /// One dispatch over the tables; the output as vec4 records.
    async fn dispatch(&self, t: &Tables) -> Result<Vec<[f32; 4]>, ReflError> {
        let n_points = t.n_points();
        if n_points == 0 {
            return Ok(Vec::new());
        }
        let ctx = &self.ctx;
        let out_len = n_points * OUT_VEC4;
        let out_bytes = (out_len * 16) as u64;
        for (what, bytes) in [
            ("4×4 stack table", t.stacks.len() * 8),
            ("4×4 layer table", t.layers.len() * 16),
            ("4×4 interface table", t.ifaces.len() * 16),
            ("4×4 point table", t.points.len() * 16),
        ] {
            ctx.check_storage_size(what, bytes as u64)?;
        }
        ctx.check_storage_size("4×4 reflectivity output", out_bytes)?;
        // n_points, the opaque 1.0 of the df64 library, and the loop counts 2 and 4 (opaque to the
        // shader compiler, so it does not unroll and duplicate the large loop bodies).
        let params: [u32; 4] = [n_points as u32, 1.0f32.to_bits(), 2, 4];
        let params_buf = ctx.uniform_from("4x4 params", &params);
        let stacks_buf = ctx.storage_from("4x4 stacks", &t.stacks);
        let [layers_buf, ifaces_buf, points_buf] =
            [("4x4 layers", &t.layers), ("4x4 interfaces", &t.ifaces), ("4x4 points", &t.points)].map(|(label, v)| ctx.storage_from(label, v));
        let out_buf = ctx.storage("4x4 out", out_bytes, wgpu::BufferUsages::COPY_SRC);
        let bind_group = self.kernel.bind(ctx, &[&params_buf, &stacks_buf, &layers_buf, &ifaces_buf, &points_buf, &out_buf]);
        let mut encoder = ctx.encoder("4x4");
        self.kernel.dispatch(&mut encoder, &bind_group, scatterlab_gpu::workgroups(n_points, WORKGROUP_SIZE))?;
        Ok(ctx.submit_and_read(encoder, "refl/general_df64.wgsl dispatch", &out_buf, out_len).await?)
    }
}

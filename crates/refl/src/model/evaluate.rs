//! Building stacks from parameter values and evaluating a model, one population in one engine call.

use super::compile::{principal_constants, CompiledDataset};
use super::file::Polarization;
use super::Model;
use crate::general::{general_reflectivity, GeneralReflectivity, GeneralRequest, GeneralStack, TensorLayer};
use crate::resolution::{Resolution, SmearedRequest};
use crate::{compute_smeared, limits, CurveRequest, Engine, Layer, ReflError, Stack};

/// The stack a model gives for one dataset: uniaxial-z (the recursion) or general (4×4); both run on the CPU or the GPU.
#[derive(Clone, Debug, PartialEq)]
pub enum BuiltStack {
    /// Every layer uniaxial with its optic axis along z.
    Uniaxial(Stack),
    /// At least one tilted or biaxial layer.
    General(GeneralStack),
}

/// Photon energy, shifted q grid and resolution of a dataset at given parameter values.
pub(crate) struct Probe {
    pub energy_ev: f64,
    pub q: Vec<f64>,
    pub resolution: Resolution,
    pub smearing: crate::resolution::Smearing,
}

impl Model {
    /// The probe (energy, q, resolution) of dataset `index` at `values`.
    pub(crate) fn probe(&self, d: &CompiledDataset, values: &[f64]) -> Probe {
        let dq = d.q_offset.get(values);
        Probe { energy_ev: d.energy_ev + d.energy_offset.get(values), q: d.q.iter().map(|q| q + dq).collect(), resolution: d.resolution.resolution(values), smearing: d.smearing }
    }

    /// The layer stack of dataset `index` at the full parameter vector `values`.
    pub fn stack(&self, index: usize, values: &[f64]) -> Result<BuiltStack, ReflError> {
        let d =
            self.compiled.datasets.get(index).ok_or_else(|| ReflError::input(format!("dataset {index}"), format!("the model has {} datasets", self.compiled.datasets.len())))?;
        self.check_values(values)?;
        let object = |what: &str| format!("dataset {index} '{}' {what}", d.name);
        limits::check_range(|| object("scale"), d.scale.get(values), 0.0, limits::MAX_SCALE, "")?;
        let max_bg = limits::MAX_ABS_BACKGROUND;
        limits::check_range(|| object("background"), d.background.get(values), -max_bg, max_bg, "")?;
        let energy = d.energy_ev + d.energy_offset.get(values);
        let mut uniaxial = Vec::with_capacity(self.compiled.layers.len());
        let mut general = Vec::with_capacity(self.compiled.layers.len());
        for (j, l) in self.compiled.layers.iter().enumerate() {
            let object = || format!("layer {j} '{}'", l.name);
            let (delta, beta) = principal_constants(&self.compiled.optics[l.optics], d.energy_ev, energy, values, &object)?;
            let density_scale = l.density_scale.get(values);
            let s = limits::check_range(|| format!("{} density_scale", object()), density_scale, 0.0, limits::MAX_DENSITY_SCALE, "")?;
            let (delta, beta) = (delta.map(|x| x * s), beta.map(|x| x * s));
            let (thickness, roughness) = (l.thickness.get(values), l.roughness.get(values));
            let euler_deg = l.euler_deg.map(|e| e.map(|s| s.get(values))).unwrap_or([0.0; 3]);
            general.push(TensorLayer { thickness, roughness, delta, beta, euler_deg });
            uniaxial.push(Layer { thickness, roughness, delta_o: delta[0], beta_o: beta[0], delta_e: delta[2], beta_e: beta[2] });
        }
        let built = if self.general {
            BuiltStack::General(GeneralStack { layers: general })
        } else {
            let stack = Stack { layers: uniaxial };
            stack.validate().map_err(|e| in_dataset(e, index, &d.name))?;
            BuiltStack::Uniaxial(stack)
        };
        Ok(built)
    }

    /// Model curves for every dataset at each parameter vector of a population: `[member][dataset][q]`.
    /// Uniaxial models go to the engine in one call (one GPU dispatch for the whole population ×
    /// datasets × q); general (4×4) models run per curve on the CPU (f64) or, on a GPU engine, as
    /// one df64 dispatch for the whole population × datasets × quadrature nodes.
    pub async fn evaluate(&self, engine: Engine<'_>, population: &[&[f64]]) -> Result<Vec<Vec<Vec<f64>>>, ReflError> {
        let n_d = self.compiled.datasets.len();
        let raw: Vec<Vec<f64>> = if self.general {
            if let Engine::Gpu(pipeline) | Engine::GpuDf64(pipeline) = engine {
                return self.finish(population, self.general_gpu(pipeline, population).await?);
            }
            let mut raw = Vec::with_capacity(population.len() * n_d);
            for values in population {
                for (i, d) in self.compiled.datasets.iter().enumerate() {
                    let BuiltStack::General(g) = self.stack(i, values)? else {
                        return Err(ReflError::input("model", "mixed stack kinds"));
                    };
                    raw.push(self.general_curve(&g, &self.probe(d, values), d.polarization)?);
                }
            }
            raw
        } else {
            // Datasets that differ only in polarisation share one curve (the engine gives R_s and R_p together).
            let unique: Vec<usize> = (0..n_d).filter(|&i| self.shared_curve[i] == i).collect();
            let mut stacks = Vec::with_capacity(population.len() * unique.len());
            let mut probes = Vec::with_capacity(population.len() * unique.len());
            for values in population {
                for &i in &unique {
                    let BuiltStack::Uniaxial(stack) = self.stack(i, values)? else {
                        return Err(ReflError::input("model", "mixed stack kinds"));
                    };
                    stacks.push(stack);
                    probes.push(self.probe(&self.compiled.datasets[i], values));
                }
            }
            let requests: Vec<SmearedRequest<'_>> = stacks
                .iter()
                .zip(&probes)
                .map(|(s, p)| SmearedRequest { curve: CurveRequest { stack: s, energy_ev: p.energy_ev, q: &p.q }, resolution: &p.resolution, smearing: p.smearing })
                .collect();
            let results = compute_smeared(engine, &requests).await.map_err(|e| self.name_curve(e, &unique))?;
            let slot: Vec<usize> = (0..n_d).map(|i| unique.iter().position(|&u| u == self.shared_curve[i]).unwrap_or(0)).collect();
            let mut raw = Vec::with_capacity(population.len() * n_d);
            for m in 0..population.len() {
                for (i, d) in self.compiled.datasets.iter().enumerate() {
                    let r = &results[m * unique.len() + slot[i]];
                    raw.push(match d.polarization {
                        Polarization::S | Polarization::Ss => r.r_s.clone(),
                        Polarization::P | Polarization::Pp => r.r_p.clone(),
                        Polarization::Sp | Polarization::Ps => vec![0.0; r.r_s.len()],
                    });
                }
            }
            raw
        };
        self.finish(population, raw)
    }

    /// Scale and background applied to raw curves `[member × dataset][q]`, each checked finite.
    fn finish(&self, population: &[&[f64]], raw: Vec<Vec<f64>>) -> Result<Vec<Vec<Vec<f64>>>, ReflError> {
        let n_d = self.compiled.datasets.len();
        let mut out = Vec::with_capacity(population.len());
        for (m, values) in population.iter().enumerate() {
            let mut curves = Vec::with_capacity(n_d);
            for (i, d) in self.compiled.datasets.iter().enumerate() {
                let (scale, bg) = (d.scale.get(values), d.background.get(values));
                let curve: Vec<f64> = raw[m * n_d + i].iter().map(|r| scale * r + bg).collect();
                let member = |e: ReflError| if population.len() > 1 { e.map_object(|o| format!("member {m} {o}")) } else { e };
                check_curve(&curve, &d.q, i, &d.name).map_err(member)?;
                curves.push(curve);
            }
            out.push(curves);
        }
        Ok(out)
    }

    /// One polarisation channel of a general (4×4) stack, smeared on the CPU.
    fn general_curve(&self, stack: &GeneralStack, probe: &Probe, pol: Polarization) -> Result<Vec<f64>, ReflError> {
        let scales = crate::resolution::StackScales::of_general(stack, probe.energy_ev);
        let nodes = crate::resolution::expand_nodes(&probe.q, &probe.resolution, probe.energy_ev, probe.smearing, &scales)?;
        let q_nodes = &nodes.q;
        let g = general_reflectivity(stack, probe.energy_ev, q_nodes)?;
        Ok(nodes.fold(&channel(&g, pol)))
    }

    /// The general (4×4) raw curves `[member × dataset][q]` of a whole population on the GPU: every
    /// member × dataset at its quadrature nodes in one df64 dispatch, then channel and smearing
    /// exactly as [`Self::general_curve`] on the CPU.
    async fn general_gpu(&self, pipeline: &crate::gpu::ParrattGpu, population: &[&[f64]]) -> Result<Vec<Vec<f64>>, ReflError> {
        let n_d = self.compiled.datasets.len();
        let (mut stacks, mut energies, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
        for values in population {
            for (i, d) in self.compiled.datasets.iter().enumerate() {
                let BuiltStack::General(g) = self.stack(i, values)? else {
                    return Err(ReflError::input("model", "mixed stack kinds"));
                };
                let probe = self.probe(d, values);
                let scales = crate::resolution::StackScales::of_general(&g, probe.energy_ev);
                nodes.push(crate::resolution::expand_nodes(&probe.q, &probe.resolution, probe.energy_ev, probe.smearing, &scales)?);
                stacks.push(g);
                energies.push(probe.energy_ev);
            }
        }
        let requests: Vec<GeneralRequest<'_>> = stacks.iter().zip(&energies).zip(&nodes).map(|((stack, &energy_ev), n)| GeneralRequest { stack, energy_ev, q: &n.q }).collect();
        let all: Vec<usize> = (0..n_d).collect();
        let results = pipeline.general().await?.compute(&requests).await.map_err(|e| self.name_curve(e, &all))?;
        Ok(results.iter().zip(&nodes).enumerate().map(|(k, (g, n))| n.fold(&channel(g, self.compiled.datasets[k % n_d.max(1)].polarization))).collect())
    }

    /// Rewrites "curve k" (population member × unique dataset) in an engine error as the dataset's name.
    fn name_curve(&self, e: ReflError, unique: &[usize]) -> ReflError {
        let n_u = unique.len().max(1);
        e.map_object(|object| {
            let renamed = object
                .strip_prefix("curve ")
                .and_then(|rest| rest.split_once(':'))
                .and_then(|(k, tail)| k.parse::<usize>().ok().map(|k| (k, tail.to_string())))
                .and_then(|(k, tail)| unique.get(k % n_u).map(|&i| format!("member {} dataset '{}':{tail}", k / n_u, self.compiled.datasets[i].name)));
            renamed.unwrap_or_else(|| object.to_owned())
        })
    }

    /// Checks a full parameter vector: right length, finite.
    pub(crate) fn check_values(&self, values: &[f64]) -> Result<(), ReflError> {
        if values.len() != self.compiled.names.len() {
            return Err(ReflError::input("parameter vector", format!("has {} values for {} parameters", values.len(), self.compiled.names.len())));
        }
        match values.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(ReflError::input(format!("parameter '{}'", self.compiled.names[i]), format!("must be finite, got {}", values[i]))),
            None => Ok(()),
        }
    }
}

/// The reflectance a dataset's polarisation measures, per node: unpolarised-analyser channels
/// (S, P) add the cross-polarised reflectance into the incident polarisation's channel.
fn channel(g: &GeneralReflectivity, pol: Polarization) -> Vec<f64> {
    (0..g.r_ss.len())
        .map(|i| match pol {
            Polarization::S => g.r_ss[i] + g.r_ps[i],
            Polarization::P => g.r_pp[i] + g.r_sp[i],
            Polarization::Ss => g.r_ss[i],
            Polarization::Pp => g.r_pp[i],
            Polarization::Sp => g.r_sp[i],
            Polarization::Ps => g.r_ps[i],
        })
        .collect()
}

/// Prefixes an error's object with the dataset it came from.
pub(crate) fn in_dataset(e: ReflError, index: usize, name: &str) -> ReflError {
    e.map_object(|object| format!("dataset {index} '{name}': {object}"))
}

/// Checks a finished model curve (scale and background applied): the first non-finite point is an
/// error naming the dataset and the q point.
pub(crate) fn check_curve(curve: &[f64], q: &[f64], index: usize, name: &str) -> Result<(), ReflError> {
    match curve.iter().position(|r| !r.is_finite()) {
        None => Ok(()),
        Some(k) => {
            let at = q.get(k).map_or_else(String::new, |q| format!(" at q = {q} Å⁻¹"));
            Err(ReflError::NonFinite(scatterlab_core::InputError::new(format!("dataset {index} '{name}': q[{k}]"), format!("R = {}{at} is not finite", curve[k]))))
        }
    }
}

//! The two ways a computation runs: the CPU engine inline, the GPU engine as a background job.
//! Both go through [`evaluate`], which smears with the instrument resolution when one is set.

use std::sync::Arc;
use std::time::Duration;

use scatterlab_refl::gpu::ParrattGpu;
use scatterlab_refl::{CurveRequest, Engine, ReflError, Reflectivity, Resolution, SmearedRequest};

use super::{Computed, Outcome, ReflInputs};
use crate::compute_job;

/// Runs the CPU engine inline: its future completes in its first poll.
pub(super) fn run_cpu(inputs: &ReflInputs) -> Outcome {
    let q = inputs.valid_q_grid();
    let start = web_time::Instant::now();
    let curves =
        compute_job::run_if_ready(evaluate(Engine::Cpu, inputs, &q)).ok_or_else(|| "the CPU engine unexpectedly did not finish at once".to_owned())?.map_err(|e| e.to_string())?;
    finish(q, curves, "cpu f64".to_owned(), start.elapsed(), inputs.clone())
}

/// Runs the GPU engine (inside a background job).
pub(super) async fn run_gpu(pipeline: Arc<ParrattGpu>, inputs: ReflInputs) -> Outcome {
    let q = inputs.valid_q_grid();
    let start = web_time::Instant::now();
    let curves = evaluate(Engine::Gpu(&pipeline), &inputs, &q).await.map_err(|e| e.to_string())?;
    let device = format!("gpu f32 {}", pipeline.context().describe());
    finish(q, curves, device, start.elapsed(), inputs)
}

/// One curve on `engine`: `compute` without a resolution, `compute_smeared` with one.
async fn evaluate(engine: Engine<'_>, inputs: &ReflInputs, q: &[f64]) -> Result<Vec<Reflectivity>, ReflError> {
    let curve = CurveRequest { stack: &inputs.stack, energy_ev: inputs.energy_ev, q };
    match inputs.resolution() {
        Resolution::None => scatterlab_refl::compute(engine, &[curve]).await,
        resolution => {
            let request = SmearedRequest { curve, resolution: &resolution, smearing: Default::default() };
            scatterlab_refl::compute_smeared(engine, &[request]).await
        }
    }
}

/// Packs the single curve of a one-request batch.
fn finish(q: Vec<f64>, mut curves: Vec<Reflectivity>, device: String, elapsed: Duration, inputs: ReflInputs) -> Outcome {
    let reflectivity = curves.pop().ok_or_else(|| "the engine returned no curve".to_owned())?;
    Ok(Computed { q, reflectivity, device, elapsed, inputs })
}

//! Bloch-wave electron diffraction in the npm package: `lab.blochSimulate(cifText, options)` (one
//! static zone-axis case, [`simulate`]), `lab.blochSimulateCases(casesJsonText, options)` (the
//! cases of a cases file such as the fixture's `reference.json`, [`cases`]), `lab.blochRocking(
//! cifText, options, onProgress, signal)` (a tilt series of the zone-axis case, one tilt per step,
//! [`rocking`]) and `lab.blochRefine(files, options, onProgress, signal)` (a diffBloch experiment
//! refined one iteration per step, [`refine`]), by the library paths of `scatterlab bloch simulate`
//! and `scatterlab bloch refine`. Simulations run on `options.device`: `"cpu"` (f64, the default)
//! or `"gpu"` (the WGSL f32 kernel on WebGPU, [`engine`]), never substituted; refinement on the
//! CPU. Options arrive as JSON and are checked by name ([`crate::options`]), so native tests see the
//! same errors as JS.

pub mod cases;
pub mod engine;
mod js;
mod js_calls;
pub mod refine;
pub mod rocking;
pub mod simulate;
mod types;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_device;

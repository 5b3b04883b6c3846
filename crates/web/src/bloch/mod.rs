//! Bloch-wave electron diffraction in the npm package: `lab.blochSimulate(cifText, options)` (one
//! static zone-axis case, [`simulate`]) and `lab.blochRefine(files, options, onProgress, signal)`
//! (a diffBloch experiment refined one iteration per step, [`refine`]), both on the CPU (f64) by
//! the library paths of `scatterlab bloch simulate --cif …` and `scatterlab bloch refine`.
//! Options arrive as JSON and are checked by name ([`options`]), so native tests see the same
//! errors as JS.

mod js;
pub mod options;
pub mod refine;
pub mod simulate;
mod types;

#[cfg(test)]
mod tests;

//! `scatterlab`: the native command line for batch work.
//!
//! ```text
//! scatterlab refl compute <cases.json> --device cpu|gpu [--out results.json]
//! ```

mod refl_compute;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use scatterlab_core::DeviceKind;

/// Command-line arguments.
#[derive(Parser)]
#[command(name = "scatterlab", version, about = "GPU-accelerated scattering: reflectivity, 4D-STEM, Bloch waves")]
struct Cli {
    #[command(subcommand)]
    domain: Domain,
}

#[derive(Subcommand)]
enum Domain {
    /// X-ray reflectivity.
    Refl {
        #[command(subcommand)]
        command: ReflCommand,
    },
}

#[derive(Subcommand)]
enum ReflCommand {
    /// Compute R_s and R_p for every case of a cases file (the fixture format).
    Compute {
        /// Cases file (`cases` list with id, energy_ev, q_inv_A and per-layer columns).
        cases: PathBuf,
        /// Device to run on: cpu (f64) or gpu (f32 WGSL). Never falls back.
        #[arg(long, default_value = "cpu")]
        device: DeviceKind,
        /// Where to write the results JSON (stdout when absent).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.domain {
        Domain::Refl { command: ReflCommand::Compute { cases, device, out } } => refl_compute::run(&cases, device, out.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scatterlab: {message}");
            ExitCode::FAILURE
        }
    }
}

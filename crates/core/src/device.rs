//! Which kind of device computed a result. The caller always chooses; nothing falls back silently.

use serde::{Deserialize, Serialize};

/// The compute device a caller asks for and a result reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// The CPU reference path (f64).
    Cpu,
    /// A wgpu device running the WGSL kernels (f32 unless stated).
    Gpu,
}

impl DeviceKind {
    /// Lower-case name used on the command line and in JSON (`"cpu"`, `"gpu"`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
        }
    }
}

impl std::str::FromStr for DeviceKind {
    type Err = crate::InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Ok(DeviceKind::Cpu),
            "gpu" => Ok(DeviceKind::Gpu),
            other => Err(crate::InputError::new("device", format!("unknown device {other:?} (expected cpu or gpu)"))),
        }
    }
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

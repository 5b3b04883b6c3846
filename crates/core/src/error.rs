//! The one input-error shape every domain reuses: which object was wrong, and why.

/// A rejected input. `object` names the offending thing as the user knows it
/// (`"layer 3 thickness"`, `"q[17]"`, `"case soft_001"`), `problem` says what is wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{object}: {problem}")]
pub struct InputError {
    /// The offending object, named as the user would name it.
    pub object: String,
    /// What is wrong with it.
    pub problem: String,
}

impl InputError {
    /// Builds an error for `object` with the given `problem`.
    pub fn new(object: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { object: object.into(), problem: problem.into() }
    }

    /// Returns `Ok(value)` when `value` is finite, else an error naming `object`.
    pub fn check_finite(object: impl FnOnce() -> String, value: f64) -> Result<f64, Self> {
        if value.is_finite() {
            Ok(value)
        } else {
            Err(Self::new(object(), format!("not a finite number ({value})")))
        }
    }
}

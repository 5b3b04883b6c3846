//! The GPU-skip rule, one variable with one meaning: `SCATTERLAB_SKIP_GPU=1` skips GPU tests
//! (each says so and why); unset or `0` runs them, and then a missing adapter is a failure, not
//! a skip (CI never sets it, so a broken driver cannot pass silently). Any other value is refused:
//! `SCATTERLAB_SKIP_GPU=true` or `=yes` would otherwise mean "skip" in some tests and "run" in
//! others, as it did before the kit.

/// The environment variable of the rule.
pub const SKIP_GPU_VAR: &str = "SCATTERLAB_SKIP_GPU";

/// The rule on the variable's value: `Ok(true)` skip, `Ok(false)` run, `Err` a value with no meaning.
fn decide(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("" | "0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(format!("{SKIP_GPU_VAR}={other:?}: set it to 1 to skip GPU tests, or leave it unset (or 0) to run them")),
    }
}

/// Whether GPU test `what` is to be skipped; prints the reason when it is.
pub fn skip_gpu(what: &str) -> bool {
    let value = std::env::var(SKIP_GPU_VAR).ok();
    let skip = decide(value.as_deref()).unwrap_or_else(|e| panic!("{e}"));
    if skip {
        eprintln!("{what}: GPU test skipped ({SKIP_GPU_VAR}=1: no GPU adapter on this machine)");
    }
    skip
}

/// The device `acquire` gives for GPU test `what`, or `None` when the rule says skip. A failure
/// to acquire panics with the error and the way to skip on a machine without any adapter.
pub fn gpu_or_skip<T, E: std::fmt::Display>(what: &str, acquire: impl FnOnce() -> Result<T, E>) -> Option<T> {
    if skip_gpu(what) {
        return None;
    }
    match acquire() {
        Ok(device) => Some(device),
        Err(e) => panic!("{what}: no GPU: {e} (set {SKIP_GPU_VAR}=1 to skip GPU tests on a machine without any adapter)"),
    }
}

#[cfg(test)]
mod tests {
    use super::decide;

    #[test]
    fn one_value_skips_and_unknown_values_are_refused() {
        assert_eq!(decide(None), Ok(false));
        assert_eq!(decide(Some("")), Ok(false));
        assert_eq!(decide(Some("0")), Ok(false));
        assert_eq!(decide(Some("1")), Ok(true));
        assert_eq!(decide(Some(" 1\n")), Ok(true));
        for bad in ["true", "yes", "2", "skip"] {
            assert!(decide(Some(bad)).is_err_and(|e| e.contains(bad) && e.contains("set it to 1")), "{bad}");
        }
    }
}

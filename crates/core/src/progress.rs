//! Progress reporting and cooperative cancellation for long jobs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cheap, clonable cancellation flag. Long jobs poll [`CancelToken::check`] between work units.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

/// Returned by a job that stopped because its [`CancelToken`] was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

impl CancelToken {
    /// A fresh, not-cancelled token.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every holder of this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// `Err(Cancelled)` once cancelled, for use with `?` inside job loops.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

/// A progress sink: `done` of `total` work units finished.
pub trait Progress {
    /// Called after each unit of work; must be cheap.
    fn report(&mut self, done: u64, total: u64);
}

impl<F: FnMut(u64, u64)> Progress for F {
    fn report(&mut self, done: u64, total: u64) {
        self(done, total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_seen_by_clones() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(clone.check().is_ok());
        token.cancel();
        assert_eq!(clone.check(), Err(Cancelled));
    }
}

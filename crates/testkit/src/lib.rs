//! The one test kit of scatterlab (a dev-dependency only; never published): where the fixtures
//! are, how a randomised test seeds and replays, and when a GPU test may skip.
//!
//! Every test reads these three rules from here so that each environment switch has one meaning
//! everywhere (TESTING.md § Environment switches):
//! - `SCATTERLAB_FIXTURES=/path` — the fixtures folder; default `../shared/fixtures` beside the
//!   repository ([`fixtures`](mod@fixtures)).
//! - `SCATTERLAB_SEED=N` — replays a randomised test; every seeded test prints the seed it drew
//!   ([`seed`](mod@seed)).
//! - `SCATTERLAB_SKIP_GPU=1` — skips GPU tests on a machine without any adapter, with a printed
//!   reason; unset (or `0`) runs them and a missing adapter fails ([`gpu`](mod@gpu)).
//!
//! The helpers panic with a message that says what to set: they run only inside tests.
// Test-only code: a missing fixture or a bad switch fails the test that asked, with the message.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

pub mod fixtures;
pub mod gpu;
pub mod seed;

pub use fixtures::{fixture, fixtures_dir, read_fixture, read_fixture_text};
pub use gpu::{gpu_or_skip, skip_gpu};
pub use seed::{rng, rng_or, seed, seed_or};

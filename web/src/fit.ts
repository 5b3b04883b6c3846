/**
 * The types of {@link Scatterlab.fit} (re-exported by the package's entry point). The protocol's
 * types are generated from the Rust definitions (crates/web/src/protocol/fit.rs); the wrapper adds
 * the `signal` option.
 * @module
 */
import type { Scatterlab } from "./index.js";
import type { FitOptions as FitProtocolOptions } from "./generated/fit.js";

export type { FitMethod, FitProgress, FitResult, FitState } from "./generated/fit.js";

/** Options of {@link Scatterlab.fit}; every field is optional. */
export interface FitOptions extends FitProtocolOptions {
  /**
   * Aborting it cancels the fit: it stops at its next pause (within a DE generation plus ~20 ms) and
   * resolves with its best point, `cancelled: true` and its `state`. LM runs to its end once started;
   * the MCMC sampler stops at its next step (before the end of burn-in the result is LM's).
   */
  signal?: AbortSignal;
}

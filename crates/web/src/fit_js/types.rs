//! TypeScript declarations of `Scatterlab.fit`'s options, progress reports and result (emitted into
//! `scatterlab_web.d.ts`; web/src/fit.ts re-exports the same file for the wrapper).

use wasm_bindgen::prelude::*;

// The declarations of the raw `scatterlab/pkg` types: the same generated file the wrapper
// re-exports (web/src/fit.ts), from the Rust definitions in `src/protocol/`.
#[wasm_bindgen(typescript_custom_section)]
const TS_FIT_TYPES: &'static str = include_str!("../../../../web/src/generated/fit.ts");

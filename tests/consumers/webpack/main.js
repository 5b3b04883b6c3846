// Zero-option consumer: the bundler must find the worker and the wasm itself.
import { runChecks } from "../shared/check.js";

runChecks();

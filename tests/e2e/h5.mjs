#!/usr/bin/env node
// End to end for HDF5 / 4D-STEM files through the npm package: tests/e2e/h5.html builds `File`s
// from fixture bytes injected here (shared/ is not served), opens them in the package's Web
// Worker (read range by range with FileReaderSync), and checks stemInfo, the tree, readFrames,
// streamFrames (sums equal the native reference counts), a missing data file named, a cancel
// mid-stream and a throwing onBatch, and SSB ptychography (`files.ssb`: the native phase, a fit,
// a NaN option named); every check on that page must pass.
import { finish, fixtureBase64, runCheckPage, withServer } from "./harness.mjs";

const names = [
  "dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5",
  "dev_oddtail_master.h5", "dev_oddtail_data_000001.h5", "dev_oddtail_data_000002.h5", "dev_oddtail_data_000003.h5",
];
const files = fixtureBase64("stem", names);
const failures = await withServer((server) => runCheckPage(server, {
  label: "h5", path: "tests/e2e/h5.html", globals: { __h5Files: files }, resultName: "__scatterlabH5Result", timeout: 120_000,
}));
finish("h5", failures);

#!/usr/bin/env node
// The npm package's command: run the binary of this platform's package (named in
// optionalDependencies) with the same arguments, and exit as it did. The binary is run
// directly, so `handoff-store install <client>` run through here writes the binary's own path
// into the client's configuration: hooks never start Node.
"use strict";
const { spawnSync } = require("child_process");
const path = require("path");

const platforms = {
  "linux-x64": "handoff-store-linux-x64-gnu",
  "linux-arm64": "handoff-store-linux-arm64-gnu",
};
const name = path.basename(__filename, ".js");
const pkg = platforms[`${process.platform}-${process.arch}`];
let binary;
try {
  binary = require.resolve(`${pkg}/bin/${name}`);
} catch {
  process.stderr.write(
    `${name}: no prebuilt binary for ${process.platform}-${process.arch}` +
      (pkg ? ` (the package ${pkg} is not installed)` : "") +
      ": build it from the crate instead (cargo install handoff-store --locked)\n",
  );
  process.exit(1);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  process.stderr.write(`${name}: ${run.error.message}\n`);
  process.exit(1);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status ?? 1);

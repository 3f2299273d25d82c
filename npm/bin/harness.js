#!/usr/bin/env node
// The `harness` command of the npm package: finds this platform's binary and runs it with the
// same arguments, standard streams and exit status. Signals reach the binary, which stops its
// agent's process group on each of them and still prints the outcome.

import { spawn } from "node:child_process";
import { harnessBinary } from "../dist/src/binary.js";

let binary;
try {
  binary = harnessBinary();
} catch (error) {
  process.stderr.write(`harness: ${error.message}\n`);
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// A terminal sends Ctrl-C, Ctrl-\ and a hang-up to its whole foreground process group, the
// binary included: passing them on would make a second signal, which makes `harness` exit at
// once without the outcome. This process only outlives them. Signals sent to this process alone
// (`kill PID`) are passed on.
for (const signal of ["SIGINT", "SIGQUIT", "SIGHUP"]) {
  process.on(signal, () => {});
}
for (const signal of ["SIGTERM", "SIGUSR1", "SIGUSR2"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`harness: cannot start ${binary}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // Die of the same signal, so a shell sees what the binary saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});

// The published layout (scripts/stage.mjs): the main package finds this platform's binary in its
// platform package, through the `harness` launcher and through the client.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { platformPackage } from "../src/index.js";
import { appears, fakeAgent, fixtures, gone, npmDir, pidsIn, tempDir } from "./helpers.js";

const run = promisify(execFile);
const platform = platformPackage(`${process.platform}-${process.arch}`);

/** An environment without HARNESS_BINARY: only the installed layout can provide the binary. */
function bare(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.HARNESS_BINARY;
  return env;
}

/** A project folder with the staged packages in its node_modules; `withBinary` false: none. */
async function project(withBinary: boolean): Promise<string> {
  const dir = await tempDir();
  const modules = join(dir, "node_modules");
  mkdirSync(modules);
  const args = [join(npmDir, "scripts", "stage.mjs"), "--out", modules];
  if (withBinary) args.push("--binary", process.env.HARNESS_BINARY ?? "");
  await run(process.execPath, args);
  return dir;
}

function launcher(dir: string): string {
  return join(dir, "node_modules", "harness-agents", "bin", "harness.js");
}

test("the launcher runs the platform package's binary with the same arguments and output", async () => {
  const dir = await project(true);
  const { stdout } = await run(launcher(dir), ["classify", "cat a.txt"], { env: bare() });
  assert.equal(stdout, '[{"type":"read","cmd":"cat a.txt","name":"a.txt","path":"a.txt"}]\n');
});

test("the launcher exits with the binary's status and passes its stderr through", async () => {
  const dir = await project(true);
  const missing = join(dir, "missing.jsonl");
  await assert.rejects(run(launcher(dir), ["normalize", missing], { env: bare() }), (error: any) => {
    assert.equal(error.code, 1);
    assert.match(error.stderr, /missing\.jsonl/);
    return true;
  });
});

test("the client of the installed package finds the same binary", async () => {
  const dir = await project(true);
  const script = 'import("harness-agents").then(async (m) => console.log(JSON.stringify(await m.classify("ls src"))))';
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, env: bare() });
  assert.equal(stdout, '[{"type":"list_files","cmd":"ls src","path":"src"}]\n');
});

test("without the platform package the launcher says which package is missing", async () => {
  const dir = await project(false);
  await assert.rejects(run(launcher(dir), ["--version"], { env: bare() }), (error: any) => {
    assert.equal(error.code, 1);
    assert.equal(
      error.stderr,
      `harness: the optional dependency ${platform} is not installed (npm skips optional dependencies ` +
        "with --omit=optional or --no-optional); reinstall harness-agents, or set HARNESS_BINARY\n",
    );
    return true;
  });
});

test("SIGTERM to the launcher reaches harness: the agent is killed and the outcome printed", { timeout: 60_000 }, async () => {
  const dir = await project(true);
  const pidFile = join(dir, "pids");
  const child = spawn(
    launcher(dir),
    ["run", "--format=jsonl", `--binary=${fakeAgent("claude")}`, "-"],
    {
      env: { ...bare(), FAKE_STREAM: join(fixtures, "claude", "c_read.jsonl"), FAKE_PIDS: pidFile },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  child.stdin.end("hi");
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  await appears(pidFile);
  const pids = pidsIn(pidFile);
  child.kill("SIGTERM");
  assert.equal(await exit, 143); // harness's status for SIGTERM (128 + 15)
  assert.ok(await gone(pids), `agent processes ${pids.join(", ")} still alive`);
  const last = JSON.parse(stdout.trimEnd().split("\n").at(-1) ?? "{}");
  assert.equal(last.kind, "outcome");
  assert.equal(last.exit_code, null);
});

test("the staged platform package is limited to its os and cpu", async () => {
  const dir = await project(true);
  const manifest = JSON.parse(readFileSync(join(dir, "node_modules", platform, "package.json"), "utf8"));
  assert.deepEqual([manifest.os, manifest.cpu], [[process.platform], [process.arch]]);
  const main = JSON.parse(readFileSync(join(dir, "node_modules", "harness-agents", "package.json"), "utf8"));
  assert.deepEqual(Object.keys(main.optionalDependencies), [
    "harness-agents-linux-x64",
    "harness-agents-linux-arm64",
    "harness-agents-darwin-x64",
    "harness-agents-darwin-arm64",
    "harness-agents-win32-x64",
  ]);
});

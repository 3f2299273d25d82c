// Shared by the tests: where the repository's fixtures are, and the `harness` binary they drive.

import { existsSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import type { Line } from "../src/index.js";

/** The npm/ folder (tests run from dist/test/). */
export const npmDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The repository's root. */
export const repo = join(npmDir, "..");
/** The recorded streams and their expected lines. */
export const fixtures = join(repo, "fixtures");

// The debug binary `cargo test --workspace` builds, unless HARNESS_BINARY names another: the
// client finds it through HARNESS_BINARY, as a user's program can.
if (process.env.HARNESS_BINARY === undefined || process.env.HARNESS_BINARY === "") {
  process.env.HARNESS_BINARY = join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "harness");
}
if (!existsSync(process.env.HARNESS_BINARY)) {
  throw new Error(
    `no harness binary at ${process.env.HARNESS_BINARY}: run \`cargo build -p harness-cli\` or set HARNESS_BINARY`,
  );
}

/** A fake agent of fixtures/fake-agent (a shell script that replays a recorded stream). */
export function fakeAgent(name: string): string {
  return join(fixtures, "fake-agent", name);
}

/** The lines of an `.expected.jsonl` file, parsed. */
export function expected(path: string): Line[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Line);
}

/** Every line an iterator hands out. */
export async function collect(lines: AsyncIterable<Line>): Promise<Line[]> {
  const all: Line[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed when the test file is done. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "harness-npm-"));
  made.push(dir);
  return dir;
}

/** Waits until `path` exists (a fake agent writes its pids there), for at most a minute. */
export async function appears(path: string): Promise<void> {
  for (let i = 0; i < 3000 && !existsSync(path); i++) await sleep(20);
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

/** Whether every process is gone (a zombie still has its /proc entry), for at most a minute. */
export async function gone(pids: string[]): Promise<boolean> {
  for (let i = 0; i < 3000; i++) {
    if (pids.every((pid) => !existsSync(`/proc/${pid}`))) return true;
    await sleep(20);
  }
  return false;
}

/** The pids a fake agent wrote to `path` (FAKE_PIDS: the script's and its grandchild's). */
export function pidsIn(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter((pid) => pid !== "");
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Where the `harness` binary is: the launcher (`bin/harness.js`) and the client both ask here.
//
// The layout is `@openai/codex`'s: the main package lists one package per platform as an
// optional dependency (`harness-agents-linux-x64`, ...), each with `os` and `cpu` set, so npm
// installs only the one that fits; that package holds the binary in `bin/`.

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The platforms a binary package is published for: `${process.platform}-${process.arch}`. */
export const PLATFORMS = [
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
  "win32-x64",
] as const;

/** One of {@link PLATFORMS}. */
export type Platform = (typeof PLATFORMS)[number];

/** The npm package that holds the binary for `platform`, such as `harness-agents-linux-x64`. */
export function platformPackage(platform: string): string {
  return `harness-agents-${platform}`;
}

/**
 * The path of the `harness` binary: `$HARNESS_BINARY` when set (a binary built from source, such
 * as `target/debug/harness`), else the one in this platform's package. Throws an `Error` that
 * says what to do when neither exists.
 */
export function harnessBinary(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.HARNESS_BINARY;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!existsSync(fromEnv)) {
      throw new Error(`HARNESS_BINARY is ${fromEnv}, which does not exist`);
    }
    return fromEnv;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = platformPackage(platform);
  if (!(PLATFORMS as readonly string[]).includes(platform)) {
    throw new Error(
      `harness-agents has no binary for ${platform}; build one from source ` +
        "(cargo install --locked --path harness-cli) and set HARNESS_BINARY to it",
    );
  }
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(
      `the optional dependency ${pkg} is not installed (npm skips optional dependencies ` +
        `with --omit=optional or --no-optional); reinstall harness-agents, or set HARNESS_BINARY`,
    );
  }
  const binary = join(dirname(manifest), "bin", process.platform === "win32" ? "harness.exe" : "harness");
  if (!existsSync(binary)) {
    throw new Error(`${pkg} is installed but holds no binary at ${binary}`);
  }
  return binary;
}

#!/usr/bin/env node
// Lays out the packages to publish, the layout `@openai/codex` uses:
//
//   OUT/harness-agents/                the main package: the client (dist/src), the `harness`
//                                      launcher (bin/harness.js), and one optional dependency
//                                      per platform, at this same version
//   OUT/harness-agents-PLATFORM/       one per binary given: bin/harness, with `os` and `cpu`
//                                      set so npm installs only the package that fits
//
// Usage: node scripts/stage.mjs --out DIR [--binary PATH [--platform linux-x64]]...
// (`npm run build` first). Then `npm publish` each platform folder, and the main one last.
// The committed package.json lists no optional dependencies: they exist only once published,
// and `npm ci` would refuse a lock file that cannot hold them.

import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { PLATFORMS, platformPackage } = await import(join(root, "dist", "src", "binary.js"));

const { values } = parseArgs({
  options: {
    out: { type: "string" },
    binary: { type: "string", multiple: true, default: [] },
    platform: { type: "string", multiple: true, default: [] },
  },
});
if (values.out === undefined) {
  console.error("usage: node scripts/stage.mjs --out DIR [--binary PATH [--platform P]]...");
  process.exit(2);
}

const main = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const common = {
  version: main.version,
  license: main.license,
  keywords: main.keywords,
};

/** The main package: what the committed package.json says, plus the platform packages. */
function stageMain(out) {
  const dir = join(out, main.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  const manifest = {
    name: main.name,
    description: main.description,
    ...common,
    type: main.type,
    bin: main.bin,
    main: main.main,
    types: main.types,
    exports: main.exports,
    files: main.files,
    engines: main.engines,
    optionalDependencies: Object.fromEntries(
      PLATFORMS.map((platform) => [platformPackage(platform), main.version]),
    ),
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(root, "bin", "harness.js"), join(dir, "bin", "harness.js"));
  chmodSync(join(dir, "bin", "harness.js"), 0o755);
  cpSync(join(root, "dist", "src"), join(dir, "dist", "src"), { recursive: true });
  copyFileSync(join(root, "README.md"), join(dir, "README.md"));
  return dir;
}

/** One platform's package around `binary`. */
function stagePlatform(out, binary, platform) {
  if (!PLATFORMS.includes(platform)) {
    throw new Error(`unknown platform ${platform}; known: ${PLATFORMS.join(", ")}`);
  }
  const [os, cpu] = platform.split("-");
  const name = platformPackage(platform);
  const dir = join(out, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  const manifest = {
    name,
    description: `The harness binary for ${platform}; installed by ${main.name}, not used alone.`,
    ...common,
    os: [os],
    cpu: [cpu],
    files: ["bin/"],
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const file = os === "win32" ? "harness.exe" : "harness";
  copyFileSync(binary, join(dir, "bin", file));
  chmodSync(join(dir, "bin", file), 0o755);
  writeFileSync(
    join(dir, "README.md"),
    `# ${name}\n\nThe \`harness\` binary for ${platform}. Install \`${main.name}\`, which depends on this package.\n`,
  );
  return dir;
}

const here = `${process.platform}-${process.arch}`;
const staged = [stageMain(values.out)];
values.binary.forEach((binary, i) => {
  staged.push(stagePlatform(values.out, binary, values.platform[i] ?? here));
});
for (const dir of staged) console.log(dir);

// The README's first example and its session example, run as written, against fake agents (one
// that replays a recorded run, one that holds a session): the only difference from a user's
// machine is which agent answers.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { fakeAgent, fixtures, npmDir, tempDir } from "./helpers.js";

test("the README's first example prints what the README says", { timeout: 60_000 }, async () => {
  const readme = readFileSync(join(npmDir, "README.md"), "utf8");
  const example = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(example !== undefined, "the README has a js example");
  assert.equal(example.trimEnd().split("\n").length, 5);
  // Inside the package, so `import "harness-agents"` resolves to it by its own name.
  const file = join(npmDir, "dist", "readme-example.mjs");
  writeFileSync(file, example);
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    env: {
      ...process.env,
      CLAUDE_BIN: fakeAgent("claude"),
      FAKE_STREAM: join(fixtures, "claude", "c_read.jsonl"),
    },
  });
  const printed = /```text\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.equal(stdout, printed);
  assert.equal(
    stdout,
    [
      "agent I'll read part of app.py.",
      "read /home/dev/project/src/app.py",
      "read /home/dev/project/README.md",
      "agent app.py defines foo/bar; README describes the demo.",
      "success app.py defines foo/bar; README describes the demo.",
      "",
    ].join("\n"),
  );
});

test("the README's session example prints what the README shows", { timeout: 60_000 }, async () => {
  const readme = readFileSync(join(npmDir, "README.md"), "utf8");
  const shown = /```js\n((?:(?!```)[\s\S])*?session\((?:(?!```)[\s\S])*?)```\n\n[^`]*```text\n([\s\S]*?)```/.exec(readme);
  assert.ok(shown?.[1] !== undefined && shown[2] !== undefined, "a js session example, then what it prints");
  const file = join(npmDir, "dist", "readme-session.mjs");
  writeFileSync(file, shown[1]);
  // The fake session agent answers each prompt it does not know with a successful turn.
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    env: { ...process.env, CLAUDE_BIN: fakeAgent("claude-session") },
    cwd: await tempDir(),
  });
  assert.equal(stdout, shown[2]);
  assert.equal(stdout, "turn 1: success\nturn 2: success\nexit 0\n");
});

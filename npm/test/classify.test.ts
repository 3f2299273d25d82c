// classify(script or argv): Codex's classification through `harness classify` (SPEC section 5).

import assert from "node:assert/strict";
import { test } from "node:test";
import { classify } from "../src/index.js";

test("a pipeline is classified as Codex does: the search, the head dropped (B rules)", async () => {
  assert.deepEqual(await classify("rg -n foo src | head"), [
    { type: "search", cmd: "rg -n foo src", query: "foo", path: "src" },
  ]);
});

test("each variant of ParsedCommand comes back with its exact fields", async () => {
  assert.deepEqual(await classify(["cat", "a.txt"]), [
    { type: "read", cmd: "cat a.txt", name: "a.txt", path: "a.txt" },
  ]);
  assert.deepEqual(await classify("ls -la src"), [{ type: "list_files", cmd: "ls -la src", path: "src" }]);
  assert.deepEqual(await classify("rg foo"), [{ type: "search", cmd: "rg foo", query: "foo", path: null }]);
  assert.deepEqual(await classify("make build"), [{ type: "unknown", cmd: "make build" }]);
});

test("a script that starts with a dash or holds a newline is a script, never an option", async () => {
  assert.deepEqual(await classify("--version"), [{ type: "unknown", cmd: "--version" }]);
  assert.deepEqual(await classify("cat a\ncat b"), [
    { type: "read", cmd: "cat a", name: "a", path: "a" },
    { type: "read", cmd: "cat b", name: "b", path: "b" },
  ]);
});

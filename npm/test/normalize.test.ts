// normalize(path or stream) against the recorded fixtures and their expected lines.

import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { HarnessError, isEvent, isOutcome, normalize } from "../src/index.js";
import { collect, expected, fixtures } from "./helpers.js";

const claudeRead = join(fixtures, "claude", "c_read.jsonl");

test("normalize(path) hands out exactly the expected events, then the outcome (J9)", async () => {
  const lines = await collect(normalize(claudeRead));
  assert.deepEqual(lines, expected(join(fixtures, "claude", "c_read.expected.jsonl")));
  assert.equal(lines.filter(isOutcome).length, 1);
  assert.ok(isOutcome(lines[lines.length - 1]!));
});

test("normalize(stream) reads the same recording from a Readable", async () => {
  const lines = await collect(normalize(createReadStream(claudeRead)));
  assert.deepEqual(lines, expected(join(fixtures, "claude", "c_read.expected.jsonl")));
});

test("normalize detects a Codex stream and reads its recorded stderr after it (S10)", async () => {
  // The expected files of Codex's recordings were written with --cwd /home/dev2/project.
  const lines = await collect(
    normalize(join(fixtures, "codex", "a_plain.jsonl"), {
      cwd: "/home/dev2/project",
      stderrFile: join(fixtures, "codex", "a_plain.stderr"),
    }),
  );
  assert.deepEqual(lines, expected(join(fixtures, "codex", "a_plain.expected.jsonl")));
});

// One recording of each newer backend, named and read with the working directory its expected
// file was normalized with: the name is accepted and the lines are exactly the expected ones.
for (const [backend, cwd] of [
  ["pi", "/home/pi/project"],
  ["qwen", "/home/qwen/project"],
  ["copilot", "/home/copilot/project"],
] as const) {
  test(`normalize with backend ${backend} gives a recording's expected lines`, async () => {
    const lines = await collect(normalize(join(fixtures, backend, "a_plain_text.jsonl"), { backend, cwd }));
    assert.deepEqual(lines, expected(join(fixtures, backend, "a_plain_text.expected.jsonl")));
  });
}

test("normalize reads an async iterable of strings, split anywhere", async () => {
  async function* pieces() {
    yield '{"type":"assistant","message":{"id":"m1","content":[{"type":"te';
    yield 'xt","text":"Hi."}]}}\n{"type":"result","subtype":"success","is_error":false,"result":"Hi."}\n';
  }
  const lines = await collect(normalize(pieces(), { backend: "claude" }));
  assert.deepEqual(lines.filter(isEvent), [{ kind: "agent", text: "Hi.", line: 1 }]);
  const outcome = lines.at(-1);
  assert.ok(outcome !== undefined && isOutcome(outcome));
  assert.equal(outcome.status, "success");
  assert.equal(outcome.final_output, "Hi.");
  assert.deepEqual(outcome.counts, { agent: 1 });
});

test("a missing file is a HarnessError with harness's exit status and message", async () => {
  const missing = join(fixtures, "no-such-recording.jsonl");
  await assert.rejects(collect(normalize(missing)), (error: unknown) => {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.exitCode, 1);
    assert.match(error.stderr, /no-such-recording\.jsonl/);
    return true;
  });
});

test("a path that starts with a dash is a path, never an option", async () => {
  await assert.rejects(collect(normalize("--help")), (error: unknown) => {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.exitCode, 1); // a missing file, not usage (2) nor help (0)
    return true;
  });
});

test("an aborted normalize throws the signal's reason", async () => {
  const controller = new AbortController();
  const lines = normalize(claudeRead, { signal: controller.signal });
  const first = await lines.next();
  assert.equal(first.done, false);
  controller.abort();
  await assert.rejects(collect(lines), { name: "AbortError" });
});

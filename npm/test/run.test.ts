// run(): live runs of the fake agents in fixtures/fake-agent, through `harness run`.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { HarnessError, isOutcome, run, type Line } from "../src/index.js";
import { appears, collect, expected, fakeAgent, fixtures, gone, pidsIn, tempDir } from "./helpers.js";

const claudeRead = join(fixtures, "claude", "c_read.jsonl");

/** The expected lines of a recording, with a live run's exit code on the outcome. */
function expectedLive(name: string, exitCode: number | null): Line[] {
  const lines = expected(join(fixtures, "claude", `${name}.expected.jsonl`));
  const outcome = lines.at(-1);
  assert.ok(outcome !== undefined && isOutcome(outcome));
  outcome.exit_code = exitCode;
  return lines;
}

test("run hands out the agent's events as harness has them, then the outcome with its exit code", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const lines = await collect(
    run({
      backend: "claude",
      prompt: "--dangerously-skip-permissions is a prompt, not an option",
      cwd: dir,
      model: "opus",
      agentBinary: fakeAgent("claude"),
      env: { FAKE_STREAM: claudeRead, FAKE_STDIN: join(dir, "stdin"), FAKE_ARGV: join(dir, "argv") },
    }),
  );
  assert.deepEqual(lines, expectedLive("c_read", 0));
  // The prompt reached the agent's standard input whole, and the options its command line.
  assert.equal(
    readFileSync(join(dir, "stdin"), "utf8"),
    "--dangerously-skip-permissions is a prompt, not an option",
  );
  assert.ok(readFileSync(join(dir, "argv"), "utf8").split("\n").includes("--model=opus"));
});

test("an agent that exits non-zero still ends with the outcome, carrying its exit code", { timeout: 60_000 }, async () => {
  const lines = await collect(
    run({
      prompt: "hi",
      agentBinary: fakeAgent("claude"),
      env: { FAKE_STREAM: claudeRead, FAKE_EXIT: "3" },
    }),
  );
  assert.deepEqual(lines, expectedLive("c_read", 3));
});

test("aborting kills the agent's whole process group, then throws the signal's reason", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const pidFile = join(dir, "pids");
  const controller = new AbortController();
  const lines = run({
    prompt: "hang",
    agentBinary: fakeAgent("claude"),
    env: { FAKE_STREAM: claudeRead, FAKE_PIDS: pidFile },
    signal: controller.signal,
  });
  const seen: Line[] = [];
  const done = (async () => {
    for await (const line of lines) seen.push(line);
  })();
  await appears(pidFile); // the agent has printed its stream and hangs, with a grandchild
  const pids = pidsIn(pidFile);
  assert.equal(pids.length, 2);
  controller.abort();
  await assert.rejects(done, { name: "AbortError" });
  assert.ok(await gone(pids), `agent processes ${pids.join(", ")} still alive`);
  // Every event the agent printed before the abort was handed out, and no outcome after it.
  assert.deepEqual(seen, expectedLive("c_read", 0).slice(0, -1));
});

test("leaving the loop early stops harness and kills the agent", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const pidFile = join(dir, "pids");
  const lines = run({
    prompt: "hang",
    agentBinary: fakeAgent("claude"),
    env: { FAKE_STREAM: claudeRead, FAKE_PIDS: pidFile },
  });
  let pids: string[] = [];
  for await (const line of lines) {
    assert.equal(line.kind, "agent");
    await appears(pidFile); // the agent has printed its whole stream and hangs
    pids = pidsIn(pidFile);
    break;
  }
  assert.equal(pids.length, 2);
  assert.ok(await gone(pids), `agent processes ${pids.join(", ")} still alive`);
});

test("a timeout kills the agent and ends with an error event and an incomplete outcome", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const lines = await collect(
    run({
      prompt: "hang",
      agentBinary: fakeAgent("codex"),
      backend: "codex",
      timeout: "1s",
      env: { FAKE_PIDS: join(dir, "pids") },
    }),
  );
  assert.deepEqual(lines, [
    { kind: "error", message: "the run timed out after 1 second; its process group was killed" },
    { kind: "error", message: "stream ended without a result" },
    { kind: "outcome", status: "incomplete", metrics: {}, counts: { error: 2 }, exit_code: null },
  ]);
  assert.ok(await gone(pidsIn(join(dir, "pids"))));
});

test("a missing agent binary is a HarnessError with exit status 127 and harness's message", { timeout: 60_000 }, async () => {
  const missing = join(fixtures, "fake-agent", "no-such-agent");
  await assert.rejects(collect(run({ prompt: "hi", agentBinary: missing })), (error: unknown) => {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.exitCode, 127);
    assert.equal(error.stderr, `harness: ${missing} does not exist\n`);
    return true;
  });
});

test("a bad timeout is refused by harness as bad usage (exit 2)", { timeout: 60_000 }, async () => {
  await assert.rejects(
    collect(run({ prompt: "hi", timeout: -1, agentBinary: fakeAgent("claude") })),
    (error: unknown) => error instanceof HarnessError && error.exitCode === 2,
  );
});

test("an acp run starts the agent command line word for word and speaks the protocol with it", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const argv = join(dir, "argv");
  const lines = await collect(
    run({
      backend: "acp",
      prompt: "hi",
      cwd: dir,
      agent: [fakeAgent("acp"), "--acp", "it's two words"],
      env: { FAKE_MODE: "ok", FAKE_ARGV: argv },
    }),
  );
  // A12: the words reach the agent as given, quotes and spaces included.
  assert.deepEqual(readFileSync(argv, "utf8").split("\n").filter((w) => w !== ""), ["--acp", "it's two words"]);
  // A5-A10: the fake agent's thought, message, read, plan and answer.
  assert.deepEqual(
    lines.map((line) => line.kind),
    ["reasoning", "agent", "read", "plan", "agent", "outcome"],
  );
  const outcome = lines.at(-1);
  assert.ok(outcome !== undefined && isOutcome(outcome));
  assert.equal(outcome.status, "success");
  assert.equal(outcome.final_output, "Done.");
});

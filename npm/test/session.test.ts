// session(): conversations with the fake Claude Code session agent
// (fixtures/fake-agent/claude-session, whose header says what each prompt makes it do), through
// `harness session`. Each turn is bounded by `timeout`, each test by its own.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { HarnessError, session, type Line, type SessionOptions } from "../src/index.js";
import { appears, collect, fakeAgent, gone, sleep, tempDir } from "./helpers.js";

const sid = "5e55a0e0-0000-4000-8000-000000000001";

/** A session with the fake agent, which writes its pid to `dir/pid` and what it reads to `dir/log`. */
function open(dir: string, options: SessionOptions = {}) {
  return session({
    agentBinary: fakeAgent("claude-session"),
    cwd: dir,
    timeout: "30s",
    ...options,
    env: { FAKE_PID: join(dir, "pid"), FAKE_LOG: join(dir, "log"), ...options.env },
  });
}

/**
 * Waits until the fake agent has read a prompt, so that its turn runs. Claude Code's text is an
 * event only once its message is complete (at the message's next line), so a turn that hangs
 * shows nothing before it ends: the agent's own log says when it runs.
 */
async function promptRead(dir: string): Promise<void> {
  const log = join(dir, "log");
  for (let i = 0; i < 500; i++) {
    if (existsSync(log) && readFileSync(log, "utf8").includes('"type":"user"')) return;
    await sleep(20);
  }
  throw new Error("the agent never read the prompt");
}

/** The fake's figures after `turn` turns: Claude Code reports them for the session so far. */
function metrics(turn: number) {
  return {
    input_tokens: 10,
    output_tokens: 5,
    total_cost_usd: 0.01,
    duration_ms: 10 * turn,
    num_turns: turn,
    cumulative: true,
  };
}

function turnEnd(turn: number, answer: string, counts: Record<string, number>, figures = metrics(turn)): Line {
  return {
    kind: "outcome",
    session_id: sid,
    status: "success",
    final_output: answer,
    metrics: figures,
    counts,
    turn,
  };
}

function permission(turn: number, line: number): Line {
  return {
    kind: "permission",
    id: `perm-${turn}`,
    options: ["allow", "allow_always", "deny"],
    command: "touch made.txt",
    expect: [{ kind: "command" }],
    input: { command: "touch made.txt" },
    tool: "Bash",
    tool_use_id: `toolu_${turn}`,
    line,
  };
}

const interrupted: Line[] = [
  { kind: "agent", text: "working", line: 2 },
  { kind: "error", message: "error_during_execution", line: 4 },
  {
    kind: "outcome",
    session_id: sid,
    status: "interrupted",
    metrics: { num_turns: 1, cumulative: true },
    counts: { agent: 1, error: 1 },
    turn: 1,
  },
];

test("two turns run one after the other, and the end of input ends the session", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("plain");
  chat.prompt("plain");
  chat.end();
  assert.deepEqual(await collect(chat), [
    { kind: "agent", text: "plain 1", line: 2 },
    turnEnd(1, "plain 1", { agent: 1 }),
    { kind: "agent", text: "plain 2", line: 5 },
    turnEnd(2, "plain 2", { agent: 1 }),
  ]);
  assert.equal(chat.exitCode, 0);
  assert.ok(await gone([readFileSync(join(dir, "pid"), "utf8").trim()]));
});

test("a permission allowed, and one denied with a message that reaches the agent", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("ask");
  const lines: Line[] = [];
  for await (const line of chat) {
    lines.push(line);
    if (line.kind === "permission" && line.id === "perm-1") chat.answer(line.id, "allow");
    else if (line.kind === "permission") chat.answer(line.id, "deny", "not now");
    else if (line.kind === "outcome" && line.turn === 1) chat.prompt("ask");
    // Not before: once the input has ended, nobody is left to answer, and harness denies.
    else if (line.kind === "outcome") chat.end();
  }
  assert.deepEqual(lines, [
    permission(1, 3),
    { kind: "command", command: "touch made.txt", success: true, tool: "Bash", tool_use_id: "toolu_1", line: 4 },
    { kind: "agent", text: "made it", line: 5 },
    turnEnd(1, "made it", { agent: 1, command: 1, permission: 1 }),
    permission(2, 9),
    {
      kind: "command",
      command: "touch made.txt",
      success: false,
      error: "not now",
      tool: "Bash",
      tool_use_id: "toolu_2",
      line: 10,
    },
    { kind: "agent", text: "denied", line: 11 },
    turnEnd(2, "denied", { agent: 1, command: 1, permission: 1 }),
  ]);
  assert.equal(chat.exitCode, 0);
});

test("an interrupt ends the turn interrupted, and the session goes on", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("hang");
  await promptRead(dir);
  chat.interrupt();
  const lines: Line[] = [];
  for await (const line of chat) {
    lines.push(line);
    if (line.kind === "outcome" && line.turn === 1) chat.prompt("plain");
    else if (line.kind === "outcome") chat.end();
  }
  assert.deepEqual(lines, [
    ...interrupted,
    { kind: "agent", text: "plain 2", line: 6 },
    turnEnd(2, "plain 2", { agent: 1 }, { ...metrics(1), num_turns: 2 }),
  ]);
  assert.equal(chat.exitCode, 0);
});

test("close interrupts the running turn and ends the session; commands after it throw", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("hang");
  await promptRead(dir);
  chat.close();
  assert.throws(() => chat.prompt("plain"), /the session's input has ended/);
  assert.deepEqual(await collect(chat), interrupted);
  assert.equal(chat.exitCode, 0);
  assert.ok(await gone([readFileSync(join(dir, "pid"), "utf8").trim()]));
});

test("close after end stops harness, which closes the session the same way", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("hang");
  await promptRead(dir);
  chat.end(); // the hanging turn would run until its timeout
  chat.close();
  assert.deepEqual(await collect(chat), [
    { kind: "error", message: "the session was stopped; the agent is being stopped" },
    ...interrupted.slice(0, 2),
    // A turn the harness cut short ends `error`, not `interrupted`.
    {
      kind: "outcome",
      session_id: sid,
      status: "error",
      metrics: { num_turns: 1, cumulative: true },
      counts: { agent: 1, error: 2 },
      turn: 1,
    },
  ]);
  assert.equal(chat.exitCode, 128 + 15);
  assert.ok(await gone([readFileSync(join(dir, "pid"), "utf8").trim()]));
});

test("a pi session runs its prompts through pi --mode rpc", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir, { backend: "pi", agentBinary: fakeAgent("pi-rpc") });
  chat.prompt("plain");
  chat.end();
  const lines = await collect(chat);
  assert.deepEqual(lines[0], { kind: "agent", text: "plain 1", line: 5 });
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.kind, "outcome");
  assert.equal(chat.exitCode, 0);
  assert.ok(await gone([readFileSync(join(dir, "pid"), "utf8").trim()]));
});

test("a session that cannot start is a HarnessError with harness's exit status and message", { timeout: 60_000 }, async () => {
  const missing = fakeAgent("no-such-agent");
  await assert.rejects(collect(session({ agentBinary: missing })), (error: unknown) => {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.exitCode, 127);
    assert.equal(error.stderr, `harness: ${missing} does not exist\n`);
    return true;
  });
  await assert.rejects(
    collect(session({ harnessBinary: join(await tempDir(), "no-harness") })),
    (error: unknown) => error instanceof HarnessError && error.exitCode === null,
  );
});

test("leaving the loop early stops harness and the agent", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const chat = open(dir);
  chat.prompt("ask"); // the agent then waits for the answer
  for await (const line of chat) {
    assert.deepEqual(line, permission(1, 3));
    break;
  }
  await appears(join(dir, "pid"));
  const pid = readFileSync(join(dir, "pid"), "utf8").trim();
  assert.ok(await gone([pid]), `agent process ${pid} still alive`);
});

test("the options reach the agent: resume through its own --resume", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const argv = join(dir, "argv");
  const chat = open(dir, { resume: "abc-123", model: "opus", idleTimeout: "20s", env: { FAKE_ARGV: argv } });
  chat.prompt("plain");
  chat.end();
  assert.deepEqual(
    (await collect(chat)).map((line) => line.kind),
    ["agent", "outcome"],
  );
  const args = readFileSync(argv, "utf8").split("\n");
  assert.ok(args.includes("--resume=abc-123") && args.includes("--model=opus"), args.join(" "));
});

test("aborting stops harness and the agent, then throws the signal's reason", { timeout: 60_000 }, async () => {
  const dir = await tempDir();
  const controller = new AbortController();
  const chat = open(dir, { signal: controller.signal });
  chat.prompt("ignore"); // a silent turn, whose agent ignores interrupts
  await promptRead(dir);
  const pid = readFileSync(join(dir, "pid"), "utf8").trim();
  const done = collect(chat);
  controller.abort();
  await assert.rejects(done, { name: "AbortError" });
  assert.ok(await gone([pid]), `agent process ${pid} still alive`);
  // An aborted signal refuses a new session at once.
  assert.throws(() => open(dir, { signal: controller.signal }), { name: "AbortError" });
});

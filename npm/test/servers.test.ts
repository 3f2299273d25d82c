// session() through each agent's own server, against its fake in fixtures/fake-agent/: Codex's
// `codex app-server`, opencode's `opencode serve` (HTTP and its event stream) and Gemini CLI's
// ACP mode. Each is a two-turn session with a permission allowed, every line compared, and the
// server gone after the end. Each turn is bounded by `timeout`, each test by its own.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { session, type Line, type SessionOptions } from "../src/index.js";
import { fakeAgent, gone, tempDir } from "./helpers.js";

/** Runs `ask` (its permission allowed) then `plain`, then ends the input. */
async function twoTurns(fake: string, options: SessionOptions): Promise<{ lines: Line[]; pid: string }> {
  const dir = await tempDir();
  const chat = session({
    agentBinary: fakeAgent(fake),
    cwd: dir,
    timeout: "30s",
    ...options,
    env: { FAKE_PID: join(dir, "pid"), ...options.env },
  });
  chat.prompt("ask");
  const lines: Line[] = [];
  for await (const line of chat) {
    lines.push(line);
    if (line.kind === "permission") chat.answer(line.id, "allow");
    else if (line.kind === "outcome" && line.turn === 1) chat.prompt("plain");
    else if (line.kind === "outcome") chat.end();
  }
  assert.equal(chat.exitCode, 0);
  return { lines, pid: readFileSync(join(dir, "pid"), "utf8").trim() };
}

/** The `ask` turn's permission request, as each fake asks it. */
function permission(id: string, tool: string, toolUseId: string, line: number, input: object): Line {
  return {
    kind: "permission",
    id,
    options: ["allow", "allow_always", "deny"],
    command: "touch made.txt",
    expect: [{ kind: "command" }],
    input,
    tool,
    tool_use_id: toolUseId,
    line,
  } as Line;
}

test("codex app-server: two turns, a permission allowed", { timeout: 60_000 }, async () => {
  const { lines, pid } = await twoTurns("codex-app-server", { backend: "codex", permissionMode: "untrusted" });
  const input = {
    command: "/bin/bash -lc 'touch made.txt'",
    cwd: "/w",
    itemId: "cmd-1",
    reason: null,
    threadId: "th-new",
    turnId: "turn-1",
  };
  const tool = { tool: "command_execution", tool_use_id: "cmd-1" };
  assert.deepEqual(lines, [
    permission("0", "command_execution", "cmd-1", 8, input),
    { kind: "command", command: "touch made.txt", exit_code: 0, success: true, ...tool, line: 10 },
    { kind: "agent", text: "made it", line: 11 },
    {
      kind: "outcome",
      session_id: "th-new",
      status: "success",
      final_output: "made it",
      metrics: { num_turns: 1, cumulative: true },
      counts: { agent: 1, command: 1, permission: 1 },
      turn: 1,
    },
    { kind: "agent", text: "plain 2", line: 17 },
    {
      kind: "outcome",
      session_id: "th-new",
      status: "success",
      final_output: "plain 2",
      metrics: {
        input_tokens: 20,
        output_tokens: 10,
        cache_read_input_tokens: 0,
        reasoning_output_tokens: 0,
        num_turns: 2,
        cumulative: true,
      },
      counts: { agent: 1 },
      turn: 2,
    },
  ]);
  assert.ok(await gone([pid]));
});

test("opencode serve: two turns, a permission allowed", { timeout: 60_000 }, async () => {
  const { lines, pid } = await twoTurns("opencode-serve", { backend: "opencode" });
  // PS14: each turn's own steps (two in the first, one in the second), not cumulative.
  const steps = (n: number) => ({
    input_tokens: 10 * n,
    output_tokens: 5 * n,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    reasoning_output_tokens: 0,
    total_cost_usd: 0.001 * n,
    num_turns: n,
  });
  assert.deepEqual(lines, [
    permission("per_1", "bash", "call_1", 5, { command: "touch made.txt" }),
    { kind: "command", command: "touch made.txt", exit_code: 0, success: true, tool: "bash", tool_use_id: "call_1", line: 8 },
    { kind: "agent", text: "done 1", line: 14 },
    {
      kind: "outcome",
      session_id: "ses_fake",
      status: "success",
      final_output: "done 1",
      metrics: steps(2),
      counts: { agent: 1, command: 1, permission: 1 },
      turn: 1,
    },
    { kind: "agent", text: "plain 2", line: 24 },
    {
      kind: "outcome",
      session_id: "ses_fake",
      status: "success",
      final_output: "plain 2",
      metrics: steps(1),
      counts: { agent: 1 },
      turn: 2,
    },
  ]);
  assert.ok(await gone([pid]));
});

test("gemini --acp: two turns, a permission allowed", { timeout: 60_000 }, async () => {
  const { lines, pid } = await twoTurns("acp-session", { backend: "gemini", env: { FAKE_CAPS: "none" } });
  assert.deepEqual(lines, [
    permission("1", "execute", "c1", 6, { command: "touch made.txt" }),
    { kind: "command", command: "touch made.txt", success: true, tool: "execute", tool_use_id: "c1", line: 8 },
    { kind: "agent", text: "made it", line: 9 },
    {
      kind: "outcome",
      session_id: "s1",
      status: "success",
      final_output: "made it",
      metrics: { num_turns: 1, cumulative: true },
      counts: { agent: 1, command: 1, permission: 1 },
      turn: 1,
    },
    { kind: "agent", text: "plain 2", line: 12 },
    {
      kind: "outcome",
      session_id: "s1",
      status: "success",
      final_output: "plain 2",
      metrics: { num_turns: 2, cumulative: true },
      counts: { agent: 1 },
      turn: 2,
    },
  ]);
  assert.ok(await gone([pid]));
});

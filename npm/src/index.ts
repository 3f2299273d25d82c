// The TypeScript client of `harness`: runs coding agents live and normalizes recorded streams
// by driving the `harness` binary (`run` and `normalize --format jsonl`, `classify`), and hands
// out its lines as typed objects. The types of those lines are generated from `harness schema`
// (src/schema.ts); nothing here describes an event by hand.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { harnessBinary } from "./binary.js";
import type { Event, HarnessOutputLine, OutcomeLine } from "./schema.js";

export type * from "./schema.js";
export { harnessBinary, platformPackage, PLATFORMS, type Platform } from "./binary.js";

/** One line `run` and `normalize` hand out: an {@link Event}, and last the {@link OutcomeLine}. */
export type Line = HarnessOutputLine;

/** The backends this version knows; `harness backends` lists them. */
export type Backend = "claude" | "codex" | "opencode" | "gemini" | "pi" | "acp";

/** What {@link run} starts. Only `prompt` is required. */
export interface RunOptions {
  /** The prompt, written to the agent's standard input (never its command line). */
  prompt: string;
  /** The agent to run (default `claude`). */
  backend?: Backend;
  /** The directory the agent works in (default: this process's). */
  cwd?: string;
  /** The model to ask for. */
  model?: string;
  /**
   * Stop the agent (its whole process group) after this long: seconds, or a duration with
   * units (`"90s"`, `"10m"`). The run then ends with an `error` event and the outcome.
   */
  timeout?: number | string;
  /**
   * Aborting stops `harness`, which kills the agent's whole process group; the iterator then
   * throws the signal's reason once `harness` has exited.
   */
  signal?: AbortSignal;
  /** The permission mode to ask for (`harness run --permission-mode`). */
  permissionMode?: string;
  /** The agent's binary (default: `$CLAUDE_BIN` or `claude` on `PATH`, and so on). */
  agentBinary?: string;
  /**
   * For the `acp` backend: the Agent Client Protocol agent's whole command line, one word per
   * element (`["gemini", "--acp"]`); passed to `harness run --agent` quoted, never split again.
   */
  agent?: string[];
  /** Extra arguments for the agent's command line. */
  args?: string[];
  /** Environment variables for the agent. */
  env?: Record<string, string>;
  /** Also hand out `started` events as soon as a tool use is recorded (SPEC L1). */
  started?: boolean;
  /** The `harness` binary (default: {@link harnessBinary}). */
  harnessBinary?: string;
}

/** What {@link normalize} reads a recording with. */
export interface NormalizeOptions {
  /** The backend whose stream it is (default `auto`: detected from the stream). */
  backend?: Backend | "auto";
  /** The working directory for relative paths when the stream names none (C14a, X9). */
  cwd?: string;
  /** The recorded standard error of the run, read after the stream (S10). */
  stderrFile?: string;
  /** Also hand out `started` events (SPEC L1). */
  started?: boolean;
  /** Stops reading: `harness` is stopped and the iterator throws the signal's reason. */
  signal?: AbortSignal;
  /** The `harness` binary (default: {@link harnessBinary}). */
  harnessBinary?: string;
}

/** One part of a shell command as Codex classifies it (`harness classify`; SPEC section 5). */
export type ParsedCommand =
  | { type: "read"; cmd: string; name: string; path: string }
  | { type: "list_files"; cmd: string; path: string | null }
  | { type: "search"; cmd: string; query: string | null; path: string | null }
  | { type: "unknown"; cmd: string };

/** `harness` failed before it could print an outcome: bad options, a missing agent binary... */
export class HarnessError extends Error {
  /** `harness`'s exit status (2 bad usage, 126 agent not executable, 127 agent not found). */
  readonly exitCode: number | null;
  /** What `harness` wrote on standard error. */
  readonly stderr: string;

  constructor(message: string, exitCode: number | null, stderr: string) {
    super(message);
    this.name = "HarnessError";
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/**
 * Runs an agent live: each event as soon as `harness` has it, then the outcome (`kind:
 * "outcome"`, with the agent's `exit_code`). Ending the loop early (`break`, an exception)
 * stops `harness` and with it the agent, as `signal` does.
 *
 * ```ts
 * for await (const line of run({ backend: "codex", prompt: "Fix the test", cwd: "/repo" })) {
 *   if (line.kind === "outcome") console.log(line.status);
 *   else if (line.kind === "command") console.log(line.command, line.exit_code);
 * }
 * ```
 */
export function run(options: RunOptions): AsyncGenerator<Line, void, undefined> {
  const args = ["run", "--format=jsonl"];
  if (options.backend !== undefined) args.push(`--backend=${options.backend}`);
  if (options.cwd !== undefined) args.push(`--cwd=${options.cwd}`);
  if (options.model !== undefined) args.push(`--model=${options.model}`);
  if (options.timeout !== undefined) args.push(`--timeout=${options.timeout}`);
  if (options.permissionMode !== undefined) {
    args.push(`--permission-mode=${options.permissionMode}`);
  }
  if (options.agentBinary !== undefined) args.push(`--binary=${options.agentBinary}`);
  if (options.agent !== undefined) args.push(`--agent=${shellWords(options.agent)}`);
  for (const arg of options.args ?? []) args.push(`--arg=${arg}`);
  for (const [key, value] of Object.entries(options.env ?? {})) {
    args.push(`--env=${key}=${value}`);
  }
  if (options.started === true) args.push("--started");
  // `-`: the prompt comes on standard input, so no text can be read as an option.
  args.push("-");
  return lines(options.harnessBinary, args, options.signal, Readable.from([options.prompt]));
}

/**
 * Normalizes a recorded stream: a file's path, or the bytes of a stream (a `Readable`, or any
 * async iterable of strings or bytes). Each event as soon as its line is read, then the outcome.
 *
 * ```ts
 * for await (const line of normalize("session.jsonl")) console.log(line.kind);
 * ```
 */
export function normalize(
  input: string | AsyncIterable<string | Uint8Array>,
  options: NormalizeOptions = {},
): AsyncGenerator<Line, void, undefined> {
  const args = ["normalize", "--format=jsonl"];
  if (options.backend !== undefined) args.push(`--backend=${options.backend}`);
  if (options.cwd !== undefined) args.push(`--cwd=${options.cwd}`);
  if (options.stderrFile !== undefined) args.push(`--stderr=${options.stderrFile}`);
  if (options.started === true) args.push("--started");
  if (typeof input === "string") {
    args.push("--", input);
    return lines(options.harnessBinary, args, options.signal, undefined);
  }
  args.push("-");
  return lines(options.harnessBinary, args, options.signal, Readable.from(input));
}

/**
 * How Codex classifies a shell command (`harness classify`): a script, or an argv.
 *
 * ```ts
 * await classify("rg -n foo src | head");
 * // [{ type: "search", cmd: "rg -n foo src", query: "foo", path: "src" }]
 * ```
 */
export async function classify(
  script: string | string[],
  options: { harnessBinary?: string } = {},
): Promise<ParsedCommand[]> {
  // One JSON string (a script) or array (an argv) on standard input: nothing is an option.
  const input = Readable.from([`${JSON.stringify(script)}\n`]);
  const child = start(options.harnessBinary, ["classify"], input);
  const [stdout, status] = await Promise.all([text(child.stdout), exited(child)]);
  if (status.error !== undefined || status.code !== 0) {
    throw failure("classify", status, await status.stderr);
  }
  return JSON.parse(stdout) as ParsedCommand[];
}

/** Whether a line is the closing outcome line (a type guard). */
export function isOutcome(line: Line): line is OutcomeLine {
  return line.kind === "outcome";
}

/** Whether a line is an event (a type guard). */
export function isEvent(line: Line): line is Event {
  return line.kind !== "outcome";
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the binary could not be started. */
  error?: Error;
  stderr: Promise<string>;
}

function start(
  binary: string | undefined,
  args: string[],
  input: Readable | undefined,
): ChildProcessWithoutNullStreams {
  const child = spawn(binary ?? harnessBinary(), args, { stdio: ["pipe", "pipe", "pipe"] });
  if (input === undefined) {
    child.stdin.end();
  } else {
    // `harness` may stop reading (it exited, or was stopped): its closed pipe is not an error
    // of ours, and whatever went wrong shows in its exit status.
    pipeline(input, child.stdin).catch(() => {});
  }
  return child;
}

const STDERR_LIMIT = 64 * 1024;

function exited(child: ChildProcessWithoutNullStreams): Promise<Exit> {
  const chunks: Buffer[] = [];
  let kept = 0;
  const stderr = new Promise<string>((resolve) => {
    child.stderr.on("data", (chunk: Buffer) => {
      if (kept < STDERR_LIMIT) {
        chunks.push(chunk);
        kept += chunk.length;
      }
    });
    child.stderr.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    child.stderr.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
  return new Promise((resolve) => {
    child.once("error", (error) => resolve({ code: null, signal: null, error, stderr }));
    child.once("close", (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function failure(what: string, status: Exit, stderr: string): HarnessError {
  if (status.error !== undefined) {
    return new HarnessError(`cannot start harness: ${status.error.message}`, null, stderr);
  }
  const how = status.code !== null ? `exit status ${status.code}` : `signal ${status.signal}`;
  const said = stderr.trim() === "" ? "" : `: ${stderr.trim()}`;
  return new HarnessError(`harness ${what} failed (${how})${said}`, status.code, stderr);
}

async function* lines(
  binary: string | undefined,
  args: string[],
  signal: AbortSignal | undefined,
  input: Readable | undefined,
): AsyncGenerator<Line, void, undefined> {
  signal?.throwIfAborted();
  const child = start(binary, args, input);
  const exit = exited(child);
  const stop = () => {
    child.kill("SIGTERM");
  };
  signal?.addEventListener("abort", stop, { once: true });
  const reader = createInterface({ input: child.stdout, crlfDelay: Infinity });
  let outcome = false;
  try {
    for await (const text of reader) {
      // After an abort, `harness` still prints what it read and the outcome: not ours to hand out.
      if (text === "" || signal?.aborted === true) continue;
      const line = JSON.parse(text) as Line;
      if (line.kind === "outcome") outcome = true;
      yield line;
    }
    const status = await exit;
    signal?.throwIfAborted();
    if (!outcome) throw failure(args[0] ?? "", status, await status.stderr);
  } finally {
    signal?.removeEventListener("abort", stop);
    reader.close();
    if (child.exitCode === null && child.signalCode === null) {
      // The caller stopped early: SIGTERM makes `harness` kill the agent's process group; the
      // closed pipe then ends `harness` at once, whatever it still had to print.
      stop();
      child.stdout.destroy();
      await exit;
    }
  }
}

/**
 * Words as one POSIX shell command line that `harness run --agent` splits back into exactly
 * these words: each in single quotes, a quote inside written `'\''`.
 */
function shellWords(words: string[]): string {
  return words.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
}

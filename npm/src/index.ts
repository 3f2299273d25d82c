// The TypeScript client of `harness`: runs coding agents live, holds sessions with them and
// normalizes recorded streams by driving the `harness` binary (`run`, `session` and `normalize
// --format jsonl`, `classify`), and hands out its lines as typed objects. The types of those
// lines are generated from `harness schema` (src/schema.ts); nothing here describes an event
// by hand.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { harnessBinary } from "./binary.js";
import type { Decision, Event, HarnessOutputLine, OutcomeLine } from "./schema.js";

export type * from "./schema.js";
export { harnessBinary, platformPackage, PLATFORMS, type Platform } from "./binary.js";

/**
 * One line `run`, `normalize` and a {@link Session} hand out: an {@link Event}, or an
 * {@link OutcomeLine} (last for a run; ending each turn of a session, with its `turn`).
 */
export type Line = HarnessOutputLine;

/** The backends this version knows; `harness backends` lists them. */
export type Backend = "claude" | "codex" | "opencode" | "gemini" | "pi" | "qwen" | "copilot" | "acp";

/** What {@link run} starts. Only `prompt` is required. */
export interface RunOptions extends AgentOptions {
  /** The prompt, written to the agent's standard input (never its command line). */
  prompt: string;
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
}

/** What {@link session} starts: {@link run}'s options but the prompt, and a session's own. */
export interface SessionOptions extends AgentOptions {
  /**
   * How long each turn may take: seconds, or a duration with units (`"90s"`, `"10m"`). Past
   * it, an `error` event says so and the session closes, that turn ending `error`.
   */
  timeout?: number | string;
  /** How long a turn may go without a line from the agent; past it, as `timeout`. */
  idleTimeout?: number | string;
  /** A stored session to continue, through the agent's own resume (SPEC I5). */
  resume?: string;
  /**
   * Aborting stops `harness`, which closes the session and stops the agent; the iterator then
   * throws the signal's reason once `harness` has exited.
   */
  signal?: AbortSignal;
}

/** The options {@link run} and {@link session} share: which agent, and how it starts. */
export interface AgentOptions {
  /** The agent to run (default `claude`). */
  backend?: Backend;
  /** The directory the agent works in (default: this process's). */
  cwd?: string;
  /** The model to ask for. */
  model?: string;
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
  const args = ["run", "--format=jsonl", ...agentArgs(options)];
  if (options.timeout !== undefined) args.push(`--timeout=${options.timeout}`);
  // `-`: the prompt comes on standard input, so no text can be read as an option.
  args.push("-");
  return lines(options.harnessBinary, args, options.signal, Readable.from([options.prompt]));
}

/** The `harness run` and `harness session` options of `options`, each as one argument. */
function agentArgs(options: AgentOptions): string[] {
  const args: string[] = [];
  if (options.backend !== undefined) args.push(`--backend=${options.backend}`);
  if (options.cwd !== undefined) args.push(`--cwd=${options.cwd}`);
  if (options.model !== undefined) args.push(`--model=${options.model}`);
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
  return args;
}

/**
 * A live session with an agent (`harness session`): one conversation over several turns. It is
 * an async iterable of the lines `harness` writes: each event as soon as `harness` has it (a
 * `permission` event when the agent asks to use a tool, waiting for {@link Session.answer}),
 * and an outcome line ending each turn, with its `turn` (status `interrupted` for a turn
 * stopped by {@link Session.interrupt}). Iterating to the end waits for `harness` to exit.
 */
export interface Session extends AsyncIterable<Line> {
  /** Starts a turn with `text`, or queues it behind the running turn (one at a time, in order). */
  prompt(text: string): void;
  /**
   * Stops the running turn through the agent's own protocol; the turn ends `interrupted` and
   * the session goes on. With no turn running, a `warning` event says so.
   */
  interrupt(): void;
  /**
   * Answers the permission request `id` (a `permission` event's `id`) with one of the
   * `options` it offered; `message` goes to the agent with a denial. An answer to a request
   * that is not waiting is a `warning` event.
   */
  answer(id: string, decision: Decision, message?: string): void;
  /**
   * Ends the session now: the running turn is interrupted, queued prompts are dropped, the
   * agent is stopped (killed 5 seconds later if it has not ended). After {@link Session.end},
   * when `harness` reads no more commands, it stops `harness` instead, which does the same.
   */
  close(): void;
  /**
   * Ends the input: the queued prompts still run, then the session ends; a permission request
   * from then on is denied, since nobody is left to answer it.
   */
  end(): void;
  /**
   * `harness`'s exit status once the iteration has ended: 0 when the session ended by its
   * input or `close`, 1 when the agent died or a turn ran out of time, 128 + N after signal N;
   * `null` before (or when a signal killed `harness` itself).
   */
  readonly exitCode: number | null;
}

/**
 * Opens a session with an agent (`harness session`; the backends with sessions are `claude`,
 * `codex`, `opencode`, `gemini`, `pi`, `qwen` and `acp`). Nothing is asked of the agent before the first {@link Session.prompt}. Commands never wait; after
 * {@link Session.end} or {@link Session.close}, `prompt`, `interrupt` and `answer` throw, since
 * `harness` reads no more, and once `harness` has exited they do nothing.
 *
 * When `harness` cannot start the session (the agent is missing or not executable, a backend
 * without sessions, a refused option), the iterator throws a {@link HarnessError}. Ending the
 * loop early (`break`, an exception) stops `harness` and with it the agent, as `signal` does;
 * a `signal` already aborted throws its reason at once.
 *
 * ```ts
 * const chat = session({ cwd: "/repo" });
 * chat.prompt("Fix the failing test");
 * for await (const line of chat) {
 *   if (line.kind === "permission") chat.answer(line.id, "allow");
 *   else if (line.kind === "outcome") chat.end();
 * }
 * ```
 */
export function session(options: SessionOptions = {}): Session {
  options.signal?.throwIfAborted();
  const args = ["session", "--format=jsonl", ...agentArgs(options)];
  if (options.timeout !== undefined) args.push(`--timeout=${options.timeout}`);
  if (options.idleTimeout !== undefined) args.push(`--idle-timeout=${options.idleTimeout}`);
  if (options.resume !== undefined) args.push(`--resume=${options.resume}`);
  return new LiveSession(launch(options.harnessBinary, args, options.signal), options.signal);
}

/** {@link Session} over a started `harness session`. */
class LiveSession implements Session {
  #harness: Started;
  #signal: AbortSignal | undefined;
  #inputEnded = false;
  #lines: AsyncGenerator<Line, void, undefined> | undefined;
  #exitCode: number | null = null;

  constructor(harness: Started, signal: AbortSignal | undefined) {
    this.#harness = harness;
    this.#signal = signal;
  }

  get exitCode(): number | null {
    return this.#exitCode;
  }

  prompt(text: string): void {
    this.#send({ type: "prompt", text });
  }

  interrupt(): void {
    this.#send({ type: "interrupt" });
  }

  answer(id: string, decision: Decision, message?: string): void {
    this.#send(
      message === undefined
        ? { type: "permission", id, decision }
        : { type: "permission", id, decision, message },
    );
  }

  close(): void {
    if (this.#inputEnded) {
      // No command reaches `harness` any more: a signal closes the session as `close` does.
      if (running(this.#harness.child)) this.#harness.stop();
      return;
    }
    this.#send({ type: "close" });
    this.end();
  }

  end(): void {
    this.#inputEnded = true;
    this.#harness.child.stdin.end();
  }

  #send(command: object): void {
    if (this.#inputEnded) {
      throw new Error("the session's input has ended (end() or close()): no command reaches it");
    }
    // Once `harness` has exited, nothing is written (and a write racing its exit fails quietly,
    // see `start`): the session is over, and the iteration's end says why.
    if (running(this.#harness.child)) {
      this.#harness.child.stdin.write(`${JSON.stringify(command)}\n`);
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<Line, void, undefined> {
    this.#lines ??= this.#read();
    return this.#lines;
  }

  async *#read(): AsyncGenerator<Line, void, undefined> {
    const status = yield* read(this.#harness, "session", this.#signal, (exit) =>
      exit.error !== undefined || START_FAILURES.includes(exit.code ?? -1),
    );
    this.#exitCode = status.code;
  }
}

/** The exit statuses of `harness` that say the session never started (bad usage, no agent). */
const START_FAILURES = [2, 126, 127];

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

/**
 * Starts `harness` with `args`; `input` goes to its standard input, which `"open"` leaves open
 * for the caller to write.
 */
function start(
  binary: string | undefined,
  args: string[],
  input: Readable | undefined | "open",
): ChildProcessWithoutNullStreams {
  const child = spawn(binary ?? harnessBinary(), args, { stdio: ["pipe", "pipe", "pipe"] });
  // `harness` may stop reading (it exited, or was stopped): its closed pipe is not an error
  // of ours, and whatever went wrong shows in its exit status.
  child.stdin.on("error", () => {});
  if (input === undefined) {
    child.stdin.end();
  } else if (input !== "open") {
    pipeline(input, child.stdin).catch(() => {});
  }
  return child;
}

/** Whether `child` has not exited yet. */
function running(child: ChildProcessWithoutNullStreams): boolean {
  return child.exitCode === null && child.signalCode === null;
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

/** A `harness` started for its lines: the process, its exit, and what stops it. */
interface Started {
  child: ChildProcessWithoutNullStreams;
  exit: Promise<Exit>;
  /** SIGTERM: `harness` kills the agent's process group (a session: closes it) and exits. */
  stop: () => void;
}

/** Starts `harness` with its standard input left open; `signal` stops it. */
function launch(binary: string | undefined, args: string[], signal: AbortSignal | undefined): Started {
  return started(start(binary, args, "open"), signal);
}

function started(child: ChildProcessWithoutNullStreams, signal: AbortSignal | undefined): Started {
  const exit = exited(child);
  const stop = () => {
    child.kill("SIGTERM");
  };
  signal?.addEventListener("abort", stop, { once: true });
  void exit.then(() => signal?.removeEventListener("abort", stop));
  return { child, exit, stop };
}

async function* lines(
  binary: string | undefined,
  args: string[],
  signal: AbortSignal | undefined,
  input: Readable | undefined,
): AsyncGenerator<Line, void, undefined> {
  signal?.throwIfAborted();
  const harness = started(start(binary, args, input), signal);
  // A run or a normalization always ends with its outcome line: without it, `harness` failed.
  yield* read(harness, args[0] ?? "", signal, (_exit, outcome) => !outcome);
}

/**
 * Hands out the lines `harness` writes, then waits for it to exit; throws a {@link HarnessError}
 * when `failed` says the exit is a failure (given whether an outcome line came), and the
 * signal's reason when it was aborted. A caller that stops early stops `harness`.
 */
async function* read(
  harness: Started,
  what: string,
  signal: AbortSignal | undefined,
  failed: (exit: Exit, outcome: boolean) => boolean,
): AsyncGenerator<Line, Exit, undefined> {
  const { child, exit } = harness;
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
    if (failed(status, outcome)) throw failure(what, status, await status.stderr);
    return status;
  } finally {
    reader.close();
    if (running(child)) {
      // The caller stopped early: SIGTERM makes `harness` kill the agent's process group; the
      // closed pipe then ends `harness` at once, whatever it still had to print.
      harness.stop();
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

// handoff-store for OpenCode: `handoff-store install opencode` writes this file into
// .opencode/plugins/ (or ~/.config/opencode/plugins/) with PROGRAM set to its own path, and
// `uninstall opencode` removes it. OpenCode has no SessionStart hook; this plugin is the door
// instead. It runs handoff-store by argument vector, never through a shell, with a hook's JSON
// on stdin, as every other client's hooks do; it never fails a session: a hook that errs, hangs
// (60 s) or prints too much (1 MiB) counts as one that printed nothing.
//
// - Delivery: a session's first model call asks for the handoff (`startup` for the first
//   session of this process, `clear` for one started after it, as `/new` does) and it joins the
//   system prompt of that session's calls from then on; it is asked for once, so it is marked
//   read once. A session this process did not start (resumed) and a sub-agent's get nothing.
// - experimental.session.compacting: the session's messages are written to a private file, the
//   pre-compact hook starts the background writer on it (read-only), and our compaction
//   instructions join output.context.
// - session.compacted confirms the compaction (post-compact, with the compaction's summary for
//   the retention audit); the next call asks again, as after a compaction.
// - tool.execute.after: a shell command or an edit that repeats a dead end or trap of the
//   branch's handoff gets one line appended to the tool's output, once per item and session
//   (the tripwires; the call itself is never held back or changed).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const PROGRAM = "@PROGRAM@";
const LIMIT_MS = 60_000;
const MAX_OUTPUT = 1 << 20;
// A transcript is for the writer its compaction starts, which has an hour at most.
const KEEP_MS = 3600 * 1000;
// The tools a tripwire listens to: those that run a command or write a file.
const TRIP_TOOLS = new Set(["bash", "edit", "write", "multiedit", "apply_patch", "patch"]);

/** Run `handoff-store hook <event> --harness opencode` with `input` on stdin; its stdout. */
function hook(event, input, cwd) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    let child;
    const finish = (text) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(() => {
      child?.kill("SIGKILL");
      finish("");
    }, LIMIT_MS);
    try {
      child = spawn(PROGRAM, ["hook", event, "--harness", "opencode"], {
        cwd,
        shell: false,
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      return finish("");
    }
    child.on("error", () => finish(""));
    child.stdout.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) {
        child.kill("SIGKILL");
        finish("");
      } else chunks.push(chunk);
    });
    child.on("close", () => finish(Buffer.concat(chunks).toString("utf8")));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

/** The context a session-start reply carries (`{"context": …}`), or "". */
function contextOf(reply) {
  try {
    const value = JSON.parse(reply);
    return typeof value?.context === "string" ? value.context : "";
  } catch {
    return "";
  }
}

/**
 * The folder for session transcripts: the user's own, private (0700, whatever it was), never
 * through a link; a relative XDG_STATE_HOME is ignored (it would put transcripts inside the
 * repository). Files older than an hour go. Null when it cannot be made so.
 */
function transcriptFolder() {
  const state = process.env.XDG_STATE_HOME;
  const base = state && isAbsolute(state) ? state : join(homedir(), ".local", "state");
  const dir = join(base, "handoff-store", "opencode");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) return null;
    chmodSync(dir, 0o700);
  } catch {
    return null;
  }
  forgetOld(dir);
  return dir;
}

/** Remove the transcripts older than KEEP_MS (links and all: only our names are there). */
function forgetOld(dir) {
  const now = Date.now();
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {}
  for (const name of names) {
    try {
      if (now - lstatSync(join(dir, name)).mtimeMs > KEEP_MS) rmSync(join(dir, name));
    } catch {}
  }
}

/** A file name for a session id, one per id (`a/b` and `a_b` differ): its safe letters and a hash. */
function transcriptName(sessionID) {
  const id = String(sessionID);
  const safe = id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  const hash = createHash("sha256").update(id).digest("hex").slice(0, 16);
  return `${safe}-${hash}.jsonl`;
}

/** A text of one message part for the writer: what was said, and which tool ran on what. */
function partText(part) {
  if (part?.type === "text" || part?.type === "reasoning") return part.text ?? "";
  if (part?.type === "tool") {
    const state = part.state ?? {};
    const output = typeof state.output === "string" ? state.output.slice(0, 4000) : "";
    return `[tool ${part.tool}] ${JSON.stringify(state.input ?? {})}\n${output}`;
  }
  return "";
}

/** The session's messages, as the client's SDK gives them. */
async function messagesOf(client, sessionID) {
  let res;
  try {
    res = await client.session.messages({ path: { id: sessionID } });
  } catch {
    res = await client.session.messages({ sessionID });
  }
  return Array.isArray(res) ? res : (res?.data ?? []);
}

/** The text of the session's newest compaction summary (its message marked `summary`), or "". */
async function summaryOf(client, sessionID) {
  try {
    const summary = (await messagesOf(client, sessionID))
      .filter((m) => m.info?.role === "assistant" && m.info?.summary === true)
      .pop();
    return (summary?.parts ?? [])
      .filter((p) => p?.type === "text")
      .map((p) => p.text ?? "")
      .join("\n");
  } catch {
    return "";
  }
}

/** The session's messages as JSON lines in a private file; its path, or null. */
async function saveTranscript(client, sessionID) {
  try {
    const messages = await messagesOf(client, sessionID);
    const lines = messages.map((m) =>
      JSON.stringify({
        role: m.info?.role ?? "unknown",
        text: (m.parts ?? []).map(partText).filter(Boolean).join("\n"),
      }),
    );
    const dir = transcriptFolder();
    if (!dir) return null;
    const file = join(dir, transcriptName(sessionID));
    // A new file of our own (0600, never one that was there), renamed over the name: a link
    // planted there is replaced, never followed.
    const temp = join(dir, `.${randomBytes(8).toString("hex")}.tmp`);
    writeFileSync(temp, lines.join("\n") + "\n", { mode: 0o600, flag: "wx" });
    renameSync(temp, file);
    return file;
  } catch {
    return null;
  }
}

export const HandoffStore = async ({ client, directory }) => {
  // Sessions this process started: the source to ask with, and the delivery once asked.
  const sessions = new Map();
  let first = true;
  return {
    event: async ({ event }) => {
      const props = event?.properties ?? {};
      if (event?.type === "session.created") {
        const info = props.info ?? {};
        if (info.parentID) return;
        sessions.set(info.id ?? props.sessionID, { source: first ? "startup" : "clear" });
        first = false;
      }
      // A transcript is kept no longer than its writer needs it, compaction or not.
      if (event?.type === "session.created" || event?.type === "session.compacted") {
        transcriptFolder();
      }
      if (event?.type === "session.compacted" && props.sessionID) {
        // The summary goes with it, for the retention audit.
        const summary = await summaryOf(client, props.sessionID);
        await hook(
          "post-compact",
          { session_id: props.sessionID, cwd: directory, compact_summary: summary || undefined },
          directory,
        );
        if (sessions.has(props.sessionID)) sessions.set(props.sessionID, { source: "compact" });
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const session = sessions.get(input?.sessionID);
      if (!session || !Array.isArray(output?.system)) return;
      // OpenCode's title call carries the session too; it is no place for a handoff.
      if (String(output.system[0] ?? "").startsWith("You are a title generator")) return;
      session.asked ??= hook(
        "session-start",
        { session_id: input.sessionID, cwd: directory, source: session.source },
        directory,
      ).then(contextOf);
      const text = await session.asked;
      if (text) output.system.push(text);
    },
    "tool.execute.after": async (input, output) => {
      if (!TRIP_TOOLS.has(input?.tool) || typeof output?.output !== "string") return;
      const text = contextOf(
        await hook(
          "post-tool-use",
          {
            session_id: input.sessionID,
            cwd: directory,
            tool_name: input.tool,
            tool_input: input.args ?? {},
          },
          directory,
        ),
      );
      if (text) output.output += `\n\n${text}`;
    },
    "experimental.session.compacting": async (input, output) => {
      const transcript = await saveTranscript(client, input?.sessionID);
      const text = await hook(
        "pre-compact",
        { session_id: input?.sessionID, cwd: directory, transcript_path: transcript },
        directory,
      );
      if (text.trim() && Array.isArray(output?.context)) output.context.push(text);
    },
  };
};

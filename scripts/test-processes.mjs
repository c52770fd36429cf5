// Which test files share a process, and the entry modules that run a shared group (docs/testing.md).
// A test file under one of SHARED_DIRS runs in a process with other files of its directory unless
// it must have a process of its own: it carries the marker comment `// test-process: own`, or it,
// or a helper under test/ it imports (followed through its imports), matches one of PROCESS_STATE,
// the patterns of code that changes or measures the process. Every other file runs alone, as
// node --test runs a file.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { compiledTest } from "./build-tests.mjs";

/**
 * The directories whose files share processes by default: in-process tests, and servers started in
 * the test's own process on ports it picks (no child process, no signal, no environment of its own).
 */
export const SHARED_DIRS = ["test/unit", "test/services", "test/store", "test/rest", "test/e2e", "test/reliability"];

/** The most files one shared process runs (more files, fewer processes; fewer files, finer balance over --test-concurrency). */
export const GROUP_SIZE = 8;

/** The comment that gives a file a process of its own, for state the patterns cannot see. */
export const OWN_PROCESS_MARKER = "test-process: own";

/** Code that changes or measures the whole process, each with the reason a match gives a file its own process. */
export const PROCESS_STATE = [
  [/process\.env(\.\w+|\[[^\]]+\])?\s*(\?\?|\|\||&&|\+)?=(?!=)|delete\s+process\.env|Object\.assign\(\s*process\.env\b/, "writes process.env"],
  [/process\.(on|once|off|addListener|prependListener|removeListener|removeAllListeners|emit)\(/, "handles process events"],
  [/process\.(exit|exitCode|chdir|kill|umask|abort)\b/, "exits, signals or moves the process"],
  [
    /setGlobalDispatcher|\b(globalThis|global|console|process\.(stdout|stderr))\.\w+\s*(\?\?|\|\|)?=(?!=)|defineProperty\(\s*(globalThis|process|console)\b/,
    "replaces a global",
  ],
  [/\bmock\.(timers|method|getter|setter|property)\b/, "mocks timers or another module's functions"],
  [/setFlagsFromString|memoryUsage|resourceUsage|cpuUsage|\bgc\(\)/, "sets V8 flags or measures the process's memory or CPU"],
  [/import\s*\{[^}]*\b(spawn|fork|exec|execFile)\b(?!Sync)[^}]*\}\s*from\s*"node:child_process"|new Worker\(/, "starts child processes or threads"],
  [/\bsetInterval\(/, "starts an interval timer"],
];

/** The source files under test/ that `path` imports by a relative specifier (`../support/x.js` -> test/support/x.ts). */
function localImports(path, text) {
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) => match[1]);
  return specifiers
    .map((specifier) => relative(".", resolve(dirname(path), specifier.replace(/\.js$/, ".ts"))))
    .filter((source) => source.startsWith(`test${sep}`) && statSync(source, { throwIfNoEntry: false })?.isFile());
}

/** Why `path` needs a process of its own (the file, the pattern's reason), or undefined when it may share one. */
export function ownProcessReason(path, seen = new Set()) {
  if (seen.has(path)) return undefined;
  seen.add(path);
  const text = readFileSync(path, "utf8");
  if (text.includes(OWN_PROCESS_MARKER)) return `${path}: marked "${OWN_PROCESS_MARKER}"`;
  const state = PROCESS_STATE.find(([pattern]) => pattern.test(text));
  if (state) return `${path}: ${state[1]}`;
  for (const helper of localImports(path, text)) {
    const reason = ownProcessReason(helper, seen);
    if (reason) return reason;
  }
  return undefined;
}

/**
 * Splits test sources into the files that run alone (each with the reason, or none outside
 * SHARED_DIRS) and the groups that share a process: per directory, in the order given, at most
 * GROUP_SIZE files each, the directory's files dealt round-robin so the groups come out even.
 */
export function planProcesses(sources) {
  const alone = [];
  const byDir = new Map();
  for (const source of sources) {
    const dir = SHARED_DIRS.find((shared) => dirname(source).split(sep).join("/") === shared);
    const reason = dir ? ownProcessReason(source) : undefined;
    if (!dir || reason) alone.push({ source, reason });
    else byDir.set(dir, [...(byDir.get(dir) ?? []), source]);
  }
  const groups = [...byDir].flatMap(([dir, files]) => {
    const count = Math.ceil(files.length / GROUP_SIZE);
    const dealt = Array.from({ length: count }, () => []);
    files.forEach((file, index) => dealt[index % count].push(file));
    return dealt.map((members, index) => ({ name: `${dir.slice("test/".length)}-${index + 1}`, members }));
  });
  // A lone file is started as it is: an entry module for one file would only add a suite around it.
  return {
    alone: [...alone, ...groups.filter((group) => group.members.length === 1).map((group) => ({ source: group.members[0] }))],
    groups: groups.filter((group) => group.members.length > 1),
  };
}

/** The specifier of `path` from a module in `dir` (`../unit/x.test.js`). */
function specifier(dir, path) {
  const url = relative(dir, path).split(sep).join("/");
  return url.startsWith(".") ? url : `./${url}`;
}

/** Writes the entry module of each group under dist/test/groups/ and returns its path. */
export function writeGroupEntries(groups) {
  const dir = join("dist", "test", "groups");
  mkdirSync(dir, { recursive: true });
  return groups.map(({ name, members }) => {
    const entry = join(dir, `${name}.js`);
    const files = members.map((source) => [source, specifier(dir, compiledTest(source))]);
    const harness = specifier(dir, join("scripts", "shared-process.mjs"));
    writeFileSync(
      entry,
      `import { runInOneProcess } from ${JSON.stringify(harness)};\n` +
        `await runInOneProcess([\n${files.map(([name, url]) => `  [${JSON.stringify(name)}, new URL(${JSON.stringify(url)}, import.meta.url).href],`).join("\n")}\n]);\n`,
    );
    return entry;
  });
}

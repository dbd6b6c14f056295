// What Linux says of a process (/proc): the CPU it used, its memory, its open files; and of the machine, how busy its
// cores were. Read at the start and end of the measured window; the difference is what the window cost.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second, in which /proc counts CPU time. */
export const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** The fields of /proc/<pid>/stat after the command's name (which may hold spaces): field 3 is index 0. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** User and system CPU of the process itself, in clock ticks (0 once it is gone). */
export function cpuTicks(pid: number): number {
  const f = statFields(pid);
  return f ? Number(f[11]) + Number(f[12]) : 0;
}

/** The CPU of a process and of its children: those waited for (cutime, cstime) and those alive. */
export function cpuTicksOfTree(pid: number): number {
  const f = statFields(pid);
  if (!f) return 0;
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const child = statFields(Number(name));
    if (child && Number(child[1]) === pid) ticks += Number(child[11]) + Number(child[12]);
  }
  return ticks;
}

/** Resident memory in bytes (0 once it is gone). */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** File descriptors open in the process. */
export function openFiles(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Every core's ticks so far, and those spent idle (or waiting on I/O). */
export function machineTicks(): { total: number; idle: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  return { total: values.reduce((a, b) => a + b, 0), idle: values[3]! + values[4]! };
}

/** The file-descriptor limit this process (and the ones it starts) may open. */
export function openFilesLimit(): number {
  const match = /Max open files\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"));
  return match ? Number(match[1]) : Number.NaN;
}

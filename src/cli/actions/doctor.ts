// `todo-continuation doctor`: the plugin's and the database's health in one look — whether the plugin runs in this
// project and with which options (and why not), the configuration files, then file or server, schema, integrity, who
// is alive, the fleet's servers, countdowns and continuations that look stuck. Exit 1 when a check fails.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { isPostgresUrl } from "../../store/open/location.js";
import { databasePath, openForReading, requireSqliteDriver, shownLocation } from "../database.js";
import type { GlobalOptions } from "../output.js";
import { examine, findingsOf } from "./doctor-database.js";
import { channelReports, noticeFindings, noticeSetup, statusWithoutSecrets } from "./doctor-notices.js";
import { examinePlugin, missingDatabase } from "./doctor-plugin.js";
import { printWithDatabase, printWithoutDatabase } from "./doctor-report.js";

export interface DoctorOptions {
  directory: string;
}

export async function doctor({ directory }: DoctorOptions, { db, json }: GlobalOptions): Promise<void> {
  const examined = examinePlugin(resolve(directory));
  const notices = noticeSetup(examined.directory, examined.status, examined.files);
  // Doctor shows the options the plugin runs with: the notify channels' without their URLs' paths and secrets.
  const plugin = { ...examined, status: statusWithoutSecrets(examined.status) };
  const location = databasePath(db);
  const path = shownLocation(location);
  // Before the plugin has written a file there is nothing to open, yet the driver the CLI needs may be missing.
  if (!isPostgresUrl(location)) await requireSqliteDriver();
  if (!isPostgresUrl(location) && !existsSync(location)) {
    const channels = channelReports(notices, []);
    const findings = [
      ...plugin.findings,
      ...noticeFindings(notices, channels, plugin.status),
      missingDatabase(path, plugin),
    ];
    printWithoutDatabase({ plugin, notices, findings }, channels, json);
    process.exitCode = 1;
    return;
  }
  const store = await openForReading(location);
  const now = Date.now();
  try {
    const x = await examine(store, notices);
    const findings = [
      ...plugin.findings,
      ...findingsOf(x, now),
      ...noticeFindings(notices, x.noticeChannels, plugin.status),
    ];
    printWithDatabase({ plugin, notices, findings }, path, x, now, json);
    if (findings.some((f) => f.level === "fail")) process.exitCode = 1;
  } finally {
    await store.close();
  }
}

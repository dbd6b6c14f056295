// The engine's parts over the test's own file (engine-context's useTestFiles), built and wired by parts.ts exactly as
// the enforcer builds them, for the tests of one part among the others; what they leave running (queued attempts,
// start watches, the lease loop, timers) is stopped after each test.
import { join } from "node:path";
import { afterEach } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import type { NoticeChannels } from "../../src/engine/notice-sender.js";
import { buildParts, type EngineParts } from "../../src/engine/parts.js";
import { folder, liveOwner, makeContext, store, type TestContext, useTestFiles } from "./engine-context.js";
import { testConfig } from "./engine-fixture.js";
import { FakeHost } from "./fake-host.js";

export interface PartsRig {
  ctx: TestContext;
  host: FakeHost;
  parts: EngineParts;
}

const built: PartsRig[] = [];

export interface PartsOptions {
  config?: Partial<Config>;
  host?: FakeHost;
  owner?: string;
  /** Sessions remembered at most (parts.ts MEMORY_CAP by default). */
  memoryCap?: number;
  /** Where notices go (none by default). */
  noticeChannels?: NoticeChannels;
  /** False: the owner is the caller's to keep alive (a fleet replica's engines). */
  keepsOwner?: boolean;
}

/** A fresh file for every test of the file (fake time from START), and the parts built in each stopped after it. */
export function useParts(): void {
  useTestFiles();
  afterEach(() => {
    for (const { ctx, parts } of built.splice(0)) {
      // Not waited for: a test may leave a round stuck behind a gate it never opens.
      void parts.sender.stop();
      void parts.retention.stop();
      void parts.leases.stop();
      parts.queue.stopQueued();
      parts.starts.clear();
      ctx.timers.stop();
    }
  });
}

/** The parts over this test's file, on a FakeHost (given, or a fresh one). */
export function buildPartsRig(options: PartsOptions = {}): PartsRig {
  const host = options.host ?? new FakeHost();
  const config = testConfig(join(folder, "state.db"), options.config);
  const ctx = makeContext({ store, config, owner: options.owner ?? liveOwner(), host });
  const rig = {
    ctx,
    host,
    parts: buildParts(ctx, {
      memoryCap: options.memoryCap,
      noticeChannels: options.noticeChannels,
      keepsOwner: options.keepsOwner,
    }),
  };
  built.push(rig);
  return rig;
}

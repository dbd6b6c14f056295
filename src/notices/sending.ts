// The channels as the engine's sender takes them (engine/notice-sender.ts `NoticeChannels`): the `notify` option
// checked once at start, each problem said where the person looks (the caller's `report`: the plugin's status and
// toast, the service's log), and the channels that are valid kept — a wrong one never costs the others their notices.
import type { Notice } from "../core/notices.js";
import { parseChannels } from "./channels.js";
import { deliverNotice } from "./deliver.js";
import type { Channel, DeliveryResult } from "./types.js";

export interface SendingChannels {
  readonly channels: readonly Channel[];
  deliver(channel: string, notice: Notice): Promise<DeliveryResult>;
}

/** The channels of `notify`, each problem reported as one line ("a notify channel is left out: …"). */
export function channelsFrom(
  notify: unknown,
  directory: string,
  report: (problem: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): SendingChannels {
  const { channels, problems } = parseChannels(notify, env, directory);
  for (const problem of problems) report(`a notify channel is left out: ${problem}`);
  return sendingTo(channels);
}

export function sendingTo(channels: readonly Channel[], fetchImpl: typeof fetch = fetch): SendingChannels {
  const byName = new Map(channels.map((channel) => [channel.name, channel]));
  return {
    channels,
    deliver: (name, notice) => {
      const channel = byName.get(name);
      if (!channel) return Promise.resolve({ ok: false, retryable: false, error: `no channel is named ${name}` });
      return deliverNotice(channel, notice, fetchImpl);
    },
  };
}

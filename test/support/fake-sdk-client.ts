// The slice of the @opencode-ai/sdk v1 client the plugin uses, answering from a FakeHost with OpenCode 1.18.33's
// shapes ({ data } results, `{info, parts}` messages): enough to drive the real plugin function in-process.
import type { FakeHost } from "./fake-host.js";

type Opts = {
  path?: { id?: string };
  query?: { limit?: number };
  body?: Record<string, unknown>;
  signal?: AbortSignal;
};

export function fakeSdkClient(host: FakeHost) {
  const signal = (o?: Opts) => o?.signal ?? new AbortController().signal;
  const ok = async <T>(work: () => Promise<T>) => ({ data: await work() });
  return {
    session: {
      todo: (o: Opts) => ok(() => host.getTodos(o.path!.id!, signal(o))),
      messages: (o: Opts) =>
        ok(async () =>
          (await host.getMessages(o.path!.id!, signal(o), o.query?.limit)).map((m) => ({
            info: {
              id: m.id,
              role: m.role,
              agent: m.agent,
              time: { created: m.createdAt, completed: m.completedAt },
              model:
                m.role === "user" ? { providerID: m.providerId, modelID: m.modelId, variant: m.variant } : undefined,
              error: m.error
                ? {
                    name: m.error.name,
                    data: {
                      message: m.error.message ?? "",
                      statusCode: m.error.statusCode,
                      isRetryable: m.error.isRetryable,
                    },
                  }
                : undefined,
            },
            parts: m.parts.map((p) => ({
              type: p.type,
              text: p.text,
              synthetic: p.synthetic,
              tool: p.tool,
              state: p.toolStatus ? { status: p.toolStatus } : undefined,
            })),
          })),
        ),
      get: (o: Opts) => ok(async () => ({ id: o.path!.id, parentID: (await host.getSession(o.path!.id!))?.parentId })),
      children: (o: Opts) =>
        ok(async () => (await host.getChildren(o.path!.id!)).map((c) => ({ id: c.id, parentID: c.parentId }))),
      status: () =>
        ok(async () =>
          Object.fromEntries(
            Object.entries(await host.getStatuses(new AbortController().signal)).map(([id, type]) => [id, { type }]),
          ),
        ),
      promptAsync: (o: Opts) =>
        ok(async () => {
          const body = o.body as {
            parts: Array<{ text: string; synthetic?: boolean }>;
            messageID?: string;
            agent?: string;
            model?: { providerID: string; modelID: string };
          };
          const display = body.parts.length > 1 ? body.parts.find((p) => !p.synthetic)?.text : undefined;
          await host.prompt(
            {
              sessionId: o.path!.id!,
              messageId: body.messageID,
              text: body.parts[0]!.text,
              display,
              agent: body.agent,
              model: body.model ? { providerId: body.model.providerID, modelId: body.model.modelID } : undefined,
            },
            signal(o),
          );
        }),
    },
    app: {
      agents: () =>
        ok(async () =>
          (await host.getAgents()).map((a) => ({
            name: a.name,
            permission: a.canWrite === false ? [{ permission: "edit", pattern: "*", action: "deny" }] : [],
          })),
        ),
      log: (o: Opts) =>
        ok(async () => host.log((o.body as { level: "info" }).level, String((o.body as { message: string }).message))),
    },
    tui: {
      showToast: (o: Opts) =>
        ok(async () => {
          // As OpenCode 1.18.33 validates it: a duration that is not a whole number of milliseconds is a 400.
          const duration = o.body?.duration;
          if (duration !== undefined && !Number.isInteger(duration))
            throw new Error(`400 Bad Request: Expected an integer, got ${String(duration)} at ["duration"]`);
          return host.toast(o.body as never);
        }),
    },
  };
}

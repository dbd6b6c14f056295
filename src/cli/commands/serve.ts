import { InvalidArgumentError, type Command } from "commander";
import { LOG_FORMATS, type LogFormat } from "../../service/log.js";
import { parseListen, type Listen } from "../../service/status-server.js";
import { examples } from "../output.js";

export function listenArg(value: string): Listen {
  try {
    return parseListen(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function logFormatArg(value: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`one of ${LOG_FORMATS.join(", ")}.`);
  return value as LogFormat;
}

export function serveCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation serve --url http://127.0.0.1:4096",
        "todo-continuation serve --db postgres://tc@db.internal/tc --listen 127.0.0.1:9464 --log-format json",
      ),
    )
    .description(
      "enforce from outside OpenCode: follow a running `opencode serve` over HTTP (--url), or, on PostgreSQL without --url, " +
        "be one replica of a fleet that shares the servers listed by `todo-continuation servers add`",
    )
    .option("--url <url>", "the OpenCode server, e.g. http://127.0.0.1:4096 (omit for fleet mode)")
    .option("--directory <dir>", "the project directory whose sessions to follow", process.cwd())
    .option("--name <server>", "name this server in the rows, when one database serves several (default: none)")
    .option("--username <name>", "basic-auth user (default: $OPENCODE_SERVER_USERNAME, else opencode)")
    .option("--password <password>", "basic-auth password (default: $OPENCODE_SERVER_PASSWORD)")
    .option("--options <json>", "enforcer options as JSON, as in the plugin entry (e.g. '{\"countdownSeconds\":3}')")
    .option(
      "--silence-timeout <seconds>",
      "replace an event stream that sent nothing for this long, heartbeats included (default 30)",
    )
    .option(
      "--listen <[host]:port>",
      "serve /healthz, /livez, /readyz, /metrics (Prometheus) and the page (/) there; loopback unless a host is given",
      listenArg,
    )
    .option(
      "--dashboard-token <token>",
      "the page's access token on an address other than loopback (default: $TODO_CONTINUATION_DASHBOARD_TOKEN)",
    )
    .option(
      "--log-format <format>",
      `the log on stderr: ${LOG_FORMATS.join(" or ")}`,
      logFormatArg,
      "text" as LogFormat,
    );
}

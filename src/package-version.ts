// The package's version, read from its package.json: one folder up from src/ and from dist/ alike.
import { createRequire } from "node:module";

export const PACKAGE_VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version;

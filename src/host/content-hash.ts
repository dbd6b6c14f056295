// One hash for one file content, the same whether it comes from a tool call's arguments or from the disk: text is
// compared without a byte-order mark and with Windows line ends as Unix ones (what editors and formatters flip back
// and forth without changing a file); anything with a NUL byte is compared byte for byte.
import { createHash } from "node:crypto";

const digest = (data: string | Uint8Array) => createHash("sha256").update(data).digest("base64url").slice(0, 22);

export function textHash(text: string): string {
  return digest(text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n"));
}

/** Looks for a NUL in the first 8 KiB, as git does, to tell binary files from text. */
export function contentHash(bytes: Uint8Array): string {
  if (bytes.subarray(0, 8192).includes(0)) return `b:${digest(bytes)}`;
  return textHash(new TextDecoder().decode(bytes));
}

import { isIP } from "node:net";

/** A name or address of this machine only. */
export function isLoopback(host: string): boolean {
  if (host === "localhost" || host === "::1") return true;
  return isIP(host) === 4 && host.startsWith("127.");
}

/** The host part of a Host header (`127.0.0.1:7474`, `[::1]:7474`, `localhost`). */
export function hostOf(header: string | undefined): string {
  if (header === undefined) return "";
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  return header.replace(/:\d+$/, "");
}

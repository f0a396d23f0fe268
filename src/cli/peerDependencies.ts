/**
 * Loads a module (a command, or an optional package). When a package it needs is missing, the error says which one to install:
 * discord.js and @statelyai/inspect are optional peer dependencies, so a gateway that only embeds the
 * runtime does not get them.
 */
export async function loadPeer<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    const missing =
      code === "ERR_MODULE_NOT_FOUND" && typeof message === "string"
        ? /Cannot find package '([^']+)'/.exec(message)?.[1]
        : undefined;
    if (missing === undefined) throw error;
    throw new Error(`this command needs ${missing}, which is not installed: npm install ${missing}`, {
      cause: error,
    });
  }
}

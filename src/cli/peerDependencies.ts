/** Loads a module; when a package it needs is missing (discord.js, @statelyai/inspect and pg are optional peers), says which to install. */
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

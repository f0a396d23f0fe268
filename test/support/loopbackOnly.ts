import { connect } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * Whether a connection to `port` on this machine's first non-loopback IPv4 address is refused;
 * `undefined` when the machine has none (nothing elsewhere can reach it then anyway).
 */
export async function refusedFromNetwork(port: number): Promise<boolean | undefined> {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === "IPv4" && !a.internal);
  if (external === undefined) return undefined;
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, external.address);
    socket.on("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.on("error", () => resolve(true));
  });
}

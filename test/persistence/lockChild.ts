// A process that takes the state-directory lock, for the process tests (stateDirLock.process.test.ts).
//
//   node --import tsx test/persistence/lockChild.ts hold <dir>
//     acquires the lock, prints {"held":<pid as this process sees it>} and waits to be killed.
//   node --import tsx test/persistence/lockChild.ts race <dir>     (with an IPC channel)
//     on {"acquire":n}: calls acquireStateDirLock from scratch and answers {"round":n,"held":true}
//     or {"round":n,"held":false,"pid":<the pid the refusal names>}; on {"release":n}: releases,
//     answers {"round":n,"released":true}.
import { acquireStateDirLock, StateDirLockedError, type StateDirLock } from "../../src/persistence/index.js";

type Message = { acquire: number } | { release: number };

const [mode, dir] = process.argv.slice(2);
if (dir === undefined || (mode !== "hold" && mode !== "race")) {
  throw new Error("usage: lockChild.ts hold|race <dir>");
}

if (mode === "hold") {
  await acquireStateDirLock(dir);
  process.stdout.write(`${JSON.stringify({ held: process.pid })}\n`);
  setInterval(() => {}, 60_000); // held until killed
} else {
  let lock: StateDirLock | undefined;
  const send = (message: object) => process.send?.(message);
  process.on("message", (message: Message) => {
    void (async () => {
      if ("acquire" in message) {
        try {
          lock = await acquireStateDirLock(dir);
          send({ round: message.acquire, held: true });
        } catch (error) {
          if (!(error instanceof StateDirLockedError)) throw error;
          send({ round: message.acquire, held: false, pid: error.pid ?? null });
        }
      } else {
        await lock?.release();
        lock = undefined;
        send({ round: message.release, released: true });
      }
    })();
  });
  send({ ready: true });
}

import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { terminalIO } from "../../src/cli/terminal.js";

function fakeStream(columns = 40) {
  const written: string[] = [];
  const stream = { columns, write: (chunk: string) => written.push(chunk) } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written.join("") };
}

describe("terminalIO", () => {
  it("keeps the status line below ordinary lines, redrawn in place and cut to the terminal's width", () => {
    const out = fakeStream(20);
    const err = fakeStream();
    const io = terminalIO(out.stream, err.stream);
    io.out("first");
    io.status("⏱ 1/8 scenarios done");
    io.out("second");
    io.err("oops");
    io.status("");
    io.out("third");
    expect(out.text()).toBe(
      "first\n" +
        "⏱ 1/8 scenarios don" + // 19 of 20 columns
        "\r\x1b[2Ksecond\n⏱ 1/8 scenarios don" +
        "\r\x1b[2K⏱ 1/8 scenarios don" +
        "\r\x1b[2K" +
        "third\n",
    );
    expect(err.text()).toBe("oops\n");
  });

  it("writes text in pieces as is, the status line removed first: it cannot be drawn mid-line", async () => {
    const written: string[] = [];
    const stdout = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written.push(chunk.toString());
          done();
        },
      }),
      { columns: 40 },
    ) as unknown as NodeJS.WriteStream;
    const io = terminalIO(stdout, fakeStream().stream);
    io.status("working");
    expect(await io.write('{\n  "a": ')).toBe(true);
    expect(await io.write("1\n}\n")).toBe(true);
    io.out("done");
    expect(written.join("")).toBe('working\r\x1b[2K{\n  "a": 1\n}\ndone\n');
  });
});

#!/usr/bin/env node
import { streamWrite } from "./io.js";
import { main } from "./main.js";
import { terminalIO } from "./terminal.js";

const io = process.stdout.isTTY ? terminalIO(process.stdout, process.stderr) : undefined;
const write = io?.write ?? streamWrite(process.stdout);
process.exitCode = await main(process.argv.slice(2), io?.out, io?.err, io?.status, write);

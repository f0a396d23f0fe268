/* eslint-disable @typescript-eslint/no-require-imports -- this file is what CommonJS consumers write */
// CommonJS-style imports of the package (an ES module), which TypeScript allows under
// `module: nodenext` from 5.8 on, and Node runs from 20.19 on (`require()` of an ES module).
import a2a = require("a2a-statecharts");
import discord = require("a2a-statecharts/discord");
import testing = require("a2a-statecharts/testing");
import djs = require("discord.js");

const config: a2a.A2AConfigInput = { agents: { alpha: { discordBotId: "1500000000000000101" } } };
const port: a2a.DiscordPort = discord.createDiscordJsPort({ alpha: new djs.Client({ intents: [] }) });
const runtime: a2a.A2ARuntime = a2a.createA2ARuntime({ stateDir: "state", config, discord: port });
const token: string = testing.emulatorToken("1500000000000000101");

export { runtime, token };

// The layers of src/ and what each may import, checked by `npm run lint` (docs/architecture.md draws
// them). Two columns meet in the runtime: the A2A domain (machines on policies) and the generic durable
// host (durable on persistence), which knows nothing of A2A. Above the runtime: the Discord edge, then
// what tests use, the inspector and the CLI.
/** Which layers each layer may import besides itself; errors/ (the error base) is open to all. */
const MAY_IMPORT = {
  errors: [],
  policies: [],
  machines: ["policies"],
  persistence: [],
  durable: ["persistence"],
  runtime: ["durable", "persistence", "machines", "policies"],
  discord: ["runtime", "durable", "persistence", "machines", "policies"],
  testing: ["discord", "runtime", "durable", "persistence", "machines", "policies"],
  inspector: ["testing", "discord", "runtime", "durable", "persistence", "machines", "policies"],
  cli: ["inspector", "testing", "discord", "runtime", "durable", "persistence", "machines", "policies"],
};
const LAYERS = Object.keys(MAY_IMPORT);

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...LAYERS.map((layer) => {
      const others = LAYERS.filter((l) => l !== layer && l !== "errors" && !MAY_IMPORT[layer].includes(l));
      return {
        name: `layer-${layer}`,
        comment: `src/${layer} may import only ${[...MAY_IMPORT[layer], "errors"].join(", ")}`,
        severity: "error",
        from: { path: `^src/${layer}/` },
        to: { path: `^src/(${others.join("|")})/` },
      };
    }),
    {
      name: "durable-host-through-its-entry-point",
      comment:
        "The runtime and the layers above use the durable host as any user does: through a2a-statecharts/durable (its timers aside).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/durable/" },
      to: { path: "^src/durable/", pathNot: "^src/durable/(index|timers)\\.ts$" },
    },
    {
      name: "no-circular",
      comment: "No import cycle in src/: each module can be read after what it imports.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "machines-hold-no-io",
      comment:
        "Machines are pure setup() definitions: files, sockets, processes, databases and Discord come in as provided actors.",
      severity: "error",
      from: { path: "^src/(machines|policies)/" },
      to: {
        dependencyTypes: ["core", "npm", "npm-dev", "npm-optional", "npm-peer"],
        path: "^(node:)?(fs|fs/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|readline)$|node_modules/(pg|lowdb|discord\\.js|@discordjs|ws|@statelyai)/",
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".js"],
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "default"],
    },
    includeOnly: "^src/|^node_modules/|^(node:)?[a-z_/]+$",
  },
};

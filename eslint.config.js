// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Layers import downward only (ARCHITECTURE.md): cli → inspector → testing → discord → runtime → durable →
// persistence → machines → services.
const LAYERS = [
  "services",
  "machines",
  "persistence",
  "durable",
  "runtime",
  "discord",
  "testing",
  "inspector",
  "cli",
];
const layerRules = LAYERS.map((layer, index) => ({
  files: [`src/${layer}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: LAYERS.slice(index + 1).map((above) => ({
          group: [`**/${above}/*`, `**/${above}/**`, `**/${above}/index.js`],
          message: `src/${layer} may not import from src/${above}: layers import downward only.`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ["dist/", "packages/*/dist/", "coverage/", "node_modules/", "docs/", "scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { console: "readonly", process: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  ...layerRules,
  {
    // The OpenClaw plugin is a consumer of the library: its public entry points only.
    files: ["packages/openclaw/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["../../*", "../../**", "a2a-statecharts/src/**", "a2a-statecharts/dist/**"],
              message: "packages/openclaw imports a2a-statecharts by its public entry points only.",
            },
          ],
        },
      ],
    },
  },
);

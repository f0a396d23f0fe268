import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// What each entry point of the package loads when imported, read from the source: every static
// `import`/`export … from` that survives compilation (type-only ones are erased), followed through
// our own files. Dynamic `import()` loads later, on use, so it is not followed.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | { types: string; default: string }>;
  peerDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};

/** `./dist/discord/index.js` → `src/discord/index.ts`. */
function sourceOf(entry: string): string {
  const target = pkg.exports[entry];
  if (typeof target !== "object") throw new Error(`package.json exports ${entry} has no conditions`);
  return join(ROOT, target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));
}

function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      if (statement.importClause?.isTypeOnly === true) continue;
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
      if (statement.isTypeOnly) continue;
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers;
}

/** Every file of ours and every package or builtin that importing `entry` (or a file of src/) loads. */
function loadedBy(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else
        packages.add(
          specifier
            .split("/")
            .slice(0, specifier.startsWith("@") ? 2 : 1)
            .join("/"),
        );
    }
  };
  visit(entry.startsWith("src/") ? join(ROOT, entry) : sourceOf(entry));
  return {
    files: [...files].map((f) => relative(join(ROOT, "src"), f)).sort(),
    packages: [...packages].sort(),
  };
}

const SERVER_MODULES = ["node:http", "node:https", "node:net", "ws", "discord.js", "@statelyai/inspect"];

describe("entry points", () => {
  it("the root loads no server, no emulator, no inspector, no CLI, and not discord.js", () => {
    const { files, packages } = loadedBy(".");
    expect(packages.filter((p) => SERVER_MODULES.includes(p))).toEqual([]);
    expect(files.filter((f) => /^(discord|inspector|testing|cli)\//.test(f))).toEqual([]);
  });

  it("only ./discord needs discord.js, an optional peer dependency", () => {
    const needing = Object.keys(pkg.exports)
      .filter((entry) => entry !== "./package.json")
      .filter((entry) => loadedBy(entry).packages.includes("discord.js"));
    expect(needing).toEqual(["./discord"]);
    expect(pkg.peerDependencies["discord.js"]).toBeDefined();
  });

  it("only ./testing loads the Discord emulator and ws, its WebSocket server", () => {
    const loading = Object.keys(pkg.exports)
      .filter((entry) => entry !== "./package.json")
      .filter((entry) => {
        const { files, packages } = loadedBy(entry);
        return packages.includes("ws") || files.some((f) => f.startsWith("testing/emulator/"));
      });
    expect(loading).toEqual(["./testing"]);
  });

  it("only ./postgres needs pg, an optional peer dependency", () => {
    const needing = Object.keys(pkg.exports)
      .filter((entry) => entry !== "./package.json")
      .filter((entry) => loadedBy(entry).packages.includes("pg"));
    expect(needing).toEqual(["./postgres"]);
    expect(pkg.peerDependencies.pg).toBeDefined();
  });

  it("the CLI's status, config and diagram commands run without the optional peers", () => {
    const optional = ["discord.js", "@statelyai/inspect", "pg"];
    for (const file of ["src/cli/bin.ts", "src/cli/status.ts", "src/cli/diagram.ts"]) {
      expect({ file, loads: loadedBy(file).packages.filter((p) => optional.includes(p)) }).toEqual({
        file,
        loads: [],
      });
    }
  });

  it("every package an entry point loads is a dependency, a peer dependency, or built into Node", () => {
    const declared = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    for (const entry of Object.keys(pkg.exports).filter((e) => e !== "./package.json")) {
      const undeclared = loadedBy(entry).packages.filter((p) => !p.startsWith("node:") && !declared.has(p));
      expect({ entry, undeclared }).toEqual({ entry, undeclared: [] });
    }
  });
});

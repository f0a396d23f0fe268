// A placeholder is `{name}`; any other brace is plain text, so templates need no escaping.
const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9]*)\}/g;

/** The placeholder names a template uses, in first-seen order, each once. */
export function placeholdersOf(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] as string))];
}

/**
 * Fills a template's placeholders from `params`. A line of placeholders that all come out empty is left
 * out (no blank line for an optional part); a placeholder without a value stays as written.
 */
export function renderTemplate(template: string, params: Readonly<Record<string, string | number>>): string {
  const fill = (line: string) =>
    line.replace(PLACEHOLDER, (whole, name: string) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
  return template
    .split("\n")
    .filter((line) => !(onlyPlaceholders(line) && fill(line).trim() === ""))
    .map(fill)
    .join("\n");
}

function onlyPlaceholders(line: string): boolean {
  return line.trim() !== "" && line.replace(PLACEHOLDER, "").trim() === "";
}

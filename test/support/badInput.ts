import { expect } from "vitest";
import { InvalidInputError } from "../../src/index.js";

// The bad-input contract of the policy layer: a defined answer, or an InvalidInputError whose message
// names the offending parameter; never a bare TypeError. Shared by every services test.

export const ONE_MB = "a".repeat(1_000_000);
export const ONE_MB_KOREAN = "작업".repeat(500_000);

/**
 * Values a careless caller might pass where a string, number or object belongs, labelled for test
 * names. `sample` is text that matters to the function under test (a skip token, an error text), so
 * an array or function wrapping it must not be mistaken for it.
 */
export function junkCases(sample = "x"): ReadonlyArray<readonly [string, unknown]> {
  return [
    ["undefined", undefined],
    ["null", null],
    ["a number", 42],
    ["NaN", Number.NaN],
    ["a negative number", -1],
    ["a fraction", 1.5],
    ["a boolean", true],
    ["an empty object", {}],
    ["an empty array", []],
    ["an array", [sample]],
    ["a symbol", Symbol("junk")],
    ["a function", () => sample],
    ["a bigint", 10n],
    ["a null-prototype object", Object.create(null)],
    ["an empty string", ""],
    ["a whitespace string", "  \n\t "],
    ["a 1 MB string", ONE_MB],
    ["a 1 MB Korean string", ONE_MB_KOREAN],
  ];
}

/** Checks `call` answers (and `check` accepts the answer) or throws InvalidInputError naming one of `params`. */
export function expectAnswerOrInvalidInput<T>(
  call: () => T,
  params: readonly string[],
  check: (value: T) => void = (value) => expect(value).toBeDefined(),
): T | undefined {
  let value: T;
  try {
    value = call();
  } catch (error) {
    expectInvalidInput(error, params);
    return undefined;
  }
  check(value);
  return value;
}

/** The asynchronous form: the promise settles, or it (or the call) fails with InvalidInputError naming `param`. */
export async function expectSettlesOrInvalidInput(run: () => Promise<unknown>, param: string): Promise<void> {
  let promise: Promise<unknown>;
  try {
    promise = run();
  } catch (error) {
    expectInvalidInput(error, [param]);
    return;
  }
  try {
    await promise;
  } catch (error) {
    expectInvalidInput(error, [param]);
  }
}

function expectInvalidInput(error: unknown, params: readonly string[]): void {
  expect(error).toBeInstanceOf(InvalidInputError);
  const message = error instanceof Error ? error.message : String(error);
  expect(
    params.some((p) => message.includes(p)),
    `message ${JSON.stringify(message)} names one of ${params.join(", ")}`,
  ).toBe(true);
}

/** Calls a typed function with untyped arguments, as a JavaScript caller could. */
export function callLoosely<R>(fn: (...args: never[]) => R, ...args: unknown[]): R {
  return (fn as unknown as (...a: unknown[]) => R)(...args);
}

/** Constructs a class with untyped arguments, as a JavaScript caller could. */
export function construct<T>(ctor: new (...args: never[]) => T, ...args: unknown[]): T {
  return new (ctor as unknown as new (...a: unknown[]) => T)(...args);
}

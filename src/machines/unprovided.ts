/** The body of a placeholder side-effect actor: fails loudly until the runtime (or a test) provides the real one. */
export const unprovided = (name: string) => async (): Promise<never> => {
  throw new Error(
    `the ${name} actor was not provided: supply it with machine.provide({ actors: { ${name} } })`,
  );
};

// Discord ids (snowflakes): milliseconds since 2015 shifted left by 22 bits, so 17–19 decimal digits.
const SNOWFLAKE_PATTERN = /^\d{17,19}$/;

/** True when `id` looks like a Discord snowflake (17–19 decimal digits). */
export function isSnowflake(id: unknown): id is string {
  return typeof id === "string" && SNOWFLAKE_PATTERN.test(id);
}

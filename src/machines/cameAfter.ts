/** A Discord id: a snowflake, whose high bits are when Discord made it, on Discord's clock. */
const SNOWFLAKE = /^\d{15,20}$/;

/**
 * Whether a message came after the mention it may answer: by snowflake order when both have one, so
 * gateways whose clocks disagree decide alike; otherwise by their times.
 */
export function cameAfter(
  message: { at: number; messageId?: string | undefined },
  mention: { sentAt?: number | undefined; messageId?: string | undefined },
): boolean {
  const { messageId: answer } = message;
  const { messageId: asked } = mention;
  if (answer !== undefined && asked !== undefined && SNOWFLAKE.test(answer) && SNOWFLAKE.test(asked)) {
    return BigInt(answer) > BigInt(asked);
  }
  return message.at >= (mention.sentAt ?? 0);
}

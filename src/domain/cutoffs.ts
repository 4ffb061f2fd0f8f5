/**
 * Positions of a ranking named by a share of it: a percent `p` of `total` ranked members is
 * the position max(1, ceil(total × p / 100)), the last place still in the top p%.
 */

/** A percent as an exact fraction of the total, numerator / denominator (both positive integers). */
export interface Fraction {
  numerator: bigint;
  denominator: bigint;
}

/** Most decimals a percent may have: keeps total × numerator exact in a double (Lua reads it so). */
export const PERCENT_DECIMALS = 4;

const PERCENT_TEXT = new RegExp(`^(\\d{1,3})(?:\\.(\\d{1,${PERCENT_DECIMALS}}))?$`);

/**
 * A percent written in decimal ("12.5") as the exact fraction p / 100, or null when it is
 * not such a number in (0, 100].
 */
export function percentFraction(text: string): Fraction | null {
  const match = PERCENT_TEXT.exec(text);
  if (!match) return null;
  const decimals = match[2] ?? '';
  const numerator = BigInt(match[1]! + decimals);
  const denominator = 100n * 10n ** BigInt(decimals.length);
  if (numerator === 0n || numerator > denominator) return null;
  return { numerator, denominator };
}

/** The position a fraction of `total` names: max(1, ceil(total × numerator / denominator)). */
export function positionOfFraction(total: number, { numerator, denominator }: Fraction): number {
  const ceiling = (BigInt(total) * numerator + denominator - 1n) / denominator;
  return Math.max(1, Number(ceiling));
}

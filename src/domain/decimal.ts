/**
 * Exact decimal handling. Scores are stored as integers scaled by 10^decimals so that
 * sums never accumulate float error and ties compare exactly.
 */

/** Largest magnitude of any stored value or aggregate, after scaling (docs/design/projection.md). */
export const MAX_SCALED = 2n ** 40n;

export type ScaleResult = { ok: true; scaled: bigint } | { ok: false; reason: string };

/**
 * Scales a JSON number to an integer with `decimals` digits after the point. The number
 * is read from its shortest round-trip representation, which is what the client wrote for
 * any value with at most 15 significant digits.
 */
export function scaleNumber(value: number, decimals: number): ScaleResult {
  if (!Number.isFinite(value)) return { ok: false, reason: 'must be a finite number' };
  const parsed = parseDecimalString(String(value));
  if (!parsed) return { ok: false, reason: 'is not a decimal number' };
  const { digits, exponent, negative } = parsed;
  // value = digits * 10^exponent; it needs -exponent decimals when exponent < 0.
  const shift = exponent + decimals;
  if (shift < 0) {
    return { ok: false, reason: `has more than ${decimals} decimal${decimals === 1 ? '' : 's'}` };
  }
  if (digits.length + shift > 20) return { ok: false, reason: 'is out of the supported range (±2^40 after scaling)' };
  let scaled = BigInt(digits) * 10n ** BigInt(shift);
  if (negative) scaled = -scaled;
  if (scaled > MAX_SCALED || scaled < -MAX_SCALED) {
    return { ok: false, reason: 'is out of the supported range (±2^40 after scaling)' };
  }
  return { ok: true, scaled };
}

/** Parses "-12.50", "1e-7", "1.5e+25" into significant digits and a base-10 exponent. */
function parseDecimalString(text: string): { digits: string; exponent: number; negative: boolean } | null {
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return null;
  const intPart = m[2]!;
  const fracPart = m[3] ?? '';
  let exponent = Number(m[4] ?? '0') - fracPart.length;
  let digits = (intPart + fracPart).replace(/^0+(?=\d)/, '');
  // Trailing zeros carry no precision: 12.50 needs one decimal, not two.
  while (digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  const negative = m[1] === '-' && digits !== '0';
  return { digits, exponent, negative };
}

/** Parses a Postgres numeric string ("12.5000") into a scaled integer, or null if it does not fit. */
export function scaleDecimalString(text: string, decimals: number): bigint | null {
  const parsed = parseDecimalString(text.trim());
  if (!parsed) return null;
  const shift = parsed.exponent + decimals;
  if (shift < 0) return null;
  const scaled = BigInt(parsed.digits) * 10n ** BigInt(shift);
  return parsed.negative ? -scaled : scaled;
}

/** The score clients see: the scaled integer turned back into the number they posted. */
export function unscale(scaled: bigint | number, decimals: number): number {
  // Both operands are exact doubles (|scaled| <= 2^40), so one correctly rounded division
  // gives the same double as the literal the client wrote.
  return Number(scaled) / 10 ** decimals;
}

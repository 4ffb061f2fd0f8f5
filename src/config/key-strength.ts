/**
 * A rough, deliberately pessimistic estimate of the bits of a secret a person or a script
 * chose: each character counts the bits of the character classes the secret draws from
 * (lower case, upper case, digits, symbols), except characters a guesser gets for free: one
 * that closes a three-character run seen earlier in the secret (`abab…`, `password` four
 * times) and one that continues a steady step from the two before it (`aaaa`, `1234`,
 * `abcd`). A random key (`openssl rand -hex 16` and up, base64 of 16 bytes and up) scores
 * well above 128; a repeated word, a keyboard run or digits in a row do not.
 */
export function estimatedKeyBits(key: string): number {
  const pool =
    (/[a-z]/.test(key) ? 26 : 0) +
    (/[A-Z]/.test(key) ? 26 : 0) +
    (/[0-9]/.test(key) ? 10 : 0) +
    (/[^a-zA-Z0-9]/.test(key) ? 33 : 0);
  if (pool === 0) return 0;
  let novel = 0;
  for (let i = 0; i < key.length; i++) {
    const repeatsRun = i >= 3 && key.slice(0, i).includes(key.slice(i - 2, i + 1));
    const step = i >= 2 ? key.charCodeAt(i) - key.charCodeAt(i - 1) : NaN;
    const continuesStep = Math.abs(step) <= 1 && step === key.charCodeAt(i - 1) - key.charCodeAt(i - 2);
    if (!repeatsRun && !continuesStep) novel += 1;
  }
  return Math.floor(novel * Math.log2(pool));
}

/** What ADMIN_API_KEY must reach: as hard to guess as a random 128-bit key. */
export const MIN_KEY_BITS = 128;

// RAP semantic keys such as ord.cn.sh.202407.8842-2, with the server's rules (docs/formats.md
// §3, §4): a type of 2-8 letters [a-z], 1 to 5 segments of 1-32 characters [a-z0-9], at most
// 128 characters in all, then '-' and one Damm check character over the body. The lowercase
// form is the only valid form; build, normalize and prefixRange trim and lowercase their
// input, the others take the text as it is.
//
// Damm's algorithm over the quasigroup x ∘ y = 2·(x − y) mod 37 on the body symbols 0-9 (0-9),
// a-z (10-35) and '.' (36); check characters 0-9a-z~.

export const MAX_KEY_LEN = 128;
export const MAX_BODY_LEN = MAX_KEY_LEN - 2;
export const MAX_SEGMENTS = 5;
export const MIN_TYPE_LEN = 2;
export const MAX_TYPE_LEN = 8;
export const MAX_SEGMENT_LEN = 32;
export const CHECK_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz~';

/** A key: a string that passed validate() (a type-level brand only). */
export type Rapkey = string & { readonly __rapkey?: true };

// Unicode White_Space: what the server's trim takes away.
const WHITESPACE = new Set(
  '\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007' +
  '\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000');

/** A key, body, part or prefix that the server would reject; the message says why. */
export class RapkeyError extends TypeError {
  override name = 'RapkeyError';
  /** True when only the check character is wrong (then `expected` is the right one). */
  readonly checksum: boolean;
  readonly expected: string;

  constructor(message: string, options: { checksum?: boolean; expected?: string } = {}) {
    super(message);
    this.checksum = options.checksum ?? false;
    this.expected = options.expected ?? '';
  }
}

// symbol value of a body character code; -1 if none
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 36; i++) VALUE[CHECK_ALPHABET.charCodeAt(i)] = i;
VALUE['.'.charCodeAt(0)] = 36;

function quoted(value: string): string {
  return JSON.stringify(value.length <= 40 ? value : value.slice(0, 40) + '…');
}

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function trim(s: string): string {
  const chars = [...s];
  let a = 0;
  let b = chars.length;
  while (a < b && WHITESPACE.has(chars[a]!)) a++;
  while (b > a && WHITESPACE.has(chars[b - 1]!)) b--;
  return chars.slice(a, b).join('');
}

function interim(body: string): number {
  let i = 0;
  for (let k = 0; k < body.length; k++) {
    i = (((2 * (i - VALUE[body.charCodeAt(k)]!)) % 37) + 37) % 37;
  }
  return i;
}

const isLower = (c: string) => c >= 'a' && c <= 'z' && c.length === 1;
const isLowerDigit = (c: string) => isLower(c) || (c >= '0' && c <= '9' && c.length === 1);

function checkType(lower: string, orig: string): void {
  const chars = [...lower];
  const origChars = [...orig];
  for (let n = 0; n < chars.length; n++) {
    if (!isLower(chars[n]!)) {
      throw new RapkeyError(
        `type ${quoted(orig)} has a character outside [a-z]: ${JSON.stringify(origChars[n])} at position ${n + 1}`);
    }
  }
  const n = chars.length;
  if (n === 0) throw new RapkeyError('type is empty');
  if (n < MIN_TYPE_LEN || n > MAX_TYPE_LEN) {
    throw new RapkeyError(
      `type ${quoted(orig)} is too ${n < MIN_TYPE_LEN ? 'short' : 'long'}: ${n} letter${n === 1 ? '' : 's'} ` +
      `(a type has ${MIN_TYPE_LEN} to ${MAX_TYPE_LEN} letters)`);
  }
}

function checkSegment(index: number, lower: string, orig: string): void {
  if (!lower) throw new RapkeyError(`segment ${index} is empty`);
  const chars = [...lower];
  const origChars = [...orig];
  for (let n = 0; n < chars.length; n++) {
    if (!isLowerDigit(chars[n]!)) {
      throw new RapkeyError(
        `segment ${index} ${quoted(orig)} has a character outside [a-z0-9]: ${JSON.stringify(origChars[n])} at position ${n + 1}`);
    }
  }
  if (chars.length > MAX_SEGMENT_LEN) {
    throw new RapkeyError(
      `segment ${index} ${quoted(orig)} is too long: ${chars.length} characters (at most ${MAX_SEGMENT_LEN})`);
  }
}

function checkBody(body: string, needSegment: boolean): void {
  const parts = body.split('.');
  checkType(parts[0]!, parts[0]!);
  const segments = parts.slice(1);
  segments.forEach((seg, i) => {
    if (i + 1 > MAX_SEGMENTS) {
      throw new RapkeyError(`too many segments: ${segments.length} (at most ${MAX_SEGMENTS})`);
    }
    checkSegment(i + 1, seg, seg);
  });
  if (segments.length === 0 && needSegment) {
    throw new RapkeyError(`type ${quoted(parts[0]!)} must be followed by at least one segment`);
  }
}

function bodyTooLong(n: number): RapkeyError {
  return new RapkeyError(
    `body is too long: ${n} characters (at most ${MAX_BODY_LEN}, leaving room for '-' and the check character)`);
}

function mustBeString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`a rapkey ${what} is a string, not ${value === null ? 'null' : typeof value}`);
  return value;
}

/** The check character of a body (`type.seg…`, lowercase, without `-c`). */
export function checkChar(body: string): string {
  mustBeString(body, 'body');
  if (body.length > MAX_BODY_LEN) throw bodyTooLong(body.length);
  checkBody(body, true);
  return CHECK_ALPHABET[interim(body)]!;
}

export interface RapkeyParts {
  type: string;
  segments: string[];
  check: string;
}

/** Validates a canonical key and returns its type, segments and check character. */
export function parse(key: string): RapkeyParts {
  mustBeString(key, 'key');
  if (!key) throw new RapkeyError('key is empty');
  if (key.length > MAX_KEY_LEN) throw new RapkeyError(`key is too long: ${key.length} characters (at most ${MAX_KEY_LEN})`);
  const dash = key.lastIndexOf('-');
  if (dash < 0) throw new RapkeyError("missing '-' before the check character");
  const body = key.slice(0, dash);
  const check = key.slice(dash + 1);
  checkBody(body, true);
  if (!check) throw new RapkeyError("missing check character after '-'");
  if ([...check].length > 1) throw new RapkeyError(`expected one check character after '-', found ${quoted(check)}`);
  const value = CHECK_ALPHABET.indexOf(check);
  if (value < 0) throw new RapkeyError(`check character ${JSON.stringify(check)} is not one of [0-9a-z~]`);
  const i = interim(body);
  if ((((2 * (i - value)) % 37) + 37) % 37 !== 0) {
    const expected = CHECK_ALPHABET[i]!;
    throw new RapkeyError(`wrong check character: expected ${JSON.stringify(expected)}, found ${JSON.stringify(check)}`,
      { checksum: true, expected });
  }
  const parts = body.split('.');
  return { type: parts[0]!, segments: parts.slice(1), check };
}

/** Throws RapkeyError saying why `key` is not a valid key; returns it otherwise. */
export function validate(key: string): Rapkey {
  parse(key);
  return key;
}

/** True iff the server's rapkey_is_valid is true for `key`; never throws. */
export function isValid(key: unknown): key is Rapkey {
  if (typeof key !== 'string') return false;
  try {
    parse(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * A key from a type and 1 to 5 segments (SQL rapkey_build): each part trimmed and lowercased,
 * checked, then '-' and the check character appended.
 */
export function build(type: string, ...segments: string[]): Rapkey {
  mustBeString(type, 'type');
  segments.forEach((s) => mustBeString(s, 'segment'));
  const typeOrig = trim(type);
  const typeLower = lowerAscii(typeOrig);
  checkType(typeLower, typeOrig);
  if (segments.length > MAX_SEGMENTS) throw new RapkeyError(`too many segments: ${segments.length} (at most ${MAX_SEGMENTS})`);
  if (segments.length === 0) throw new RapkeyError(`type ${quoted(typeLower)} must be followed by at least one segment`);
  const body = [typeLower];
  segments.forEach((seg, i) => {
    const orig = trim(seg);
    const lower = lowerAscii(orig);
    checkSegment(i + 1, lower, orig);
    body.push(lower);
  });
  const joined = body.join('.');
  if (joined.length > MAX_BODY_LEN) throw bodyTooLong(joined.length);
  return `${joined}-${CHECK_ALPHABET[interim(joined)]}`;
}

/** The canonical form of user input (SQL to_rapkey): trimmed, lowercased, validated. */
export function normalize(text: string): Rapkey {
  mustBeString(text, 'key');
  return validate(lowerAscii(trim(text)));
}

/**
 * The half-open range [lo, hi) of the valid keys under a prefix (a type or type.seg1[.seg2…]
 * of whole parts): compare in the "C" collation, lo <= key < hi (SQL rapkey_prefix_lo/hi).
 */
export function prefixRange(prefix: string): [lo: string, hi: string] {
  mustBeString(prefix, 'prefix');
  const p = lowerAscii(trim(prefix));
  checkBody(p, false);
  if (p.length > MAX_BODY_LEN) throw bodyTooLong(p.length);
  return [p + '-', p + '/'];
}

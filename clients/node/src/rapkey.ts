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

import { invalidInput, oneLine, quoted, shownChar, trimWhitespace } from './words.js';

/**
 * A key, body, part or prefix that the server would reject. `message` is the server's message,
 * then ": " and its DETAIL (also in `detail`), the same words as the server's error.
 */
export class RapkeyError extends TypeError {
  override name = 'RapkeyError';
  /** The server's DETAIL: why. */
  readonly detail: string | undefined;
  /** True when only the check character is wrong (then `expected` is the right one). */
  readonly checksum: boolean;
  readonly expected: string;

  constructor(message: string, detail?: string, options: { checksum?: boolean; expected?: string } = {}) {
    super(oneLine(message, detail));
    this.detail = detail;
    this.checksum = options.checksum ?? false;
    this.expected = options.expected ?? '';
  }
}

/** Why a text is refused (the DETAIL), before the caller names what it was reading. */
class Why extends Error {
  constructor(readonly detail: string, readonly checksum = false, readonly expected = '') {
    super(detail);
  }
}

function guard<T>(message: () => string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Why) throw new RapkeyError(message(), e.detail, { checksum: e.checksum, expected: e.expected });
    throw e;
  }
}

// symbol value of a body character code; -1 if none
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 36; i++) VALUE[CHECK_ALPHABET.charCodeAt(i)] = i;
VALUE['.'.charCodeAt(0)] = 36;

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

const trim = trimWhitespace;

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
      throw new Why(`Type ${quoted(orig)} has a character outside [a-z]: ${shownChar(origChars[n]!)} at position ${n + 1}.`);
    }
  }
  const n = chars.length;
  if (n === 0) throw new Why('Type is empty.');
  if (n < MIN_TYPE_LEN || n > MAX_TYPE_LEN) {
    throw new Why(
      `Type ${quoted(orig)} is too ${n < MIN_TYPE_LEN ? 'short' : 'long'}: ${n} letter${n === 1 ? '' : 's'} ` +
      `(a type has ${MIN_TYPE_LEN} to ${MAX_TYPE_LEN} letters).`);
  }
}

function checkSegment(index: number, lower: string, orig: string): void {
  if (!lower) throw new Why(`Segment ${index} is empty.`);
  const chars = [...lower];
  const origChars = [...orig];
  for (let n = 0; n < chars.length; n++) {
    if (!isLowerDigit(chars[n]!)) {
      throw new Why(
        `Segment ${index} ${quoted(orig)} has a character outside [a-z0-9]: ${shownChar(origChars[n]!)} at position ${n + 1}.`);
    }
  }
  if (chars.length > MAX_SEGMENT_LEN) {
    throw new Why(`Segment ${index} ${quoted(orig)} is too long: ${chars.length} characters (at most ${MAX_SEGMENT_LEN}).`);
  }
}

function checkBody(body: string, needSegment: boolean): void {
  const parts = body.split('.');
  checkType(parts[0]!, parts[0]!);
  const segments = parts.slice(1);
  segments.forEach((seg, i) => {
    if (i + 1 > MAX_SEGMENTS) throw new Why(`Too many segments: ${segments.length} (at most ${MAX_SEGMENTS}).`);
    checkSegment(i + 1, seg, seg);
  });
  if (segments.length === 0 && needSegment) {
    throw new Why(`Type ${quoted(parts[0]!)} must be followed by at least one segment.`);
  }
}

function bodyTooLong(n: number): Why {
  return new Why(`Body is too long: ${n} characters (at most ${MAX_BODY_LEN}, leaving room for '-' and the check character).`);
}

function mustBeString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`a rapkey ${what} is a string, not ${value === null ? 'null' : typeof value}`);
  return value;
}

/** The check character of a body (`type.seg…`, lowercase, without `-c`). */
export function checkChar(body: string): string {
  mustBeString(body, 'body');
  return guard(() => 'invalid rapkey body', () => {
    if ([...body].length > MAX_BODY_LEN) throw bodyTooLong([...body].length);
    checkBody(body, true);
    return CHECK_ALPHABET[interim(body)]!;
  });
}

export interface RapkeyParts {
  type: string;
  segments: string[];
  check: string;
}

function parseKey(key: string): RapkeyParts {
  if (!key) throw new Why('Key is empty.');
  const n = [...key].length;
  if (n > MAX_KEY_LEN) throw new Why(`Key is too long: ${n} characters (at most ${MAX_KEY_LEN}).`);
  const dash = key.lastIndexOf('-');
  if (dash < 0) throw new Why("Missing '-' before the check character.");
  const body = key.slice(0, dash);
  const check = key.slice(dash + 1);
  checkBody(body, true);
  if (!check) throw new Why("Missing check character after '-'.");
  if ([...check].length > 1) throw new Why(`Expected one check character after '-', found ${quoted(check)}.`);
  const value = CHECK_ALPHABET.indexOf(check);
  if (value < 0) throw new Why(`Check character ${shownChar(check)} is not one of [0-9a-z~].`);
  const i = interim(body);
  if ((((2 * (i - value)) % 37) + 37) % 37 !== 0) {
    const expected = CHECK_ALPHABET[i]!;
    throw new Why(`Wrong check character: expected '${expected}', found '${check}'.`, true, expected);
  }
  const parts = body.split('.');
  return { type: parts[0]!, segments: parts.slice(1), check };
}

/** Validates a canonical key and returns its type, segments and check character. */
export function parse(key: string): RapkeyParts {
  mustBeString(key, 'key');
  return guard(() => invalidInput('rapkey', key), () => parseKey(key));
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
    parseKey(key);
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
  return guard(() => 'invalid rapkey part', () => {
    const typeOrig = trim(type);
    const typeLower = lowerAscii(typeOrig);
    checkType(typeLower, typeOrig);
    if (segments.length > MAX_SEGMENTS) throw new Why(`Too many segments: ${segments.length} (at most ${MAX_SEGMENTS}).`);
    if (segments.length === 0) throw new Why(`Type ${quoted(typeLower)} must be followed by at least one segment.`);
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
  });
}

/** The canonical form of user input (SQL to_rapkey): trimmed, lowercased, validated. */
export function normalize(text: string): Rapkey {
  mustBeString(text, 'key');
  return guard(() => invalidInput('rapkey', text), () => {
    const key = lowerAscii(trim(text));
    parseKey(key);
    return key;
  });
}

/**
 * The half-open range [lo, hi) of the valid keys under a prefix (a type or type.seg1[.seg2…]
 * of whole parts): compare in the "C" collation, lo <= key < hi (SQL rapkey_prefix_lo/hi).
 */
export function prefixRange(prefix: string): [lo: string, hi: string] {
  mustBeString(prefix, 'prefix');
  return guard(() => 'invalid rapkey prefix', () => {
    const p = lowerAscii(trim(prefix));
    checkBody(p, false);
    if (p.length > MAX_BODY_LEN) throw bodyTooLong(p.length);
    return [p + '-', p + '/'] as [string, string];
  });
}

// The words of errors, shared with the server and the other clients (crates/idgen-core/src/
// words.rs, tests/vectors/README.md): an error is the server's message, then ": " and its
// DETAIL when there is one. Values are quoted by one rule, characters shown by another.

/** How many characters of a value a message quotes. */
export const QUOTED_CHARS = 40;

/** `"value"`, or past 40 characters `"<the first 40>..." (N characters)`; characters are code points. */
export function quoted(value: string): string {
  const chars = [...value];
  return chars.length > QUOTED_CHARS
    ? `"${chars.slice(0, QUOTED_CHARS).join('')}..." (${chars.length} characters)`
    : `"${value}"`;
}

/** A character in single quotes; a control character escaped (`'\u{a}'`) so that it stays visible. */
export function shownChar(c: string): string {
  return /^\p{Cc}$/u.test(c) ? `'\\u{${c.codePointAt(0)!.toString(16)}}'` : `'${c}'`;
}

/** `invalid input syntax for type T: "input"`, as PostgreSQL's own input functions say it. */
export function invalidInput(typeName: string, input: string): string {
  return `invalid input syntax for type ${typeName}: ${quoted(input)}`;
}

/** The one-line form: message, then ": " and the DETAIL when there is one. */
export function oneLine(message: string, detail: string | undefined): string {
  return detail === undefined ? message : `${message}: ${detail}`;
}

// Unicode White_Space: what the server's trim takes away (Rust's str::trim).
export const WHITESPACE = new Set(
  '\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007' +
  '\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000');

export function trimWhitespace(s: string): string {
  const chars = [...s];
  let a = 0;
  let b = chars.length;
  while (a < b && WHITESPACE.has(chars[a]!)) a++;
  while (b > a && WHITESPACE.has(chars[b - 1]!)) b--;
  return a === 0 && b === chars.length ? s : chars.slice(a, b).join('');
}

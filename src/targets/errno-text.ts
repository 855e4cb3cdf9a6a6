/**
 * Errno names for the driver protocol's `error` line, from the strerror text that libraries report
 * instead of a code (LevelDB's "IO error: ...: No space left on device", Go's "input/output error"), or
 * the code Node's own errors carry.
 */
const ERRNO_BY_TEXT: readonly [text: string, errno: string][] = [
  ['no space left on device', 'ENOSPC'],
  ['input/output error', 'EIO'],
  ['read-only file system', 'EROFS'],
  ['disk quota exceeded', 'EDQUOT'],
  ['permission denied', 'EACCES'],
  ['no such file or directory', 'ENOENT'],
];

export function errnoOfText(text: string): string | undefined {
  const lower = text.toLowerCase();
  return ERRNO_BY_TEXT.find(([t]) => lower.includes(t))?.[1];
}

/** An error's errno name: its own code when it has one (Node's fs errors), else from its text. */
export function errnoOf(err: unknown, text: string): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : errnoOfText(text);
}

// A path with its numbers generalised (/000005.log -> /*.log, /page.12 -> /page.*): the kind of file
// a request touched, for failure signatures and coverage features.
export function pathPattern(path: string): string {
  return path.replace(/\d+/g, '*');
}

/** The directory holding a path of the mount ('/' for a top-level name). */
export const parentOf = (p: string): string => p.slice(0, p.lastIndexOf('/')) || '/';

/**
 * The paths of the mount a message names, in the order it names them: as themselves or as the tail
 * of a host path ("/tmp/x/mnt/page.1" names "/page.1"), out of the paths `known` (a run's requests').
 */
export function pathsNamedIn(message: string, known: Iterable<string>): string[] {
  const found: { p: string; at: number }[] = [];
  for (const p of new Set(known)) {
    if (p === '/') continue;
    for (let from = 0; ;) {
      const i = message.indexOf(p, from);
      if (i < 0) break;
      const next = message[i + p.length];
      if (next === undefined || !/[\w.-]/.test(next)) {
        found.push({ p, at: i });
        break;
      }
      from = i + 1;
    }
  }
  return found.sort((a, b) => a.at - b.at || b.p.length - a.p.length).map((x) => x.p);
}

// A path with its numbers generalised (/000005.log -> /*.log, /page.12 -> /page.*): the kind of file
// a request touched, for failure signatures and coverage features.
export function pathPattern(path: string): string {
  return path.replace(/\d+/g, '*');
}

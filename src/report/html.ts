// Small HTML helpers shared by the report renderers. Everything that came from an artifact (file
// names, file contents, oracle messages, driver output) goes through `esc` before it reaches the page.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or attribute value, safe in HTML and in inline SVG. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}

/** 12345 -> "12,345": sizes and counts read faster grouped. */
export function num(n: number): string {
  return n.toLocaleString('en-US');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** Seconds with one decimal below a minute, then minutes and seconds: the gate's durations. */
export function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** At most `max` numbers, then how many there were: seq lists can be long. */
export function list(xs: readonly number[], max = 12): string {
  return xs.length <= max ? xs.join(', ') : `${xs.slice(0, max).join(', ')} … (${xs.length} in all)`;
}

/** A full HTML document; the CSP keeps a report from loading anything, so it works offline and leaks nothing. */
export function page(title: string, css: string, body: string, script: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${css}</style>
</head>
<body>
${body}
<script>${script}</script>
</body>
</html>
`;
}

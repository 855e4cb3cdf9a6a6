// The reports' inline stylesheet and script. The script only adds conveniences (click to select a
// request or line in both the chart and the log, a details box, the timeline scrolled to the cut,
// the whole run shown when a log row outside the zoomed window is clicked); a report reads the
// same with scripts off (the zoom's control is a <details>, swapped in by CSS).

export const CSS = `
:root { --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --bg-alt: #f9fafb; --red: #dc2626; --green: #16a34a; --yellow: #fde047; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); margin: 0; padding: 20px 28px 60px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
code, pre, .hexdump, .num { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.sub { color: var(--muted); margin: 0; word-break: break-all; }
dl.case { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
dl.case dt { color: var(--muted); }
dl.case dd { margin: 0; word-break: break-word; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.verdict.fail { background: #fee2e2; color: #991b1b; } .verdict.pass { background: #dcfce7; color: #166534; } .verdict.error { background: #fef3c7; color: #92400e; }
.violation { border-left: 4px solid var(--red); background: #fef2f2; padding: 8px 14px; margin: 10px 0; border-radius: 0 6px 6px 0; }
.violation .msg { margin: 4px 0 6px; white-space: pre-wrap; word-break: break-word; }
.violation ol { margin: 6px 0 2px; padding-left: 0; list-style: none; }
.violation li { margin: 3px 0; }
.harness-error { background: #fffbeb; border-left: 4px solid #d97706; padding: 8px 14px; white-space: pre-wrap; }
.badge-inline { display: inline-block; min-width: 18px; padding: 0 5px; border-radius: 9px; background: #111827; color: #fff; font-size: 11px; text-align: center; font-weight: 600; }
.role { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 3px; background: #e5e7eb; margin-right: 4px; }
.role-claim .role, .role.role-claim { background: #dcfce7; } .role.role-persist { background: #bbf7d0; } .role.role-cause { background: #fca5a5; font-weight: 600; } .role.role-unsynced, .role.role-lost, .role.role-removed, .role.role-failed, .role.role-error { background: #fecaca; }
.timeline { display: flex; border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; background: #fff; }
.tl-labels { flex: none; border-right: 1px solid var(--line); }
.tl-scroll { overflow-x: auto; flex: 1; }
.tl-chart { display: block; }
.lane-bg { fill: #fff; } .lane-bg.odd { fill: var(--bg-alt); } .lane-bg.program { fill: #f0f9ff; }
.lane-label { font-size: 12px; text-anchor: end; fill: #374151; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.lane-label.strong { font-family: inherit; font-weight: 600; }
.axis-name { font-size: 11px; text-anchor: end; fill: var(--muted); }
.axis-label { font-size: 10px; text-anchor: middle; fill: var(--muted); }
.axis-tick { stroke: #9ca3af; }
.persist-tick { fill: var(--green); }
.life { fill: #d1d5db; }
.tick { fill: #9ca3af; }
.req rect, .req circle { stroke: rgba(0,0,0,.25); stroke-width: .6; }
.req.k-write rect:not(.halo):not(.tick) { fill: #3b82f6; }
.req.k-truncate rect:not(.halo):not(.tick) { fill: #f59e0b; }
.req.k-setattr circle { fill: #9ca3af; }
.req.k-fsync rect:not(.halo):not(.tick) { fill: var(--green); }
.req.k-fsync.datasync rect:not(.halo):not(.tick) { fill: #86efac; stroke: var(--green); stroke-width: 1; }
.req.k-fsyncdir rect:not(.halo):not(.tick) { fill: #166534; }
.req.k-create rect:not(.halo):not(.tick), .req.k-mkdir rect:not(.halo):not(.tick), .req.k-mknod rect:not(.halo):not(.tick), .req.k-symlink rect:not(.halo):not(.tick), .req.k-link rect:not(.halo):not(.tick) { fill: #0f766e; }
.req.k-unlink rect:not(.halo):not(.tick), .req.k-rmdir rect:not(.halo):not(.tick) { fill: #be123c; }
.req.k-rename rect:not(.halo):not(.tick) { fill: #7c3aed; }
.req.held rect:not(.halo), .req.held circle { fill-opacity: .45; stroke: #111; stroke-dasharray: 2 1.5; stroke-width: 1; }
.req.failed rect:not(.halo), .req.failed circle { fill: #fecaca !important; stroke: var(--red); stroke-width: 2; }
.req.fate-lost rect:not(.halo):not(.tick), .req.fate-lost circle { stroke: var(--red); stroke-width: 1.6; stroke-dasharray: 2.5 1.5; }
.req.fate-maybe rect:not(.halo):not(.tick), .req.fate-maybe circle { stroke: #ea580c; stroke-width: 1.6; stroke-dasharray: 2.5 1.5; }
.req.fate-kept rect:not(.halo):not(.tick), .req.fate-kept circle { stroke: var(--green); stroke-width: 1.4; stroke-dasharray: 1 1.5; }
.req.beyond, .req.not-applied { opacity: .3; }
.halo { fill: var(--yellow); stroke: #ca8a04 !important; stroke-width: 1 !important; }
.line rect:not(.halo) { stroke: rgba(0,0,0,.35); stroke-width: .6; }
.line.t-intent rect:not(.halo) { fill: #fff; stroke: #6b7280; }
.line.t-written rect:not(.halo) { fill: #2563eb; }
.line.t-durable rect:not(.halo) { fill: var(--green); }
.line.t-acked rect:not(.halo) { fill: #9333ea; }
.line.t-delivered rect:not(.halo) { fill: #0891b2; }
.line.t-error rect:not(.halo) { fill: var(--red); }
.line.t-info rect:not(.halo) { fill: #9ca3af; }
.line.t-node rect:not(.halo) { fill: #475569; }
.lane-bg.node-head { fill: #eef2ff; } .lane-label.node { font-family: inherit; font-weight: 700; fill: #3730a3; }
.node-sep { stroke: #6366f1; stroke-width: 1; }
.node-up { fill: #818cf8; } .node-event circle { fill: #fff; stroke: #4338ca; stroke-width: 2; } .node-event.restarted circle { fill: #16a34a; stroke: #166534; }
.node-event text { font-size: 11px; fill: #166534; font-weight: 600; } .node-cut path { fill: var(--red); } .node-killed path { stroke: #475569; stroke-width: 2.5; fill: none; }
.req:hover rect:not(.halo), .line:hover rect:not(.halo), .req:hover circle { stroke: #111; stroke-width: 1.5; }
.selected rect:not(.halo), .selected circle { stroke: #000 !important; stroke-width: 2.2 !important; }
.badge rect { fill: #111827; } .badge text { fill: #fff; font-size: 9.5px; font-weight: 700; text-anchor: middle; }
.cut line { stroke: var(--red); stroke-width: 2.5; } .cut path { fill: var(--red); } .cut text { fill: var(--red); font-weight: 700; font-size: 12px; }
.beyond-shade { fill: #e5e7eb; opacity: .45; }
.elided line { stroke: #6b7280; stroke-width: 1.5; stroke-dasharray: 4 3; }
.tl-zoom-note { margin: 6px 0 4px; padding: 4px 10px; background: #eff6ff; border-left: 3px solid #3b82f6; font-size: 13px; }
details.tl-whole { margin: 4px 0; }
details.tl-whole > summary { display: inline-block; list-style: none; padding: 2px 10px; border: 1px solid #93c5fd; border-radius: 4px; background: #fff; color: #1d4ed8; font-size: 13px; }
details.tl-whole > summary::-webkit-details-marker { display: none; }
details.tl-whole > summary:hover { background: #eff6ff; }
details.tl-whole:not([open]) .when-open, details.tl-whole[open] .when-closed { display: none; }
details.tl-whole[open] ~ .tl-window { display: none; }
.no-marks { font-size: 12px; fill: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: #374151; margin: 4px 0 8px; }
.legend span::before { content: ""; display: inline-block; width: 11px; height: 11px; margin-right: 5px; vertical-align: -1px; border-radius: 2px; background: var(--c); border: var(--b, 1px solid rgba(0,0,0,.2)); }
.cut-info { margin: 4px 0; }
.cut-info strong { color: var(--red); }
details.log { margin: 8px 0; }
details > summary { cursor: pointer; color: #1f2937; font-weight: 600; }
table { border-collapse: collapse; }
.log-table, .files, .summary, .lines-table { width: 100%; margin: 6px 0; font-size: 13px; }
.log-table td, .log-table th, .files td, .files th, .summary td, .summary th, .lines-table td, .lines-table th { border-bottom: 1px solid var(--line); padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg-alt); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.log-table td:nth-child(3) { word-break: break-all; }
tr.hl td { background: #fef9c3; }
tr.cut-row td { background: #fee2e2; color: #991b1b; font-weight: 700; }
tr.not-applied td { color: #9ca3af; }
tr.failed td { color: var(--red); }
tr.line-row td { color: #1e3a8a; }
tr.line-row.t-error td { color: var(--red); }
tr.gap td { color: var(--muted); font-style: italic; }
tr.selected td { outline: 2px solid #111827; outline-offset: -2px; }
tr:target td { background: #fde68a; }
strong.fate-lost { color: var(--red); } strong.fate-maybe { color: #c2410c; } strong.fate-kept { color: var(--green); }
.files td.status-differ, .files td.status-only-a, .files td.status-only-b, .files td.status-missing { color: #991b1b; font-weight: 600; }
.file { margin: 10px 0 16px; }
.file h4 { margin: 4px 0; font-size: 13px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
.sizes, .ranges, .note { margin: 2px 0; font-size: 12.5px; }
.note { color: var(--muted); }
.range { background: #fee2e2; padding: 0 3px; border-radius: 2px; }
.hexdump { border: 1px solid var(--line); margin: 6px 0; }
.hexdump td, .hexdump th { padding: 0 8px; white-space: pre; }
.hexdump td.off { color: var(--muted); }
.hexdump td.asc { border-right: 1px solid var(--line); }
.hexdump mark, pre.text mark { background: #fca5a5; color: #450a0a; }
.panes { display: flex; gap: 12px; flex-wrap: wrap; }
.pane { flex: 1 1 320px; min-width: 0; border: 1px solid var(--line); border-radius: 4px; }
.pane-head { background: var(--bg-alt); padding: 2px 8px; font-weight: 600; font-size: 12px; }
pre.text { margin: 0; padding: 6px 8px; white-space: pre-wrap; word-break: break-all; max-height: 420px; overflow: auto; }
#details { position: fixed; right: 16px; bottom: 16px; max-width: min(560px, 90vw); background: #111827; color: #f9fafb; padding: 10px 14px; border-radius: 8px; white-space: pre-wrap; font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; box-shadow: 0 4px 14px rgba(0,0,0,.25); }
#details[hidden] { display: none; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
a { color: #1d4ed8; }
/* On paper (and a page saved as PDF): the default window, unscrolled and whole, without the controls. */
@media print {
  body { padding: 0; }
  .tl-scroll { overflow: visible; }
  .timeline { break-inside: avoid; }
  details.tl-whole:not([open]) { display: none; }
  #details { display: none !important; }
}
`;

export const SCRIPT = `
(function () {
  var box = document.getElementById('details');
  function describe(el) {
    var t = el.querySelector('title');
    if (t && el.closest('svg')) return t.textContent;
    return (el.innerText || el.textContent || '').replace(/\\t/g, '  ').trim();
  }
  // Inside a closed <details> counts as hidden (Chromium keeps its boxes, with content-visibility: hidden).
  function shown(e) { return e.getClientRects().length > 0 && !e.closest('details:not([open])'); }
  function select(ref, source) {
    document.querySelectorAll('.selected').forEach(function (e) { e.classList.remove('selected'); });
    var all = document.querySelectorAll('[data-ref="' + CSS.escape(ref) + '"]');
    all.forEach(function (e) { e.classList.add('selected'); });
    var fromChart = !!source.closest('svg');
    var row = null, onScreen = null, hidden = null;
    all.forEach(function (e) {
      if (e === source) return;
      if (!e.closest('svg')) { if (row === null) row = e; }
      else if (shown(e)) { if (onScreen === null) onScreen = e; }
      else if (hidden === null) hidden = e;
    });
    if (fromChart && row) {
      var log = row.closest('details');
      if (log && !log.open) log.open = true;
      row.scrollIntoView({ block: 'nearest' });
    } else if (!fromChart) {
      // A request outside the zoomed window is drawn only on the whole run's chart: show that one.
      var shape = onScreen;
      if (shape === null && hidden !== null) {
        var whole = hidden.closest('details.tl-whole');
        if (whole && !whole.open) { whole.open = true; shape = hidden; }
      }
      if (shape) shape.scrollIntoView({ block: 'nearest', inline: 'center' });
    }
    var drawn = fromChart ? source : (onScreen || hidden);
    if (box) { box.textContent = describe(drawn || source); box.hidden = false; }
  }
  document.addEventListener('click', function (ev) {
    var el = ev.target instanceof Element ? ev.target.closest('[data-ref]') : null;
    if (el) select(el.getAttribute('data-ref'), el);
    else if (box && !(ev.target instanceof Element && ev.target.closest('#details'))) box.hidden = true;
  });
  function toCut(s) {
    var x = Number(s.getAttribute('data-cut-x'));
    if (x > s.clientWidth * 0.8) s.scrollLeft = Math.max(0, x - s.clientWidth * 0.6);
  }
  document.querySelectorAll('.tl-scroll[data-cut-x]').forEach(function (s) { if (shown(s)) toCut(s); });
  document.querySelectorAll('details.tl-whole').forEach(function (d) {
    d.addEventListener('toggle', function () {
      // Opened by a click on a log row: that request is already in view.
      if (d.open && !d.querySelector('.selected')) d.querySelectorAll('.tl-scroll[data-cut-x]').forEach(toCut);
    });
  });
  document.body.setAttribute('data-ready', 'true');
})();
`;

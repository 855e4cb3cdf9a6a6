// The layout rules, checked on the code the CLI and the daemon run (the files tsconfig.json
// compiles into dist/), with the TypeScript compiler's own module resolution:
// 1. It never imports test code (a test file, a test helper, a test framework), so
//    `npm ci --omit=dev` and a packed install work.
// 2. Imports flow one way between the folders (docs/design.md, "Layout"): each folder imports only
//    from folders to its left, never from a sibling at its own level, so no cycle can form.
//    src/queue/ is a library imported by its target alone. Test files sit beside what they test
//    and may use anything (nothing imports them); bench/ is outside the order.
// 3. No import cycle at all, inside a folder either: two modules that import each other are one
//    idea split in two, and the order of their initialisation is an accident.
// 4. No function in src/ or fusefs/ is longer than MAX_FUNCTION_LINES: past that a function holds
//    several stages that want names of their own (an inner function counts on its own).
// 5. A crash policy or a cut kind is asked its properties (its registry), never compared by name
//    outside its registry module: a new policy or kind is then its entry, not an edit in every
//    place that branches on one (docs/design.md, "Where a change goes").
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CRASH_POLICIES } from '../fusefs/crash-states.js';
import { CUT_KINDS } from './faults/cut-kinds.js';
import { REPO_ROOT } from './harness/dist-path.js';

/** Folders in import order: a folder may import from a folder of a lower level only. */
const LEVELS: readonly { folder: string; level: number }[] = [
  { folder: 'fusefs', level: 0 },
  // The fault vocabulary (cut kinds) sits between the daemon and the harness that draws its cuts.
  { folder: 'src/faults', level: 0.5 },
  { folder: 'src/harness', level: 1 },
  { folder: 'src/kernel-check', level: 1 },
  { folder: 'src/report', level: 2 },
  { folder: 'src/targets', level: 2 },
  { folder: 'properties', level: 3 },
  { folder: 'scenarios', level: 3 },
  { folder: 'src/gate', level: 4 },
  { folder: 'src/cli', level: 5 },
];
const QUEUE = 'src/queue';
/** The one folder that may import the built-in queue. */
const QUEUE_IMPORTER = 'src/targets/powercut-queue';
const TEST_ONLY_PACKAGES = ['vitest', '@fast-check/vitest', 'playwright-core'];

// src/cli.ts, the command's entry point, belongs with its subcommands.
const within = (file: string, folder: string) => file.startsWith(`${folder}/`) || file === `${folder}.ts`;
const folderOf = (file: string) => [...LEVELS.map((l) => l.folder), QUEUE].find((f) => within(file, f));
const levelOf = (folder: string) => LEVELS.find((l) => l.folder === folder)?.level;

/** An import from `from` to `to` (repository-relative paths) against the order; null when it is allowed. */
function orderProblem(from: string, to: string): string | null {
  const a = folderOf(from);
  const b = folderOf(to);
  if (a === undefined || b === undefined || a === b) return null;
  if (b === QUEUE) return within(from, QUEUE_IMPORTER) ? null : `${from} imports ${to}: src/queue is imported by its target (${QUEUE_IMPORTER}) alone`;
  if (a === QUEUE) return `${from} imports ${to}: src/queue is a library and imports nothing of the tool`;
  const [la, lb] = [levelOf(a)!, levelOf(b)!];
  if (lb < la) return null;
  return `${from} imports ${to}: ${a} (level ${la}) may import only from folders to its left (${lb === la ? `${b} is a sibling at the same level` : `${b} is level ${lb}`})`;
}

interface ImportEdge {
  from: string;
  /** As written in the source. */
  spec: string;
  /** Repository-relative resolved file, or undefined for a package (or an unresolved path). */
  to?: string;
}

/** The runtime files (those tsconfig.json compiles) and the options that resolve their imports. */
function runtimeConfig(): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    },
  });
  if (!config) throw new Error('tsconfig.json could not be read');
  return config;
}

/** Every import (static, dynamic, type-only, re-export) of the runtime files, resolved as tsc resolves it. */
function runtimeImports(config: ts.ParsedCommandLine): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of config.fileNames) {
    const from = path.relative(REPO_ROOT, file);
    for (const imported of ts.preProcessFile(ts.sys.readFile(file) ?? '', true, true).importedFiles) {
      const resolved = ts.resolveModuleName(imported.fileName, file, config.options, ts.sys).resolvedModule;
      const local = resolved && !resolved.isExternalLibraryImport;
      edges.push({ from, spec: imported.fileName, ...(local ? { to: path.relative(REPO_ROOT, resolved.resolvedFileName) } : {}) });
    }
  }
  return edges;
}

/** The import cycles of a graph: its strongly connected components of more than one file (Tarjan), each sorted. */
export function importCycles(edges: readonly { from: string; to?: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (e.to !== undefined) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The names a registry owns, and the modules (a file, or a folder ending in '/') that may compare them. */
const REGISTRIES: readonly { what: string; names: readonly string[]; modules: readonly string[] }[] = [
  { what: 'crash policy', names: CRASH_POLICIES, modules: ['fusefs/crash-states.ts', 'fusefs/model/policies/'] },
  { what: 'cut kind', names: CUT_KINDS, modules: ['src/faults/cut-kinds.ts'] },
];

/**
 * Where `text` compares a string literal of `names` as a value: `x === 'torn'`, `'one' !== k`,
 * `case 'torn':`, `.includes('torn')`, `['torn', ...].includes(x)`. Naming one (an assignment, an
 * argument, a key) is not comparing it. One line per comparison: "file:line: what".
 */
export function nameComparisons(file: string, text: string, names: readonly string[]): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const named = (n: ts.Node | undefined): n is ts.StringLiteralLike => n !== undefined && ts.isStringLiteralLike(n) && names.includes(n.text);
  const found: string[] = [];
  const report = (at: ts.Node) => found.push(`${file}:${source.getLineAndCharacterOfPosition(at.getStart(source)).line + 1}: ${at.getText(source).slice(0, 80)}`);
  const equality = [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken];
  const visit = (n: ts.Node): void => {
    if (ts.isBinaryExpression(n) && equality.includes(n.operatorToken.kind) && (named(n.left) || named(n.right))) report(n);
    else if (ts.isCaseClause(n) && named(n.expression)) report(n.expression);
    else if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ['includes', 'indexOf'].includes(n.expression.name.text)) {
      const on = n.expression.expression;
      const list = ts.isAsExpression(on) || ts.isParenthesizedExpression(on) ? on.expression : on;
      const listNames = (ts.isArrayLiteralExpression(list) ? list : ts.isAsExpression(list) && ts.isArrayLiteralExpression(list.expression) ? list.expression : undefined)?.elements.some(named);
      if (named(n.arguments[0]) || listNames) report(n);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

/** The longest a function may be, in lines (src/ and fusefs/). */
const MAX_FUNCTION_LINES = 150;

/** Functions of `text` (declarations, methods, arrow and function expressions) over `maxLines`, as "file:line name (N lines)". */
function longFunctions(file: string, text: string, maxLines: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isConstructorDeclaration(n)) {
      const first = source.getLineAndCharacterOfPosition(n.getStart(source)).line;
      const lines = source.getLineAndCharacterOfPosition(n.getEnd()).line - first + 1;
      const name = n.name?.getText(source) ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name.getText(source) : '(anonymous)');
      if (lines > maxLines) found.push(`${file}:${first + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

describe('layout', () => {
  const config = runtimeConfig();
  const files = config.fileNames.map((f) => path.relative(REPO_ROOT, f));
  const edges = runtimeImports(config);

  it('finds the runtime files and their imports (the check is not vacuous)', () => {
    const folders = new Set(files.map(folderOf));
    for (const l of LEVELS) expect(folders, `no runtime file found under ${l.folder}`).toContain(l.folder);
    expect(edges.filter((e) => e.to !== undefined).length).toBeGreaterThan(300);
  });

  it('no runtime module imports a test file, a test helper, or a test framework', () => {
    const offenders = edges
      .filter((e) => TEST_ONLY_PACKAGES.includes(e.spec) || (e.to !== undefined && (/\.test\.ts$/.test(e.to) || e.to === 'properties/use-temp-daemon.ts' || /(^|\/)testing\.ts$/.test(e.to))))
      .map((e) => `${e.from} imports ${e.to ?? e.spec}`);
    expect(offenders).toEqual([]);
  });

  it('imports flow one way: fusefs <- harness <- report, targets <- properties, scenarios <- gate <- cli', () => {
    const problems = edges.flatMap((e) => (e.to === undefined ? [] : [orderProblem(e.from, e.to)])).filter((p) => p !== null);
    expect(problems).toEqual([]);
  });

  it('no import cycle, inside a folder either', () => {
    expect(importCycles(edges).map((c) => c.join(' -> '))).toEqual([]);
  });

  it(`no function in src/ or fusefs/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.filter((f) => /^(src|fusefs)\//.test(f)).flatMap((f) => longFunctions(f, ts.sys.readFile(path.join(REPO_ROOT, f)) ?? '', MAX_FUNCTION_LINES));
    expect(long, 'split it by its stages, each a named function').toEqual([]);
    // The check bites: a function of 4 lines is over a bound of 3, one inside it of 2 is not.
    expect(longFunctions('x.ts', 'function f() {\n  const g = () => {\n  };\n}', 3)).toEqual(['x.ts:1 f (4 lines)']);
  });

  describe('crash policies and cut kinds are compared through their registries, never by name', () => {
    const inModule = (file: string, m: string) => (m.endsWith('/') ? file.startsWith(m) : file === m);
    // Only a file that quotes a name is parsed (most quote none): the check stays well under a second.
    const comparisonsIn = (f: string, names: readonly string[]) => {
      const text = ts.sys.readFile(path.join(REPO_ROOT, f)) ?? '';
      return names.some((n) => text.includes(`'${n}'`) || text.includes(`"${n}"`)) ? nameComparisons(f, text, names) : [];
    };
    const runtime = files.filter((f) => /^(src|fusefs)\//.test(f));
    for (const r of REGISTRIES) {
      it(`no ${r.what} name (${r.names.join(', ')}) compared outside ${r.modules.join(', ')}`, () => {
        const outside = runtime.filter((f) => !r.modules.some((m) => inModule(f, m)));
        const found = outside.flatMap((f) => comparisonsIn(f, r.names));
        expect(found, `ask the ${r.what} registry (${r.modules.join(', ')}) a property instead: docs/design.md, "Where a change goes"`).toEqual([]);
      });
    }

    it('the check bites: comparisons are found, naming a value is not', () => {
      const names = ['torn', 'majority'];
      const code = [
        "if (p === 'torn') f();",
        "const a = 'majority' !== kind;",
        "switch (policy) { case 'torn': break; }",
        "if (used.includes('torn')) g();",
        "if ((['torn', 'x'] as const).includes(p)) h();",
        "const id = { policy: 'torn' }; use('majority'); const m = { torn: 1 }; if (k === 'torn-write') i();",
      ].join('\n');
      expect(nameComparisons('x.ts', code, names).map((l) => l.replace(/: .*/, ''))).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3', 'x.ts:4', 'x.ts:5']);
    });
  });

  it('the cycle check bites: a pair and a ring of three are found, a chain is not', () => {
    expect(importCycles([{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }])).toEqual([['a', 'b']]);
    expect(importCycles([{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'a' }, { from: 'c', to: 'd' }])).toEqual([['a', 'b', 'c']]);
    expect(importCycles([{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'a', to: 'c' }])).toEqual([]);
  });

  it('the order check bites: a back-import, a sibling import and a stray queue import are each refused', () => {
    expect(orderProblem('src/harness/crash-run.ts', 'src/targets/index.ts')).toContain('may import only from folders to its left');
    expect(orderProblem('src/report/load.ts', 'src/gate/gate.ts')).toContain('src/gate is level 4');
    expect(orderProblem('properties/crash-property.ts', 'scenarios/index.ts')).toContain('sibling at the same level');
    expect(orderProblem('src/targets/index.ts', 'src/report/index.ts')).toContain('sibling at the same level');
    expect(orderProblem('src/cli/queue.ts', 'src/queue/inspect.ts')).toContain('imported by its target');
    expect(orderProblem('src/queue/queue.ts', 'src/harness/outcome.ts')).toContain('imports nothing of the tool');
    // And what the order allows.
    expect(orderProblem('src/gate/gate.ts', 'scenarios/index.ts')).toBeNull();
    expect(orderProblem('src/targets/powercut-queue/driver.ts', 'src/queue/index.ts')).toBeNull();
    expect(orderProblem('src/harness/crash-run.ts', 'fusefs/protocol.ts')).toBeNull();
    expect(orderProblem('bench/crash.bench.ts', 'src/queue/queue.ts')).toBeNull();
  });
});

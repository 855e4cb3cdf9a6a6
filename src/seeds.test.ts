// Every fast-check property of the tests is seeded from one place, properties/seed.ts, as the README
// promises ("The property suites of npm test use fixed seeds ...; POWERCUT_SEED=N npm test explores
// another seed"). Checked two ways:
// 1. In the source, with the TypeScript compiler's parser: every fast-check call of a test file or of
//    properties/ (fc.assert, fc.check, fc.sample, @fast-check/vitest's test.prop and it.prop, and
//    runCrashSuite, which hands its seed to fc.check) passes either no seed, and so runs with
//    fast-check's global one, or a seed that comes from seedFromEnv(). Anything else (a literal,
//    Date.now(), a value the check cannot trace to seedFromEnv) fails, naming the file and line; so
//    does fc.configureGlobal anywhere but vitest.setup.ts.
// 2. At run time: vitest.setup.ts made seedFromEnv()'s seed the global one, and both an fc.check
//    without a seed and a test.prop run with it.
import path from 'node:path';
import fc from 'fast-check';
import { test as propTest } from '@fast-check/vitest';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { seedFromEnv } from '../properties/seed.js';
import { REPO_ROOT } from './harness/dist-path.js';

/** Where seedFromEnv may be imported from (crash-property.ts re-exports it). */
const SEED_MODULES = ['properties/seed.ts', 'properties/crash-property.ts'];
const CRASH_PROPERTY = 'properties/crash-property.ts';
/** The one file that may set fast-check's global configuration. */
const SETUP_FILE = 'vitest.setup.ts';
const FC_RUNNERS = ['assert', 'check', 'sample'] as const;

/**
 * Calls seeded otherwise on purpose, each with the reason. One that matches no call any more fails
 * too, so the list cannot outlive what it excuses.
 */
const EXEMPT: readonly { file: string; call: string; seed: string; why: string }[] = [
  {
    file: 'src/gate/cli.test.ts',
    call: 'runCrashSuite',
    seed: '1',
    why: 'its daemon is killed before the first input: the property stops at a harness error before it judges any input, so no seed can change what it checks',
  },
];

interface Call {
  file: string;
  line: number;
  /** As written: fc.assert, test.prop, runCrashSuite, ... */
  call: string;
}
interface Problem extends Call {
  message: string;
  /** The seed expression as written, when the problem is a seed. */
  seed?: string;
}

/** What a file's imports name: fast-check's namespace, its runners, the test.prop roots, the shared seed function. */
interface Bindings {
  fc: Set<string>;
  runners: Map<string, string>;
  propRoots: Set<string>;
  seedFromEnv: Set<string>;
}

const repoPath = (from: string, spec: string) => path.posix.normalize(path.posix.join(path.posix.dirname(from), spec)).replace(/\.js$/, '.ts');

function bindingsOf(sf: ts.SourceFile, file: string): Bindings {
  const b: Bindings = { fc: new Set(), runners: new Map(), propRoots: new Set(), seedFromEnv: new Set() };
  const named = (module: string, imported: string, local: string) => {
    if (module === 'fast-check' && (FC_RUNNERS as readonly string[]).includes(imported)) b.runners.set(local, imported);
    if (module === 'fast-check' && imported === 'configureGlobal') b.runners.set(local, imported);
    if (module === '@fast-check/vitest' && imported === 'fc') b.fc.add(local);
    if (module === '@fast-check/vitest' && (imported === 'test' || imported === 'it')) b.propRoots.add(local);
    if (module.startsWith('.') && SEED_MODULES.includes(repoPath(file, module)) && imported === 'seedFromEnv') b.seedFromEnv.add(local);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.importClause) {
      const module = node.moduleSpecifier.text;
      const clause = node.importClause;
      if (clause.name && module === 'fast-check') b.fc.add(clause.name.text);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings) && module === 'fast-check') b.fc.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) named(module, (e.propertyName ?? e.name).text, e.name.text);
    }
    // const { seedFromEnv } = await import('../properties/seed.js')
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      const init = unwrap(node.initializer);
      const call = ts.isAwaitExpression(init) ? unwrap(init.expression) : init;
      if (ts.isCallExpression(call) && call.expression.kind === ts.SyntaxKind.ImportKeyword && call.arguments[0] && ts.isStringLiteral(call.arguments[0])) {
        for (const e of node.name.elements) {
          const imported = e.propertyName ?? e.name;
          if (ts.isIdentifier(imported) && ts.isIdentifier(e.name)) named(call.arguments[0].text, imported.text, e.name.text);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return b;
}

function unwrap(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
  return e;
}

/** The initializer of the `const` that `id` names in its scope, or why there is none to follow. */
function constValue(id: ts.Identifier): ts.Expression | string {
  for (let scope: ts.Node | undefined = id.parent; scope; scope = scope.parent) {
    if (ts.isFunctionLike(scope) && scope.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === id.text)) return `${id.text} is a parameter`;
    const statements = ts.isSourceFile(scope) || ts.isBlock(scope) || ts.isModuleBlock(scope) ? scope.statements : undefined;
    for (const s of statements ?? []) {
      if (!ts.isVariableStatement(s)) continue;
      for (const d of s.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || d.name.text !== id.text) continue;
        if (!(s.declarationList.flags & ts.NodeFlags.Const)) return `${id.text} is not a const`;
        return d.initializer ?? `${id.text} has no value`;
      }
    }
  }
  return `${id.text} is not declared in this file`;
}

/** Problems of one fast-check call's options, as messages; none when its seed is the shared one or absent. */
function optionProblems(options: ts.Expression | undefined, b: Bindings, sf: ts.SourceFile): { message: string; seed?: string }[] {
  const text = (e: ts.Node) => e.getText(sf).replace(/\s+/g, ' ');
  const sharedCall = (e: ts.Expression) => ts.isCallExpression(e) && ts.isIdentifier(e.expression) && b.seedFromEnv.has(e.expression.text);
  const seedProblems = (e: ts.Expression, depth: number): { message: string; seed?: string }[] => {
    const u = unwrap(e);
    if (ts.isPropertyAccessExpression(u) && u.name.text === 'seed' && sharedCall(unwrap(u.expression))) return [];
    if (ts.isIdentifier(u) && depth < 10) {
      const v = constValue(u);
      if (typeof v !== 'string') return seedProblems(v, depth + 1).map((p) => ({ ...p, message: `${p.message} (through ${u.text})` }));
      return [{ message: `passes seed ${text(u)}, which cannot be traced to seedFromEnv() of properties/seed.ts: ${v}`, seed: text(u) }];
    }
    return [{ message: `passes seed ${text(u)}, not one from seedFromEnv() of properties/seed.ts`, seed: text(u) }];
  };
  const spreadProblems = (e: ts.Expression, depth: number): { message: string; seed?: string }[] => {
    const u = unwrap(e);
    if (sharedCall(u)) return [];
    if (ts.isObjectLiteralExpression(u)) return objectProblems(u, depth + 1);
    if (ts.isConditionalExpression(u)) return [...spreadProblems(u.whenTrue, depth + 1), ...spreadProblems(u.whenFalse, depth + 1)];
    if (ts.isIdentifier(u) && depth < 10) {
      const v = constValue(u);
      if (typeof v !== 'string') return spreadProblems(v, depth + 1);
      return [{ message: `spreads ${text(u)} into its options, which may hold a seed that cannot be traced to seedFromEnv() of properties/seed.ts: ${v}` }];
    }
    return [{ message: `spreads ${text(u)} into its options, which may hold a seed not from seedFromEnv() of properties/seed.ts` }];
  };
  const objectProblems = (o: ts.ObjectLiteralExpression, depth: number): { message: string; seed?: string }[] =>
    o.properties.flatMap((p) => {
      if (ts.isSpreadAssignment(p)) return spreadProblems(p.expression, depth);
      if (ts.isShorthandPropertyAssignment(p) && p.name.text === 'seed') return seedProblems(p.name, depth);
      if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === 'seed') return seedProblems(p.initializer, depth);
      if (ts.isPropertyAssignment(p) && ts.isComputedPropertyName(p.name)) return [{ message: `has a computed option ${text(p.name)}, which may be its seed` }];
      return [];
    });
  if (!options) return [];
  const u = unwrap(options);
  if (ts.isObjectLiteralExpression(u)) return objectProblems(u, 0);
  if (ts.isNumericLiteral(u)) return []; // fc.sample(arb, n): a count
  return spreadProblems(u, 0).map((p) => ({ ...p, message: p.message.replace(/^spreads (.*) into its options/, 'takes its options from $1') }));
}

/** Every fast-check call of one file, and the problems of its seeds. `file` is repository-relative. */
function checkSeeds(file: string, source: string): { calls: Call[]; problems: Problem[] } {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const b = bindingsOf(sf, file);
  const calls: Call[] = [];
  const problems: Problem[] = [];
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const rootOf = (e: ts.Expression): ts.Expression => (ts.isPropertyAccessExpression(e) ? rootOf(e.expression) : e);
  // runCrashSuite's own fc.check passes on its caller's seed: the callers are what is checked.
  const insideRunCrashSuite = (n: ts.Node): boolean => {
    for (let p: ts.Node | undefined = n.parent; p; p = p.parent) if (ts.isFunctionDeclaration(p) && p.name?.text === 'runCrashSuite') return true;
    return false;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      let found: { call: string; options: ts.Expression | undefined } | undefined;
      let configures = false;
      if (ts.isPropertyAccessExpression(callee)) {
        const name = callee.name.text;
        const obj = callee.expression;
        if (ts.isIdentifier(obj) && b.fc.has(obj.text) && (FC_RUNNERS as readonly string[]).includes(name)) found = { call: `${obj.text}.${name}`, options: node.arguments[1] };
        if (ts.isIdentifier(obj) && b.fc.has(obj.text) && name === 'configureGlobal') configures = true;
        const root = rootOf(obj);
        if (name === 'prop' && ts.isIdentifier(root) && b.propRoots.has(root.text)) found = { call: `${obj.getText(sf)}.prop`, options: node.arguments[1] };
      } else if (ts.isIdentifier(callee)) {
        const runner = b.runners.get(callee.text);
        if (runner === 'configureGlobal') configures = true;
        else if (runner !== undefined) found = { call: callee.text, options: node.arguments[1] };
        if (callee.text === 'runCrashSuite') found = { call: 'runCrashSuite', options: node.arguments[2] };
      }
      if (configures) {
        const call = { file, line: lineOf(node), call: 'fc.configureGlobal' };
        calls.push(call);
        if (file !== SETUP_FILE) problems.push({ ...call, message: `sets fast-check's global configuration, which ${SETUP_FILE} alone sets (the shared seed)` });
      }
      if (found && !(file === CRASH_PROPERTY && insideRunCrashSuite(node))) {
        const call = { file, line: lineOf(node), call: found.call };
        calls.push(call);
        for (const p of optionProblems(found.options, b, sf)) problems.push({ ...call, ...p });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { calls, problems };
}

/** The test files and properties/ files tsconfig.test.json covers (every test file vitest runs is among them). */
function scannedFiles(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.test.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(`tsconfig.test.json: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    },
  });
  if (!config) throw new Error('tsconfig.test.json could not be read');
  return config.fileNames.map((f) => path.relative(REPO_ROOT, f)).filter((f) => f.endsWith('.test.ts') || f.startsWith('properties/') || f === SETUP_FILE);
}

const format = (p: Problem) => `${p.file}:${p.line}: ${p.call} ${p.message}`;

describe('every fast-check property is seeded from properties/seed.ts', () => {
  const found = scannedFiles().map((file) => checkSeeds(file, ts.sys.readFile(path.join(REPO_ROOT, file)) ?? ''));
  const calls = found.flatMap((f) => f.calls);
  const problems = found.flatMap((f) => f.problems);
  const exempted = (p: Problem) => EXEMPT.some((e) => e.file === p.file && e.call === p.call && e.seed === p.seed);

  it('finds the properties of the test files (the check is not vacuous)', () => {
    const kinds = new Set(calls.map((c) => c.call));
    for (const kind of ['fc.assert', 'fc.check', 'fc.sample', 'test.prop', 'runCrashSuite', 'fc.configureGlobal']) expect(kinds, `no ${kind} call found`).toContain(kind);
    const files = new Set(calls.map((c) => c.file));
    for (const f of ['fusefs/differential.test.ts', 'fusefs/model/fs-model.test.ts', 'fusefs/model/torn.test.ts', 'fusefs/model/state-space.test.ts', 'fusefs/model/grow-buffer.test.ts',
      'src/queue/lock.test.ts', 'src/queue/acks.test.ts', 'src/queue/format.test.ts', 'properties/crash.test.ts', 'properties/replay.test.ts', 'src/gate/cli.test.ts', SETUP_FILE]) {
      expect(files, `no fast-check call found in ${f}`).toContain(f);
    }
    expect(calls.length).toBeGreaterThan(40);
  });

  it('every property passes no seed (the global one) or a seed from seedFromEnv()', () => {
    expect(problems.filter((p) => !exempted(p)).map(format)).toEqual([]);
    for (const e of EXEMPT) expect(problems.some((p) => e.file === p.file && e.call === p.call && e.seed === p.seed), `the exemption of ${e.file} (${e.call}, seed ${e.seed}) matches no call any more: remove it`).toBe(true);
  });

  it("the check bites: a literal, a traced literal, a clock, an unknown spread, another module's seedFromEnv and a global configuration each fail, naming the line", () => {
    const snippet = [
      "import fc from 'fast-check';",
      "import { test } from '@fast-check/vitest';",
      "import { runCrashSuite } from '../properties/crash-property.js';",
      "import { seedFromEnv } from '../properties/seed.js';",
      "const FIXED = 7;",
      "function fake() { return { seed: 1 }; }",
      "fc.assert(p, { numRuns: 5, seed: 7 });",
      "fc.check(p, { seed: FIXED });",
      "fc.sample(arb, { numRuns: 2, seed: Date.now() });",
      "test.prop([fc.nat()], { seed: 3 })('x', () => {});",
      "export async function f(opts: object) { await runCrashSuite(d, arb, { numRuns: 1, ...opts }); }",
      "fc.assert(p, { seed: fake().seed });",
      "fc.configureGlobal({ seed: 3 });",
      // Seeded as they should be: no problem.
      "fc.assert(p);",
      "fc.assert(p, { numRuns: 9, seed: seedFromEnv(7).seed });",
      "fc.sample(arb, 4);",
      "const SEED = seedFromEnv().seed;",
      "runCrashSuite(d, arb, { numRuns: 1, seed: SEED, ...seedFromEnv(), ...(x ? { path: 'a' } : {}) });",
    ].join('\n');
    const { calls: snippetCalls, problems: snippetProblems } = checkSeeds('src/snippet.test.ts', snippet);
    expect(snippetCalls).toHaveLength(11);
    expect(snippetProblems.map(format)).toEqual([
      'src/snippet.test.ts:7: fc.assert passes seed 7, not one from seedFromEnv() of properties/seed.ts',
      'src/snippet.test.ts:8: fc.check passes seed 7, not one from seedFromEnv() of properties/seed.ts (through FIXED)',
      'src/snippet.test.ts:9: fc.sample passes seed Date.now(), not one from seedFromEnv() of properties/seed.ts',
      'src/snippet.test.ts:10: test.prop passes seed 3, not one from seedFromEnv() of properties/seed.ts',
      'src/snippet.test.ts:11: runCrashSuite spreads opts into its options, which may hold a seed that cannot be traced to seedFromEnv() of properties/seed.ts: opts is a parameter',
      'src/snippet.test.ts:12: fc.assert passes seed fake().seed, not one from seedFromEnv() of properties/seed.ts',
      "src/snippet.test.ts:13: fc.configureGlobal sets fast-check's global configuration, which vitest.setup.ts alone sets (the shared seed)",
    ]);
    // A seedFromEnv of another module is not the shared one.
    const lookAlike = ["import fc from 'fast-check';", "import { seedFromEnv } from './my-seed.js';", 'fc.assert(p, { seed: seedFromEnv().seed });'].join('\n');
    expect(checkSeeds('src/other.test.ts', lookAlike).problems.map(format)).toEqual(['src/other.test.ts:3: fc.assert passes seed seedFromEnv().seed, not one from seedFromEnv() of properties/seed.ts']);
  });

  it('at run time the global seed is seedFromEnv()\'s, and an fc.check without a seed runs with it', () => {
    expect(fc.readConfigureGlobal().seed).toBe(seedFromEnv().seed);
    expect(fc.check(fc.property(fc.nat(), () => true), { numRuns: 1 }).seed).toBe(seedFromEnv().seed);
  });

  propTest.prop([fc.nat()], { numRuns: 1 })('@fast-check/vitest runs test.prop with it too', () => {
    expect(expect.getState().currentTestName).toContain(`(with seed=${seedFromEnv().seed})`);
  });
});

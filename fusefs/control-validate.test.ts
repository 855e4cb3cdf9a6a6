// The control requests' validation (pure): a hypothesis's inserted fsync may name its node (a
// cluster's recording), and bad input gets an error naming the field.
import { describe, expect, it } from 'vitest';
import { parseRequest } from './control-validate.js';

const states = (hypothesis: unknown) => parseRequest(JSON.stringify({ cmd: 'states', policies: ['lose-unsynced'], maxStates: 10, maxStatesPerInterval: 4, sectorPatterns: 1, hypothesis }));

describe('a hypothesis in a control request', () => {
  it('keeps each inserted fsync\'s node (by inode or by path), and leaves it out when none is named', () => {
    const r = states({ fsyncAfter: [{ afterOp: 3, path: '/', node: 1 }, { afterOp: 4, ino: 2, node: 0 }, { afterOp: 5, ino: 2 }], fsyncSkip: [7] });
    expect(r).toMatchObject({ cmd: 'states', hypothesis: { fsyncAfter: [{ afterOp: 3, path: '/', node: 1 }, { afterOp: 4, ino: 2, node: 0 }, { afterOp: 5, ino: 2 }], fsyncSkip: [7] } });
    expect((r as { hypothesis: { fsyncAfter: object[] } }).hypothesis.fsyncAfter[2]).not.toHaveProperty('node');
  });

  it('refuses a node that is not a whole number from 0, naming the field', () => {
    expect(() => states({ fsyncAfter: [{ afterOp: 3, path: '/', node: -1 }] })).toThrow(/hypothesis\.fsyncAfter.*'node'/);
    expect(() => states({ fsyncAfter: [{ afterOp: 3, path: '/', node: 'one' }] })).toThrow(/hypothesis\.fsyncAfter.*'node'/);
    expect(() => states({ fsyncAfter: [{ afterOp: 3, path: '/', nodes: [1] }] })).toThrow(/nodes/);
  });

  it('takes the hypothesis on state-image, load-state and units too', () => {
    const state = { afterOp: 2, policy: 'lose-unsynced' };
    const h = { fsyncAfter: [{ afterOp: 1, ino: 1, node: 2 }] };
    for (const req of [{ cmd: 'units', state, hypothesis: h }, { cmd: 'load-state', state, hypothesis: h }, { cmd: 'state-image', state, out: '/tmp/x', hypothesis: h }]) {
      expect(parseRequest(JSON.stringify(req)), req.cmd).toMatchObject({ hypothesis: h });
    }
  });
});

describe('a starting state in a control request', () => {
  it('is the live filesystem, an image folder, or none again; anything else is refused naming the field', () => {
    expect(parseRequest('{"cmd":"starting-state"}')).toEqual({ cmd: 'starting-state' });
    expect(parseRequest('{"cmd":"starting-state","from":"/tmp/img"}')).toEqual({ cmd: 'starting-state', from: '/tmp/img' });
    expect(parseRequest('{"cmd":"starting-state","clear":true}')).toEqual({ cmd: 'starting-state', clear: true });
    expect(() => parseRequest('{"cmd":"starting-state","clear":true,"from":"/x"}')).toThrow(/give 'from' \(an image folder\) or 'clear', not both/);
    expect(() => parseRequest('{"cmd":"starting-state","clear":1}')).toThrow(/'clear' must be true or false/);
    expect(() => parseRequest('{"cmd":"starting-state","keep":true}')).toThrow(/keep/);
    expect(parseRequest('{"cmd":"image","out":"/tmp/x","state":"start"}')).toEqual({ cmd: 'image', out: '/tmp/x', state: 'start' });
  });
});

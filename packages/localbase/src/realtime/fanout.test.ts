import { describe, expect, it } from 'vitest';
import { Fanout } from './fanout.ts';

/** A fan-out whose deferred turns run only when the test says so. */
function manual(budget: number) {
  const turns: (() => void)[] = [];
  const fanout = new Fanout<string>(budget, (run) => turns.push(run));
  const nextTurn = (): void => turns.shift()!();
  return { fanout, turns, nextTurn };
}

describe('a room fan-out', () => {
  it('writes a message that fits the budget at once', () => {
    const { fanout, turns } = manual(100);
    const got: string[] = [];
    fanout.push(['a', 'b', 'c'], (m) => (got.push(m), 10));
    expect(got).toEqual(['a', 'b', 'c']);
    expect(turns).toHaveLength(0);
    expect(fanout.pending).toBe(0);
  });

  it('writes a large message over several turns, a budget of bytes each', () => {
    const { fanout, turns, nextTurn } = manual(25);
    const got: string[] = [];
    fanout.push(['a', 'b', 'c', 'd', 'e', 'f', 'g'], (m) => (got.push(m), 10));
    expect(got).toEqual(['a', 'b', 'c']); // 30 bytes ≥ 25: the rest waits for the next turn
    expect(turns).toHaveLength(1);
    nextTurn();
    expect(got).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    nextTurn();
    expect(got).toHaveLength(7);
    expect(turns).toHaveLength(0);
    expect(fanout.pending).toBe(0);
  });

  it('keeps the order of a room’s messages for each member: a small one waits behind a large one', () => {
    const { fanout, nextTurn, turns } = manual(15);
    const got: string[] = [];
    fanout.push(['a', 'b', 'c'], (m) => (got.push(`big→${m}`), 10));
    fanout.push(['a', 'b', 'c'], (m) => (got.push(`small→${m}`), 1));
    expect(got).toEqual(['big→a', 'big→b']);
    while (turns.length) nextTurn();
    expect(got).toEqual(['big→a', 'big→b', 'big→c', 'small→a', 'small→b', 'small→c']);
  });

  it('sends to the members of the moment the message was sent, and counts skipped members as nothing', () => {
    const { fanout, nextTurn, turns } = manual(10);
    const members = new Set(['a', 'b', 'c']);
    const got: string[] = [];
    const send = (m: string): number => {
      if (!members.has(m)) return 0;
      got.push(m);
      return 10;
    };
    fanout.push(members, send);
    members.add('d'); // joined after: not a recipient
    members.delete('b'); // left before its turn: skipped
    while (turns.length) nextTurn();
    expect(got).toEqual(['a', 'c']);
  });

  it('only queues a message caused by a send (a member cut as far behind, whose leave is announced)', () => {
    const { fanout } = manual(100);
    const got: string[] = [];
    fanout.push(['a', 'b'], (m) => {
      got.push(`first→${m}`);
      if (m === 'a') fanout.push(['b'], (n) => (got.push(`leave→${n}`), 1));
      return 1;
    });
    expect(got).toEqual(['first→a', 'first→b', 'leave→b']);
  });
});

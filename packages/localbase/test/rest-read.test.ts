import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
beforeAll(async () => {
  f = await restFixture();
  const { alice, bob, run } = f;
  const a = await alice.client.from('rt_todos').insert([
    { run, title: 'a1', priority: 1, tags: ['x', 'y'], meta: { k: 1 }, done: false },
    { run, title: 'a2', priority: 3, done: true, tags: [], meta: {} },
    { run, title: 'a3', priority: null, done: false, tags: [], meta: {} },
  ]);
  expect(a.error).toBeNull();
  expect((await bob.client.from('rt_todos').insert({ run, title: 'b1', priority: 2 })).error).toBeNull();
});
afterAll(async () => {
  await f?.lb.stop();
});

describe('smoke', () => {
  it('select own rows', async () => {
    const r = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('title');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ title: 'a1' }, { title: 'a2' }, { title: 'a3' }]);
    const raw = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&apikey=${f.lb.anonKey}`, { bearer: f.bob.token });
    expect(raw.json).toEqual([{ title: 'b1' }]);
  });
});

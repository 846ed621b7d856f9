// A torchrun job in the monitor: a store per rank, the rank picker's choice, the straggler
// comparison and the job's view, on synthetic ranks whose step times differ.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { JobStore, MAX_RANKS, pickRank } from '../../../../extension/src/monitor/jobStore';
import { buildJobView, buildView } from '../../../../extension/src/monitor/monitorView';
import { MAX_PENDING, MIN_STEPS, Stragglers, STRAGGLER_EXCESS, stragglerNamed, stragglerSentence } from '../../../../extension/src/monitor/stragglers';
import { Batch, Hello, Step } from '../../../../extension/src/monitor/wire';
import { step } from './synthetic';

const hello = (rank: number | null, world: number | null = null): Hello => ({ pid: 100 + (rank ?? 0), rank, world_size: world, script: '/ws/ddp.py', version: 1 });
const batch = (steps: Step[], findings: Batch['findings'] = []): Batch => ({ steps, evals: [], user: [], findings, dropped: 0 });

/** A DDP step: `own` seconds of the rank's own work; `wait` more in backward, where DDP waits for the slowest. */
function ddpStep(i: number, own: number, wait: number, over: Partial<Step> = {}): Step {
  const base = { data: 0.002, forward: 0.004, backward: 0.006, optimizer: 0.001 };
  const other = own - (base.data + base.forward + base.backward + base.optimizer);
  return step(i, { time: { ...base, backward: base.backward + wait, other }, ...over });
}

/** A job of `own.length` ranks in lockstep: each rank's own work per step; the others wait for the slowest. */
function job(own: number[], steps: number, loss = (rank: number) => 1 + rank): JobStore {
  const j = new JobStore('Debug with torchrun (2 processes)', 0);
  own.forEach((_, r) => j.open(hello(r, own.length)));
  const slowest = Math.max(...own);
  for (let i = 0; i < steps; i++) {
    own.forEach((t, r) => j.addBatch(r, batch([ddpStep(i, t, slowest - t, { loss: loss(r) })])));
  }
  return j;
}

test('a store per rank: each rank its own steps and findings, within the same per-series limits', () => {
  const j = job([0.02, 0.05], 10);
  j.addBatch(1, batch([], [{ kind: 'loss_spike', severity: 'warning', step: 3, sentence: 'spike on rank 1', where: null, series: 'opt0' }]));
  assert.deepEqual(j.ranks, [0, 1]);
  assert.equal(j.world, 2);
  assert.equal(j.store(0)!.steps, 10);
  assert.equal(j.store(1)!.tracks.get('opt0')!.rows()[0].lastValue(0), 2, "rank 1's loss");
  assert.equal(j.store(0)!.findings.size, 0);
  assert.equal(j.store(1)!.findings.size, 1);
  assert.equal(j.store(1)!.info.hello!.pid, 101);
  assert.equal(j.lastStep, 9);
});

test('a single process (no rank) is rank 0 and its view is the single-run view, with no rank picker', () => {
  const j = new JobStore('Debug current file', 0);
  j.open(hello(null));
  for (let i = 0; i < 50; i++) {
    j.addBatch(0, batch([step(i)]));
  }
  const v = buildJobView(j, null)!;
  assert.equal(v.ranks, undefined);
  assert.deepEqual(v, buildView(j.store(0)!));
  assert.equal(j.stragglers.summary(), null, 'nothing to compare with one rank');
});

test('ranks beyond MAX_RANKS are counted, not stored', () => {
  const j = new JobStore('big job', 0);
  for (let r = 0; r < MAX_RANKS + 3; r++) {
    j.open(hello(r, MAX_RANKS + 3));
  }
  assert.equal(j.ranks.length, MAX_RANKS);
  assert.equal(j.ignoredRanks, 3);
  assert.equal(j.world, MAX_RANKS);
});

test('the rank picker: the rank asked for when it reported, else rank 0, else the lowest', () => {
  assert.equal(pickRank([0, 1, 2], 2), 2);
  assert.equal(pickRank([0, 1, 2], null), 0);
  assert.equal(pickRank([0, 1], 5), 0, 'a rank that has not reported (or left the list): rank 0');
  assert.equal(pickRank([3, 1], null), 1, 'rank 0 not connected yet: the lowest');
  assert.equal(pickRank([], 1), null);
});

test("the job's view: rank 0 by default, the picked rank's charts, verdicts and steps otherwise", () => {
  const j = job([0.02, 0.05], 40);
  j.addBatch(1, batch([], [{ kind: 'loss_spike', severity: 'warning', step: 3, sentence: 'spike on rank 1', where: null, series: 'opt0' }]));
  const zero = buildJobView(j, null)!;
  assert.deepEqual(zero.ranks!.list, [0, 1]);
  assert.equal(zero.ranks!.shown, 0);
  assert.equal(zero.findings.length, 0);
  assert.equal(zero.charts[0].series[0].values[0], 1, "rank 0's loss");
  const one = buildJobView(j, 1)!;
  assert.equal(one.ranks!.shown, 1);
  assert.deepEqual(
    one.findings.map((f) => f.sentence),
    ['spike on rank 1'],
  );
  assert.equal(one.charts[0].series[0].values[0], 2, "rank 1's loss");
  // The straggler chart follows the step time, with the picked rank's own time.
  const ids = one.charts.map((c) => c.id);
  assert.equal(ids[ids.indexOf('step_time') + 1], 'rank_step_time');
  const across = one.charts.find((c) => c.id === 'rank_step_time')!;
  assert.deepEqual(
    across.series.map((s) => s.label),
    ['slowest rank', 'other ranks (median)', 'rank 1 (shown)'],
  );
  assert.equal(one.ranks!.stragglers!.rank, 1);
  assert.equal(one.ranks!.stragglers!.named, true);
  assert.equal(buildJobView(j, 7)!.ranks!.shown, 0, 'a rank that never reported: rank 0');
});

test('stragglers: rank 1 sleeps each step; every rank takes as long (DDP waits), yet rank 1 is named, by its own time', () => {
  const j = job([0.02, 0.05, 0.021, 0.019], 30);
  const s = j.stragglers.summary()!;
  assert.equal(s.series, 'opt0');
  assert.equal(s.steps, 30);
  assert.equal(s.rank, 1);
  assert.equal(s.share, 1);
  assert.ok(Math.abs(s.slowest - 0.05) < 1e-9, `${s.slowest}`);
  assert.ok(Math.abs(s.others - 0.02) < 1e-9, `${s.others}`);
  assert.ok(Math.abs(s.excess - 1.5) < 1e-9);
  assert.match(stragglerSentence(s), /^Slowest: rank 1 \(in 100% of 30 steps\), \+150% over the other ranks' median/);
  // Per step: the slowest rank's own time is the maximum, and the rank is named.
  const row = j.stragglers.track.rows()[5];
  assert.ok(Math.abs(row.lastValue(0) - 0.05) < 1e-9);
  assert.equal(row.lastValue(2), 1);
  assert.ok(Math.abs(row.lastValue(1) - 0.02) < 1e-9, 'the median of the other ranks');
});

test('stragglers: no verdict before MIN_STEPS compared steps (a first step says little), then the slowest is named', () => {
  const early = job([0.02, 0.05], 1);
  const one = early.stragglers.summary()!;
  assert.equal(one.steps, 1);
  assert.equal(stragglerNamed(one), false);
  assert.equal(stragglerSentence(one), `Comparing the ranks: 1 step of ${MIN_STEPS} so far; the slowest rank is named after ${MIN_STEPS} steps.`);
  assert.equal(buildJobView(early, 0)!.ranks!.stragglers!.named, false, 'the view does not name it either');
  const almost = job([0.02, 0.05], MIN_STEPS - 1).stragglers.summary()!;
  assert.match(stragglerSentence(almost), new RegExp(`^Comparing the ranks: ${MIN_STEPS - 1} steps of ${MIN_STEPS}`));
  const enough = job([0.02, 0.05], MIN_STEPS).stragglers.summary()!;
  assert.equal(stragglerNamed(enough), true);
  assert.match(stragglerSentence(enough), new RegExp(`^Slowest: rank 1 \\(in 100% of ${MIN_STEPS} steps\\)`));
});

test('stragglers: ranks that do not synchronise (no waits) are compared by their step times', () => {
  const st = new Stragglers(() => 2);
  for (let i = 0; i < 10; i++) {
    st.add(0, step(i, { time: { forward: 0.03, backward: 0.01 } }));
    st.add(1, step(i, { time: { forward: 0.01, backward: 0.01 } }));
  }
  const s = st.summary()!;
  assert.equal(s.rank, 0);
  assert.ok(Math.abs(s.slowest - 0.04) < 1e-9, 'no wait to take out: the whole step');
  assert.ok(Math.abs(s.others - 0.02) < 1e-9);
});

test('stragglers, the limit: a longer backward reads as a wait (DDP hides which rank computed it longer)', () => {
  const st = new Stragglers(() => 2);
  st.add(0, step(0, { time: { forward: 0.01, backward: 0.03 } }));
  st.add(1, step(0, { time: { forward: 0.01, backward: 0.01 } }));
  const s = st.summary()!;
  assert.ok(Math.abs(s.slowest - s.others) < 1e-9, 'both ranks 0.02 s of own time');
});

test('stragglers: ranks within 5% of each other have no straggler worth naming', () => {
  const j = job([0.02, 0.0202], 25);
  const s = j.stragglers.summary()!;
  assert.ok(s.excess < STRAGGLER_EXCESS);
  assert.match(stragglerSentence(s), /^No straggler/);
});

test('stragglers: the slowest rank most often is named, when it changes from step to step', () => {
  const st = new Stragglers(() => 3);
  for (let i = 0; i < 9; i++) {
    const slow = i % 3 === 0 ? 2 : 0; // rank 0 slowest in 6 of 9 steps
    for (let r = 0; r < 3; r++) {
      st.add(r, step(i, { time: { other: r === slow ? 0.05 : 0.01, backward: 0 } }));
    }
  }
  const s = st.summary()!;
  assert.equal(s.rank, 0);
  assert.ok(Math.abs(s.share - 6 / 9) < 1e-12);
});

test('stragglers: a step waits for every rank; a rank far behind is compared without, and its late steps counted', () => {
  const st = new Stragglers(() => 2);
  st.add(0, step(0));
  assert.equal(st.summary(), null, 'step 0 waits for rank 1');
  st.add(1, step(0));
  assert.equal(st.summary()!.steps, 1);
  for (let i = 1; i <= MAX_PENDING + 1; i++) {
    st.add(0, step(i)); // rank 1 stops reporting
  }
  assert.equal(st.track.rows().length, 1, 'steps with one rank are not comparisons');
  assert.equal(st.own.get(0)!.steps, 2, 'but rank 0 own time is kept for the steps pushed out');
  st.add(1, step(1));
  assert.equal(st.late, 1);
  st.flush();
  assert.equal(st.own.get(0)!.steps, MAX_PENDING + 2);
});

test('stragglers: only the first step series is compared (a GAN rank has two)', () => {
  const st = new Stragglers(() => 2);
  for (const r of [0, 1]) {
    st.add(r, step(0, { series: 'opt0' }));
    st.add(r, step(0, { series: 'opt1', time: { other: r ? 9 : 0 } }));
  }
  assert.equal(st.summary()!.series, 'opt0');
  assert.ok(st.summary()!.slowest < 1);
});

test('the job ended: steps some ranks never sent are compared with those that did', () => {
  const j = job([0.02, 0.05], 5);
  j.addBatch(0, batch([ddpStep(5, 0.02, 0.03)]));
  assert.equal(j.stragglers.own.get(0)!.steps, 5);
  j.setState('ended', 1);
  assert.equal(j.stragglers.own.get(0)!.steps, 6);
  assert.equal(j.store(0)!.info.state, 'ended');
});

test('a rank whose first data comes after the debugger paused starts paused', () => {
  const j = new JobStore('job', 0);
  j.open(hello(0, 2));
  j.addBatch(0, batch([step(0)]));
  assert.equal(j.debuggerMoved('paused', 1), true);
  j.open(hello(1, 2));
  j.addBatch(1, batch([step(0)]));
  assert.equal(j.store(1)!.info.state, 'paused');
});

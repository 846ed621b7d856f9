import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  isSubprocessAttach,
  rankName,
  torchrunArgs,
  torchrunLaunch,
  TorchrunConfigError,
} from '../../../../extension/src/debug/torchrunConfig';

test('"torchrun" becomes python -m torch.distributed.run with the program after its options', () => {
  const out = torchrunLaunch({ program: '/w/train.py', args: ['--lr', '0.1'], torchrun: { nproc_per_node: 2 } });
  assert.equal(out.module, 'torch.distributed.run');
  assert.deepEqual(out.args, ['--nproc-per-node', '2', '--standalone', '/w/train.py', '--lr', '0.1']);
  assert.equal(out.subProcess, true);
  assert.equal(out.program, undefined);
  assert.equal(out.torchrun, undefined);
});

test('a rendezvous given by the user is kept and --standalone is not added', () => {
  assert.deepEqual(torchrunArgs({ nproc_per_node: 4, rdzv_endpoint: 'node0:29400', nnodes: 2 }), [
    '--nproc-per-node',
    '4',
    '--rdzv-endpoint',
    'node0:29400',
    '--nnodes',
    '2',
  ]);
});

test('true means two processes; no "torchrun" leaves the configuration alone', () => {
  assert.deepEqual(torchrunLaunch({ program: 'a.py', torchrun: true }).args, [
    '--nproc-per-node',
    '2',
    '--standalone',
    'a.py',
  ]);
  const plain = { program: 'a.py' };
  assert.equal(torchrunLaunch(plain), plain);
});

test('bad values say what is wrong', () => {
  assert.throws(() => torchrunLaunch({ program: 'a.py', torchrun: 2 }), TorchrunConfigError);
  assert.throws(() => torchrunLaunch({ torchrun: {} }), /needs "program"/);
  assert.throws(() => torchrunArgs({ nproc_per_node: [2] }), /must be a string, a number or true/);
});

test('a subprocess child attaches through the parent adapter; a plain attach does not', () => {
  assert.ok(isSubprocessAttach({ request: 'attach', subProcessId: 42, connect: { host: '127.0.0.1', port: 5000 } }));
  assert.ok(!isSubprocessAttach({ request: 'attach', connect: { host: '127.0.0.1', port: 5678 } }));
  assert.ok(!isSubprocessAttach({ request: 'launch', subProcessId: 42 }));
});

test('the rank comes from the process environment', () => {
  assert.equal(rankName('PATH=/bin\0RANK=1\0LOCAL_RANK=1\0'), 'rank 1');
  assert.equal(rankName('PATH=/bin\0LOCAL_RANK=1\0'), undefined);
  assert.equal(rankName('GROUP_RANK=0\0'), undefined);
  assert.equal(rankName(undefined), undefined);
});

import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  BREAKPOINT_MARKER,
  copySample,
  findSampleFolder,
  isSampleFolder,
  markedLine,
  ruleId,
  SAMPLE_FILES,
} from '../../../../extension/src/walkthrough/sampleWorkspace';

// `make test-ts` runs from the repository root.
const SAMPLE = resolve('sample_workspace');

test('the repository sample has every file the walkthrough opens', () => {
  assert.ok(isSampleFolder(SAMPLE), `missing one of ${Object.values(SAMPLE_FILES).join(', ')}`);
  assert.equal(findSampleFolder(['/nonexistent', resolve('docs'), SAMPLE]), SAMPLE);
  assert.equal(findSampleFolder([resolve('docs')]), undefined);
});

test('the breakpoint marker is on the line the hover step expects', () => {
  const text = readFileSync(join(SAMPLE, SAMPLE_FILES.hoverTensor), 'utf8');
  const line = markedLine(text);
  assert.ok(line !== undefined, `no "${BREAKPOINT_MARKER}" in ${SAMPLE_FILES.hoverTensor}`);
  assert.match(text.split('\n')[line], /print\(f"loss = /);
  assert.equal(markedLine('a\nb # Set a breakpoint here\n'), 1);
  assert.equal(markedLine('nothing'), undefined);
});

test('the overfit step names a class of its file', () => {
  assert.match(readFileSync(join(SAMPLE, SAMPLE_FILES.overfitTest), 'utf8'), /^class TinyMLP\(nn\.Module\):/m);
});

test('copying the sample: a full copy once, never overwriting the user\'s edits', () => {
  const to = join(mkdtempSync(join(tmpdir(), 'td-sample-')), 'sample_workspace');
  try {
    copySample(SAMPLE, to);
    assert.ok(isSampleFolder(to));
    assert.ok(existsSync(join(to, '.vscode', 'launch.json')));
    writeFileSync(join(to, 'train.py'), '# mine\n');
    copySample(SAMPLE, to);
    assert.equal(readFileSync(join(to, 'train.py'), 'utf8'), '# mine\n');
  } finally {
    rmSync(resolve(to, '..'), { recursive: true, force: true });
  }
});

test('rule ids come from every shape of diagnostic code', () => {
  assert.equal(ruleId('TD003'), 'TD003');
  assert.equal(ruleId({ value: 'TD001' }), 'TD001');
  assert.equal(ruleId('E501'), undefined);
  assert.equal(ruleId(3), undefined);
  assert.equal(ruleId(undefined), undefined);
});

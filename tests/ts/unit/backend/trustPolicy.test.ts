import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  RESTRICTED_SETTINGS,
  trustEnv,
  UNTRUSTED_ENV,
  untrustedMessage,
} from '../../../../extension/src/backend/trustPolicy';

// Bundled tests run from out/tests/<folder>/: the repository root is three levels up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const backendProtocol = readFileSync(path.join(ROOT, 'pybackend', 'torchdoctor', 'server', 'protocol.py'), 'utf8');

test('Restricted Mode is declared as limited support, with the interpreter setting restricted', () => {
  const untrusted = manifest.capabilities.untrustedWorkspaces;
  assert.equal(untrusted.supported, 'limited');
  assert.deepEqual(untrusted.restrictedConfigurations, RESTRICTED_SETTINGS);
  assert.match(untrusted.description, /lint/);
  for (const key of RESTRICTED_SETTINGS) {
    assert.ok(manifest.contributes.configuration.properties[key], `${key} is a contributed setting`);
  }
});

test('the backend is told when the workspace is untrusted, and nothing when it is trusted', () => {
  assert.deepEqual(trustEnv(false), { [UNTRUSTED_ENV]: '1' });
  assert.deepEqual(trustEnv(true), {});
  assert.ok(backendProtocol.includes(`UNTRUSTED_ENV = "${UNTRUSTED_ENV}"`), 'protocol.py names the same variable');
});

test('the refusal says what runs code and what still works', () => {
  const text = untrustedMessage('model check');
  assert.match(text, /model check runs this workspace's code/);
  assert.match(text, /Trust the workspace/);
  assert.match(text, /lint/);
});

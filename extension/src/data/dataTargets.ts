/**
 * Which data the palette / context-menu "Check Data" runs on, from the backend's findData answer.
 * Pure logic, no `vscode` import (tests/ts/unit/data/dataTargets.test.ts).
 */
import type { FindDataResult } from './dataProtocol';

/**
 * What the palette command checks: the target containing the cursor, else torchdoctor_data(),
 * else the only target; undefined when the user must choose (several) or there is none.
 */
export function targetAtCursor(found: Pick<FindDataResult, 'targets' | 'containing' | 'hasHook'>): string | undefined {
  if (found.containing) {
    return found.containing;
  }
  if (found.hasHook && found.targets.some((t) => t.kind === 'hook')) {
    return 'torchdoctor_data';
  }
  return found.targets.length === 1 ? found.targets[0].name : undefined;
}


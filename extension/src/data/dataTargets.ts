/**
 * Which data the palette / context-menu "Check Data" runs on, from the backend's findData answer,
 * and, while paused, the expression that checks a variable of the program (pausedData.ts).
 * Pure logic, no `vscode` import (tests/ts/unit/data/dataTargets.test.ts).
 */
import { isSimpleReference } from '../debug/debugSnapshot';
import type { DataCheckOptions, FindDataResult } from './dataProtocol';

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


// --- While paused: the Variables view's Check Data / Show as Images ---------------------------

export const PAUSED_MODULE = 'torchdoctor.data_checks.paused';
export type PausedMode = 'data' | 'images';

/**
 * The session and the variable of a Variables-view context-menu argument
 * ({sessionId, container, variable: {name, evaluateName, ...}}); empty fields when absent.
 */
export function variableArg(arg: unknown): { sessionId?: string; evaluateName?: string } {
  if (!arg || typeof arg !== 'object') {
    return {};
  }
  const o = arg as { sessionId?: unknown; variable?: { evaluateName?: unknown } };
  return {
    sessionId: typeof o.sessionId === 'string' ? o.sessionId : undefined,
    evaluateName: typeof o.variable?.evaluateName === 'string' ? o.variable.evaluateName : undefined,
  };
}

/**
 * The expression evaluated in the paused frame: data_checks/paused.py's dump(value, file, mode,
 * name, options). `ref` must be a plain variable reference (a variable's evaluateName); `file` is
 * JSON-quoted, a valid Python string literal, and so is the name; `options` holds finite numbers
 * only, so its JSON is a Python dict literal (a non-finite one is left out: JSON would write null).
 */
export function pausedDumpExpression(ref: string, file: string, mode: PausedMode, options?: DataCheckOptions): string {
  if (!isSimpleReference(ref)) {
    throw new Error(`not a plain variable reference: ${ref}`);
  }
  const numbers = Object.entries(options ?? {}).filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  const opts = numbers.length ? `, ${JSON.stringify(Object.fromEntries(numbers))}` : '';
  return `__import__('${PAUSED_MODULE}', fromlist=['_']).dump(${ref}, ${JSON.stringify(file)}, '${mode}', ${JSON.stringify(ref)}${opts})`;
}

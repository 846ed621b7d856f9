/**
 * The Python condition of each anomaly breakpoint kind. Each calls a helper of
 * `torchdoctor.runtime.conditions` (on the debuggee's PYTHONPATH in torchdoctor sessions),
 * which never raises: a broken condition must not stop the program for the wrong reason.
 * Pure logic, no `vscode` import, unit-tested.
 */

export type AnomalyConditionKind = 'nonfinite' | 'exceeds' | 'lossSpike' | 'gradNorm';

/** The import is spelled inline so the condition works without any line in the user's code. */
export const CONDITIONS_MODULE = "__import__('torchdoctor.runtime.conditions', fromlist=['_'])";

export function anomalyCondition(kind: AnomalyConditionKind, args: Record<string, string>): string {
  switch (kind) {
    case 'nonfinite':
      return `${CONDITIONS_MODULE}.any_nonfinite()`;
    case 'exceeds':
      return `${CONDITIONS_MODULE}.exceeds(${pythonExpression(args.expression)}, ${pythonNumber(args.threshold)})`;
    case 'lossSpike':
      return `${CONDITIONS_MODULE}.loss_spiked(${pythonExpression(args.loss)}, ${pythonNumber(args.factor)})`;
    case 'gradNorm':
      return `${CONDITIONS_MODULE}.grad_norm_exceeds(${pythonExpression(args.model)}, ${pythonNumber(args.maxNorm)})`;
  }
}

/** A number as Python reads it; refuses anything else (the condition is code). */
export function pythonNumber(text: string | undefined): string {
  const n = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(n)) {
    throw new Error(`not a number: ${text}`);
  }
  return String(n);
}

/** A user expression, kept on one line (a newline would end the condition). */
export function pythonExpression(text: string | undefined): string {
  const e = (text ?? '').trim();
  if (!e || /[\r\n]/.test(e)) {
    throw new Error('the expression must be one line of Python');
  }
  return e;
}
